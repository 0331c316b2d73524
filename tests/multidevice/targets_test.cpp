// End to end on a heterogeneous mesh (issue 12): every rank runs the same
// Megatron MLP whose weights carry matmul_rhs, each rank packing its shards
// in its own target's panels (HOSTIR_TARGET=cpu:avx512,cpu:avx2 gives even
// ranks avx512, odd ranks avx2), and the result equals plain ATen.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {
namespace {

// Every launch of `program` that reads or writes an encoded tensor has one
// executable per set of devices whose targets lay it out alike (here: per
// distinct panel width among the devices), and each copy's devices share it.
void expectOneExecutablePerLayout(const HostIrContainer& program, const DeviceTargets& targets,
                                  size_t expected_launches) {
  std::set<int64_t> widths;
  for (const auto& [device, target] : targets) {
    widths.insert(target.matmul_rhs_n_block);
  }
  size_t specialized = 0;
  for (const Expr* expr : program.topLevel()) {
    const auto* post = dynamic_cast<const PostOnStream*>(expr);
    if (post == nullptr || post->variants().empty()) {
      continue;
    }
    ++specialized;
    EXPECT_EQ(post->variants().size(), widths.size()) << post->toString();
    for (const PostOnStream::Variant& variant : post->variants()) {
      for (int64_t device : variant.devices) {
        EXPECT_EQ(targets.at(device).matmul_rhs_n_block,
                  targets.at(variant.devices.front()).matmul_rhs_n_block)
            << post->toString();
        EXPECT_EQ(post->hostUnitFor(device), variant.unit);
      }
    }
  }
  if (widths.size() > 1) {
    EXPECT_EQ(specialized, expected_launches) << program.toString();
  }
}

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
  const int64_t n_block = localTarget().matmul_rhs_n_block;
  if (n_block > 0) {
    EXPECT_NE(program.find(std::to_string(me) + ": " + Layout::dnnlBlocked(n_block, 0).toString()),
              std::string::npos)
        << program;
  }
  // Both linears read per-device panels: each is one launch with one
  // executable per target.
  expectOneExecutablePerLayout(exec.hostProgram(), comm.deviceTargets(), 2);
  std::vector<at::Tensor> local = {x, w1.chunk(d, 0)[me].contiguous(),
                                   w2.chunk(d, 1)[me].contiguous()};
  int64_t hits = packCacheHits();
  for (int run = 0; run < 2; ++run) {
    at::Tensor y = exec.run(local).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
        << "rank " << me << " run " << run << ": max |diff| "
        << (y - expected).abs().max().item<double>();
  }
  if (n_block > 0) {
    EXPECT_EQ(packCacheHits(), hits + 2) << "the second run reuses both packed weights";
  }
}

TEST(HeterogeneousMeshTest, WeightOnOneDeviceIsBroadcastInItsPanels) {
  // w lives on device 0 only: it is packed there in device 0's panels, the
  // collective that brings it to every device moves those bytes, and every
  // device's linear reads them (one layout everywhere: no clone).
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(d);
    TensorView* x = makeContigTensor(2);
    TensorView* w = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    w->setDeviceMesh(DeviceMesh({0}));
    w->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    fusion.addInput(x);
    fusion.addInput(w);
    TensorView* y = linear(x, w);
    y->setDeviceMesh(mesh);
    fusion.addOutput(y);
  }
  at::manual_seed(1);
  at::Tensor x = at::randn({10, 24});
  at::Tensor w = at::randn({37, 24});
  at::Tensor expected = at::linear(x, w);
  MultiDeviceExecutor exec(fusion, comm);
  const std::string program = exec.hostProgram().toString();
  const Target& root = comm.deviceTargets().at(0);
  if (root.matmul_rhs_n_block > 0) {
    const std::string panels =
        "#matmul_rhs:" + Layout::dnnlBlocked(root.matmul_rhs_n_block, 0).toString();
    EXPECT_NE(program.find("Communication"), std::string::npos) << program;
    EXPECT_NE(program.find(panels + ")"), std::string::npos)
        << "the collective's output holds device 0's panels\n"
        << program;
    EXPECT_NE(program.find("= linear("), std::string::npos) << program;
  }
  for (int run = 0; run < 2; ++run) {
    at::Tensor y = exec.run({x, comm.deviceId() == 0 ? w : at::Tensor()}).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
        << "rank " << comm.deviceId() << " run " << run << ": max |diff| "
        << (y - expected).abs().max().item<double>();
  }
}

