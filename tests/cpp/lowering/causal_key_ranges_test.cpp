// The causal_key_ranges pass: in a stream loop over query rows, a softmax
// under a causal mask reads only the keys its rows can see. Each case runs
// against ATen's masked attention with 1, 2 and 4 streams, and the printed
// program shows whether the keys were narrowed.

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <unordered_set>

#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

constexpr int64_t kHeads = 3;
constexpr int64_t kTokens = 10;
constexpr int64_t kHeadDim = 4;
constexpr double kScale = 0.5;

// The matmuls of `program` whose right operand is a slice: narrowed, Q·Kᵀ
// reads a prefix of Kᵀ's columns and P·V a prefix of V's rows; otherwise
// both read the whole keys and values.
int64_t matmulsOfKeySlices(const HostIrContainer& program) {
  std::unordered_set<const Val*> slices;
  for (const SliceOp* slice : exprsOfKind<SliceOp>(program)) {
    slices.insert(slice->out());
  }
  int64_t count = 0;
  for (const MatmulOp* matmul : exprsOfKind<MatmulOp>(program)) {
    count += slices.count(matmul->b()) != 0 ? 1 : 0;
  }
  return count;
}

class CausalKeyRangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
    q_ = at::randn({kHeads, kTokens, kHeadDim});
    k_ = at::randn({kHeads, kTokens, kHeadDim});
    v_ = at::randn({kHeads, kTokens, kHeadDim});
  }

  struct Options {
    int64_t chunks = 3;
    int64_t query_offset = 0;
    double fill = -INFINITY;
    bool probabilities_are_an_output = false;
    DataType dtype = DataType::Float;
  };

  // softmax(where(causal, q kᵀ · scale, fill)) v, the queries' tokens
  // split into `chunks` Stream chunks (the split propagates to the rest).
  void build(const Options& options) {
    TensorView* q_in = makeContigTensor(3, options.dtype);
    TensorView* k = makeContigTensor(3, options.dtype);
    TensorView* v = makeContigTensor(3, options.dtype);
    fusion_.addInput(q_in);
    fusion_.addInput(k);
    fusion_.addInput(v);
    TensorView* q = set(q_in);
    q->split(1, options.chunks, /*inner_split=*/false);
    q->axis(1)->parallelize(ParallelType::Stream);
    TensorView* scores = mul(matmul(q, permute(k, {0, 2, 1})), kScale);
    Val* queries = q_in->getLogicalDomain()[1]->extent();
    Val* keys = k->getLogicalDomain()[1]->extent();
    Val* offset = IrBuilder::create<Scalar>(options.query_offset);
    TensorView* probs = softmax(where(causalMask(queries, keys, offset), scores, options.fill), -1);
    fusion_.addOutput(matmul(probs, v));
    if (options.probabilities_are_an_output) {
      fusion_.addOutput(probs);
    }
  }

  std::unique_ptr<HostIrContainer> lowered() {
    Fusion copy;
    copyFusion(fusion_, copy);
    runPresegmentationPasses(&copy, /*multidevice=*/false);
    return lowerToHostIr(copy);
  }

  // matmulsOfKeySlices of the program the executor runs.
  int64_t loweredKeySliceMatmuls() {
    return matmulsOfKeySlices(*lowered());
  }

  at::Tensor probabilities(const Options& options) const {
    at::Tensor rows = at::arange(q_.size(1)).unsqueeze(1) + options.query_offset;
    at::Tensor visible = rows >= at::arange(k_.size(1)).unsqueeze(0);
    at::Tensor scores = at::matmul(q_, k_.transpose(1, 2)) * kScale;
    return at::softmax(at::where(visible, scores, at::full({}, options.fill)), -1);
  }

  void expectMatches(const Options& options) {
    at::Tensor probs = probabilities(options);
    std::vector<at::Tensor> expected{at::matmul(probs, v_)};
    if (options.probabilities_are_an_output) {
      expected.push_back(probs);
    }
    expectMatchesAten(fusion_, {q_, k_, v_}, expected, 1e-5, 1e-5);
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
  at::Tensor q_, k_, v_;
};

// Chunk j of the queries (rows [start, stop)) reads keys [0, stop): Kᵀ's
// columns, V's rows and the mask rows' columns are prefixes whose extent is
// the loop's stop.
TEST_F(CausalKeyRangesTest, EachQueryChunkReadsTheKeysItSees) {
  build({});
  EXPECT_EQ(loweredKeySliceMatmuls(), 2);
  expectMatches({});
}

// Uneven chunks: 10 rows in 4 are 3, 3, 3 and 1.
TEST_F(CausalKeyRangesTest, UnevenChunks) {
  build({.chunks = 4});
  EXPECT_EQ(loweredKeySliceMatmuls(), 2);
  expectMatches({.chunks = 4});
}

// One query row per chunk: row r reads keys [0, r + 1).
TEST_F(CausalKeyRangesTest, OneRowPerChunk) {
  build({.chunks = kTokens});
  EXPECT_EQ(loweredKeySliceMatmuls(), 2);
  expectMatches({.chunks = kTokens});
}

