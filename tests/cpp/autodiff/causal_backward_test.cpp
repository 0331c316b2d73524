// The backward of a causal attention skips the masked half of its GEMMs
// (skipCausalZeroBlocks, run by the causal_key_ranges pass): the GEMMs that
// read dS (dQ = dS·K, dK = dSᵀ·Q) and the probabilities, saved or
// recomputed (dV = Pᵀ·dO), become loops over tiles of 256 rows, each
// against the keys or queries it sees. The grads stay torch autograd's, in
// float64 and float32, in Stream chunks of the queries (what the pass reads
// the mask's rows from), over more tokens than one tile so that the tiles'
// bounds are crossed.

#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/grads_vs_torch.h"
#include "common/scoped_env.h"
#include "hostir/compiler/compile.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/multidevice/sharding.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

constexpr int64_t kHeads = 2;
constexpr int64_t kTokens = 600;  // 3 tiles of at most 256 rows
constexpr int64_t kHeadDim = 8;

// softmax(where(causal, q kᵀ / 2, -inf)) v over [heads, tokens, head_dim],
// the queries' tokens in `chunks` Stream chunks (1: unchunked).
void buildAttention(Fusion& fusion, DataType dtype, int64_t chunks) {
  TensorView* q_in = makeContigTensor(3, dtype);
  TensorView* k = makeContigTensor(3, dtype);
  TensorView* v = makeContigTensor(3, dtype);
  fusion.addInput(q_in);
  fusion.addInput(k);
  fusion.addInput(v);
  TensorView* q = set(q_in);
  if (chunks > 1) {
    q->split(1, chunks, /*inner_split=*/false);
    q->axis(1)->parallelize(ParallelType::Stream);
  }
  TensorView* scores = mul(matmul(q, permute(k, {0, 2, 1})), 0.5);
  Val* tokens = q_in->getLogicalDomain()[1]->extent();
  TensorView* probs = softmax(where(causalMask(tokens, tokens), scores, -INFINITY), -1);
  fusion.addOutput(matmul(probs, v));
}

std::vector<at::Tensor> attentionReference(const std::vector<at::Tensor>& in) {
  const int64_t t = in[0].size(1);
  at::Tensor visible = at::ones({t, t}, at::kBool).tril();
  at::Tensor scores = at::matmul(in[0], in[1].transpose(1, 2)) * 0.5;
  at::Tensor probs = at::where(visible, scores, -INFINITY).softmax(-1);
  return {at::matmul(probs, in[2])};
}

// The loops over tiles of 256 rows in the one-device backward program of
// the attention.
int64_t backwardTileLoops(int64_t chunks, SavePolicy save) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  buildAttention(fusion, DataType::Float, chunks);
  Differentiated d = differentiate(fusion, {.save = save});
  Fusion copy;
  copyFusion(*d.backward, copy);
  std::unique_ptr<HostIrContainer> program = presegmentAndLower(copy);
  return queryTileLoops(*program);
}

class CausalBackwardTest : public GradsVsTorchTest {
 protected:
  void expectGrads(int64_t chunks) {
    SCOPED_TRACE("chunks " + std::to_string(chunks));
    Fusion fusion;
    FusionGuard fg(&fusion);
    buildAttention(fusion, dtype(), chunks);
    at::manual_seed(chunks);
    expectGradsMatchTorch(fusion, attentionReference,
                          {at::randn({kHeads, kTokens, kHeadDim}, options()),
                           at::randn({kHeads, kTokens, kHeadDim}, options()),
                           at::randn({kHeads, kTokens, kHeadDim}, options())});
  }
};

TEST_P(CausalBackwardTest, TiledGemmsGiveTorchsGradsInQueryChunks) {
  expectGrads(3);
  expectGrads(2);  // chunks of 300 rows: two tiles each
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CausalBackwardTest, ::testing::Values(at::kFloat, at::kDouble),
                         dtypeName);

// dS is causally zero whatever is saved: both GEMMs reading it are tiled
// with either save policy, dQ = dS·K in each chunk's loop (which writes the
// chunk's dS just before) and dKᵀ = Qᵀ·dS after the loop; P gives a third
// tiled GEMM (dV = Pᵀ·dO), recomputed or saved (a saved P is an input
// marked zero above the diagonal by differentiation). Exact counts, so a
// GEMM that stops being tiled fails. Without the pass no GEMM of the
// backward is.
TEST(CausalBackward, TheGemmsReadingDsAndPAreTiled) {
  EXPECT_EQ(backwardTileLoops(3, SavePolicy::kSaveGemmOutputs), 3) << "save GEMM outputs";
  EXPECT_EQ(backwardTileLoops(3, SavePolicy::kRecomputeAll), 3) << "recompute all";
  ScopedEnv disabled("HOSTIR_DISABLE_PASS", "causal_key_ranges");
  EXPECT_EQ(backwardTileLoops(3, SavePolicy::kSaveGemmOutputs), 0);
}

// A program input marked zero above the diagonal is a causally zero operand
// only when this rank holds its rows from query 0: with its rows split
// across the 2 ranks, rank 1's local rows start at the middle, its zeros are
// elsewhere, and dV = Pᵀ·dO (a partial sum over the local rows, reduced
// after) stays whole on both ranks; replicated, it is tiled on both.
TEST(CausalBackward, AMarkedInputSplitOnItsRowsIsNotTiled) {
  auto tileLoops = [](bool rows_sharded, int64_t device) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    const DeviceMesh mesh({0, 1});
    TensorView* probs = makeContigTensor(2);
    TensorView* dout = makeContigTensor(2);
    probs->setZeroAboveDiagonal(true);
    fusion.addInput(probs);
    fusion.addInput(dout);
    shard(probs, mesh, rows_sharded ? 0 : -1);
    shard(dout, mesh, rows_sharded ? 0 : -1);
    TensorView* dv = matmul(permute(probs, {1, 0}), dout);
    shard(dv, mesh);
    fusion.addOutput(dv);
    std::unique_ptr<HostIrContainer> program =
        compile(fusion, CompileOptions{.multidevice = MultiDeviceLowering{device, {}}}).program;
    return queryTileLoops(*program);
  };
  for (int64_t device : {0, 1}) {
    SCOPED_TRACE("device " + std::to_string(device));
    EXPECT_EQ(tileLoops(/*rows_sharded=*/false, device), 1);
    EXPECT_EQ(tileLoops(/*rows_sharded=*/true, device), 0);
  }
}

}  // namespace
}  // namespace hostir::test