TEST(HeterogeneousMeshTest, EncodedIntermediateIsWrittenAndReadInEachDevicesPanels) {
  // r = relu(b) carries matmul_rhs and is the weight of y = linear(x, r):
  // each device's relu executable writes r in its own panels, and each
  // device's linear executable reads them.
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(d);
    TensorView* x = makeContigTensor(2);
    TensorView* b = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    b->setDeviceMesh(mesh);
    fusion.addInput(x);
    fusion.addInput(b);
    TensorView* r = relu(b);
    r->setDeviceMesh(mesh);
    r->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    TensorView* y = linear(x, r);
    y->setDeviceMesh(mesh);
    fusion.addOutput(y);
  }
  at::manual_seed(2);
  at::Tensor x = at::randn({9, 24});
  at::Tensor b = at::randn({21, 24});
  at::Tensor expected = at::linear(x, at::relu(b));
  MultiDeviceExecutor exec(fusion, comm);
  expectOneExecutablePerLayout(exec.hostProgram(), comm.deviceTargets(), 2);
  at::Tensor y = exec.run({x, b}).at(0);
  EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
      << "rank " << comm.deviceId() << ": max |diff| " << (y - expected).abs().max().item<double>()
      << "\n"
      << exec.hostProgram().toString();
}

TEST(HeterogeneousMeshTest, EncodedResultOfOneDeviceIsBroadcastInItsPanels) {
  // r = relu(b) is computed on device 0 only, in device 0's panels, and
  // sent to every device: the bytes arrive in device 0's layout and every
  // device's linear reads them so (a producer on one target, consumers on
  // others).
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(d);
    TensorView* x = makeContigTensor(2);
    TensorView* b = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    b->setDeviceMesh(DeviceMesh({0}));
    fusion.addInput(x);
    fusion.addInput(b);
    TensorView* r = relu(b);
    r->setDeviceMesh(DeviceMesh({0}));
    r->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    TensorView* y = linear(x, r);
    y->setDeviceMesh(mesh);
    fusion.addOutput(y);
  }
  at::manual_seed(3);
  at::Tensor x = at::randn({7, 24});
  at::Tensor b = at::randn({19, 24});
  at::Tensor expected = at::linear(x, at::relu(b));
  MultiDeviceExecutor exec(fusion, comm);
  const std::string program = exec.hostProgram().toString();
  const Target& root = comm.deviceTargets().at(0);
  if (root.matmul_rhs_n_block > 0) {
    EXPECT_NE(program.find("#matmul_rhs:" +
                           Layout::dnnlBlocked(root.matmul_rhs_n_block, 0).toString() + ")"),
              std::string::npos)
        << "the collective's output holds device 0's panels\n"
        << program;
  }
  at::Tensor y = exec.run({x, comm.deviceId() == 0 ? b : at::Tensor()}).at(0);
  EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
      << "rank " << comm.deviceId() << ": max |diff| " << (y - expected).abs().max().item<double>()
      << "\n"
      << program;
}

