// End to end on a heterogeneous mesh (issue 12): every rank runs the same
// Megatron MLP whose weights carry matmul_rhs, each rank packing its shards
// in its own target's panels (HOSTIR_TARGET=cpu:avx512,cpu:avx2 gives even
// ranks avx512, odd ranks avx2), and the result equals plain ATen.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {
namespace {

TEST(HeterogeneousMeshTest, EveryRankKnowsEveryTarget) {
  Communicator& comm = Communicator::getInstance();
  const char* env = std::getenv("HOSTIR_TARGET");
  ASSERT_EQ(static_cast<int64_t>(comm.deviceTargets().size()), comm.size());
  EXPECT_EQ(comm.deviceTargets().at(comm.deviceId()), localTarget());
  for (int64_t rank = 0; rank < comm.size(); ++rank) {
    if (env != nullptr) {
      EXPECT_EQ(comm.deviceTargets().at(rank), chooseTarget(env, rank, ""))
          << "rank " << rank << " under HOSTIR_TARGET=" << env;
    }
  }
}

TEST(HeterogeneousMeshTest, ShardedMlpWithPackedWeightsMatchesAten) {
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  const int64_t me = comm.deviceId();
  const int64_t tokens = 12, hidden = 24, ffn = 20 * d;
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(d);
    TensorView* x = makeContigTensor(2);
    TensorView* w1 = makeContigTensor(2);
    TensorView* w2 = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    w1->setDeviceMesh(mesh);
    shardLogicalAxis(w1, 0, ParallelType::DIDx, false);  // [F, H] on F
    w2->setDeviceMesh(mesh);
    shardLogicalAxis(w2, 1, ParallelType::DIDx, false);  // [H, F] on F
    w1->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    w2->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    fusion.addInput(x);
    fusion.addInput(w1);
    fusion.addInput(w2);
    TensorView* h = linear(x, w1);
    h->setDeviceMesh(mesh);
    shardLogicalAxis(h, 1, ParallelType::DIDx, false);
    TensorView* y = linear(gelu(h), w2);
    y->setDeviceMesh(mesh);
    fusion.addOutput(y);
  }
  at::manual_seed(0);
  at::Tensor x = at::randn({tokens, hidden});
  at::Tensor w1 = at::randn({ffn, hidden});
  at::Tensor w2 = at::randn({hidden, ffn});
  at::Tensor expected = at::linear(at::gelu(at::linear(x, w1)), w2);

  MultiDeviceExecutor exec(fusion, comm);
  std::string program = exec.hostProgram().toString();
  // The header lists every device's target; each weight is packed by a
  // SetEncoding whose per-device layouts follow those targets.
  EXPECT_NE(program.find("targets: 0=" + comm.deviceTargets().at(0).describe()), std::string::npos)
      << program;
  EXPECT_NE(program.find("= SetEncoding("), std::string::npos) << program;
  const int64_t nr = localTarget().nr;
  if (nr > 0) {
    EXPECT_NE(program.find(std::to_string(me) + ": panels" + std::to_string(nr) + "xK(n=0)"),
              std::string::npos)
        << program;
  }
  std::vector<at::Tensor> local = {x, w1.chunk(d, 0)[me].contiguous(),
                                   w2.chunk(d, 1)[me].contiguous()};
  int64_t hits = packCacheHits();
  for (int run = 0; run < 2; ++run) {
    at::Tensor y = exec.run(local).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
        << "rank " << me << " run " << run << ": max |diff| "
        << (y - expected).abs().max().item<double>();
  }
  if (nr > 0) {
    EXPECT_EQ(packCacheHits(), hits + 2) << "the second run reuses both packed weights";
  }
}

}  // namespace
}  // namespace hostir