// More queries than keys: the queries past the last key see every key, so
// the last chunks' prefixes stop at the keys there are (10 queries, 6 keys,
// 4 chunks: prefixes 3, 6, 6, 6), never past them.
TEST_F(CausalKeyRangesTest, QueriesPastTheLastKeySeeEveryKey) {
  k_ = at::randn({kHeads, 6, kHeadDim});
  v_ = at::randn({kHeads, 6, kHeadDim});
  build({.chunks = 4});
  EXPECT_EQ(loweredKeySliceMatmuls(), 2);
  expectMatches({.chunks = 4});
}

// A chunk longer than a tile is computed a tile of rows at a time, each
// against the keys its own rows see: 2 chunks of 278 rows are tiles of 256
// and 22 rows (keys [0, 256) and [0, 278) in the first chunk).
TEST_F(CausalKeyRangesTest, LongChunksAreComputedInTilesOfRows) {
  const int64_t tokens = 2 * (kCausalQueryTileRows + 22);
  q_ = at::randn({kHeads, tokens, kHeadDim});
  k_ = at::randn({kHeads, tokens, kHeadDim});
  v_ = at::randn({kHeads, tokens, kHeadDim});
  build({.chunks = 2});
  std::unique_ptr<HostIrContainer> program = lowered();
  EXPECT_EQ(queryTileLoops(*program), 1);
  EXPECT_EQ(matmulsOfKeySlices(*program), 2);
  EXPECT_NE(program->toString().find("FOR QueryTile from 0 to "), std::string::npos);
  expectMatches({.chunks = 2});
}

// The same in double: the tiles' softmax kernel is compiled for it.
TEST_F(CausalKeyRangesTest, LongChunksAreComputedInTilesOfRowsInDouble) {
  const int64_t tokens = 2 * (kCausalQueryTileRows + 22);
  q_ = at::randn({kHeads, tokens, kHeadDim}, at::kDouble);
  k_ = at::randn({kHeads, tokens, kHeadDim}, at::kDouble);
  v_ = at::randn({kHeads, tokens, kHeadDim}, at::kDouble);
  const Options options{.chunks = 2, .dtype = DataType::Double};
  build(options);
  EXPECT_EQ(queryTileLoops(*lowered()), 1);
  expectMatches(options);
}

// Without the pass the loop reads every key; the results are the same.
TEST_F(CausalKeyRangesTest, DisabledPassReadsEveryKey) {
  ScopedEnv disable("HOSTIR_DISABLE_PASS", "causal_key_ranges");
  build({});
  EXPECT_EQ(loweredKeySliceMatmuls(), 0);
  EXPECT_EQ(queryTileLoops(*lowered()), 0);
  expectMatches({});
}

// Masks and fills the proof does not cover stay whole: queries offset from
// row 0 see keys past their chunk's stop, and a finite fill leaves masked
// keys a nonzero probability.
TEST_F(CausalKeyRangesTest, OffsetMaskIsNotNarrowed) {
  build({.query_offset = 2});
  EXPECT_EQ(loweredKeySliceMatmuls(), 0);
  expectMatches({.query_offset = 2});
}

TEST_F(CausalKeyRangesTest, FiniteFillIsNotNarrowed) {
  build({.fill = -3.0});
  EXPECT_EQ(loweredKeySliceMatmuls(), 0);
  expectMatches({.fill = -3.0});
}

// The probabilities are a program output (a training forward keeps them for
// the backward): every key's must be written. The chain is narrowed all the
// same (Q·Kᵀ and P·V read prefixes of the keys): each tile writes its rows'
// visible keys into the output and zeros past them, one `full` in the tile
// loop, so the output holds what the whole-width softmax gives (exact zeros
// past the diagonal). The count of `full`s is what shows the zeros are
// written: a fresh output buffer is zero already, a reused one is not.
TEST_F(CausalKeyRangesTest, KeptProbabilitiesAreNarrowedAndZeroedPastTheVisibleKeys) {
  build({.probabilities_are_an_output = true});
  std::unique_ptr<HostIrContainer> program = lowered();
  EXPECT_EQ(matmulsOfKeySlices(*program), 2);
  EXPECT_EQ(queryTileLoops(*program), 1);
  EXPECT_EQ(exprsOfKind<FullOp>(*program).size(), 1u);
  expectMatches({.probabilities_are_an_output = true});
}

// The same over chunks longer than a tile (tiles of 256 and 22 rows), in
// float and double: each tile's zeros start at its own last visible key.
class KeptProbabilitiesTest : public CausalKeyRangesTest,
                              public ::testing::WithParamInterface<at::ScalarType> {};

TEST_P(KeptProbabilitiesTest, InTilesOfRows) {
  const int64_t tokens = 2 * (kCausalQueryTileRows + 22);
  q_ = at::randn({kHeads, tokens, kHeadDim}, GetParam());
  k_ = at::randn({kHeads, tokens, kHeadDim}, GetParam());
  v_ = at::randn({kHeads, tokens, kHeadDim}, GetParam());
  const Options options{.chunks = 2,
                        .probabilities_are_an_output = true,
                        .dtype = GetParam() == at::kFloat ? DataType::Float : DataType::Double};
  build(options);
  EXPECT_EQ(queryTileLoops(*lowered()), 1);
  expectMatches(options);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KeptProbabilitiesTest, ::testing::Values(at::kFloat, at::kDouble),
                         [](const ::testing::TestParamInfo<at::ScalarType>& info) {
                           return std::string(at::toString(info.param));
                         });

}  // namespace
}  // namespace hostir::test