// A host program over every device: w (each device's own, carrying
// matmul_rhs; or, with `encoded_result`, r = relu(w) carrying it and also
// read by a local linear) goes through `type` (Allreduce or Allgather over
// the whole team), and y = linear(x, received). Devices of different
// targets hold w in different panels, which no collective can combine or
// concatenate: specialize_encodings unpacks before and repacks after.
std::unique_ptr<HostIrContainer> collectiveOfPanels(CommunicationType type, int64_t d, int64_t n,
                                                    int64_t k, bool encoded_result) {
  auto container = std::make_unique<HostIrContainer>();
  FusionGuard fg(container.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(d);
  const Encoding rhs{EncodingKind::MatmulRhs, std::nullopt};
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  x->setDeviceMesh(mesh);
  w->setDeviceMesh(mesh);
  container->addInput(x);
  container->addInput(w);
  TensorView* sent = w;
  if (encoded_result) {
    sent = relu(w);
    sent->setDeviceMesh(mesh);
    container->pushBackTopLevelExpr(sent->definition());
    TensorView* local = linear(x, sent);
    local->setDeviceMesh(mesh);
    container->pushBackTopLevelExpr(local->definition());
    container->addOutput(local);
  }
  sent->setEncoding(rhs);
  TensorView* received =
      makeContigConcreteTensor({type == CommunicationType::Allgather ? d * n : n, k});
  received->setDeviceMesh(mesh);
  CommunicationParams params;
  params.type = type;
  params.team = mesh.vector();
  if (type == CommunicationType::Allreduce) {
    params.reduce_op = ReduceOp::Sum;
  }
  container->pushBackTopLevelExpr(IrBuilder::create<Allocate>(received));
  auto* comm = IrBuilder::create<Communication>(sent, received, params);
  container->pushBackTopLevelExpr(comm);
  container->pushBackTopLevelExpr(IrBuilder::create<Wait>(comm));
  TensorView* y = linear(x, received);
  y->setDeviceMesh(mesh);
  container->pushBackTopLevelExpr(y->definition());
  container->addOutput(y);
  return container;
}

void runCollectiveOfPanels(CommunicationType type, bool encoded_result) {
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  const int64_t n = 19;
  const int64_t k = 24;
  auto container = collectiveOfPanels(type, d, n, k, encoded_result);
  specializeEncodings(*container, comm.deviceTargets());
  const std::string program = container->toString();
  std::set<int64_t> widths;
  for (const auto& [device, target] : comm.deviceTargets()) {
    widths.insert(target.matmul_rhs_n_block);
  }
  if (type != CommunicationType::Allreduce || widths.size() > 1) {
    // The collective moves plain data, and the receivers pack it again.
    EXPECT_NE(program.find("= SetEncoding( T"), std::string::npos) << program;
    EXPECT_EQ(program.find("#matmul_rhs, output="), std::string::npos) << program;
    if (encoded_result) {
      EXPECT_NE(program.find("= UnsetEncoding( T"), std::string::npos) << program;
    }
  }
  at::manual_seed(5);
  at::Tensor x = at::randn({7, k});
  std::vector<at::Tensor> ws;
  for (int64_t device = 0; device < d; ++device) {
    ws.push_back(at::randn({n, k}));
  }
  std::vector<at::Tensor> sent;
  for (const at::Tensor& w : ws) {
    sent.push_back(encoded_result ? at::relu(w) : w);
  }
  at::Tensor whole = type == CommunicationType::Allgather ? at::cat(sent) : at::stack(sent).sum(0);
  at::Tensor expected = at::linear(x, whole);
  const int64_t me = comm.deviceId();
  HostIrEvaluator evaluator(std::move(container), {.communicator = &comm, .my_device = me});
  for (int run = 0; run < 2; ++run) {
    std::vector<at::Tensor> outputs = evaluator.run({x, ws[static_cast<size_t>(me)]});
    at::Tensor y = outputs.back();
    EXPECT_TRUE(at::allclose(y, expected, 1e-3, 1e-4))
        << "rank " << me << " run " << run << ": max |diff| "
        << (y - expected).abs().max().item<double>() << "\n"
        << program;
    if (encoded_result) {
      at::Tensor local = at::linear(x, sent[static_cast<size_t>(me)]);
      EXPECT_TRUE(at::allclose(outputs.front(), local, 1e-3, 1e-4)) << "rank " << me;
    }
  }
}

TEST(HeterogeneousMeshTest, AllreduceOfPanelsOfDifferentTargetsMatchesAten) {
  runCollectiveOfPanels(CommunicationType::Allreduce, /*encoded_result=*/false);
}

TEST(HeterogeneousMeshTest, AllreduceOfAnEncodedResultMatchesAten) {
  runCollectiveOfPanels(CommunicationType::Allreduce, /*encoded_result=*/true);
}

TEST(HeterogeneousMeshTest, AllgatherOfPanelsMatchesAten) {
  runCollectiveOfPanels(CommunicationType::Allgather, /*encoded_result=*/false);
}

TEST(HeterogeneousMeshTest, AllgatherOfAnEncodedResultMatchesAten) {
  runCollectiveOfPanels(CommunicationType::Allgather, /*encoded_result=*/true);
}

}  // namespace
}  // namespace hostir
