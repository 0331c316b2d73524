// End-to-end tests of MultiDeviceExecutor, run by every rank of a job
// started with `hostir launch -n K` (K = 1, 2, 4). Each test builds its
// meshes from the world size, draws the same full tensors on every rank
// (same seed), runs the sharded fusion on this rank's shards, checks the
// local output shard against plain ATen on the full tensors, and checks
// which collectives the rank's host program holds.
//
// Every rank runs every test in the same order and skips a test only for a
// reason that depends on the world size, so the collectives of all ranks
// match up. Structural checks use EXPECT (never an early return) before a
// run, for the same reason.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <list>
#include <map>
#include <numeric>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/lowering_count.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/fusion_copy_count.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"

namespace hostir {
namespace {

using Counts = std::map<CommunicationType, int>;

// Visits every expr of a scope and of the loop bodies nested in it.
void walk(const Scope& scope, const std::function<void(const Expr*)>& visit) {
  for (const Expr* expr : scope) {
    visit(expr);
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      walk(loop->body(), visit);
    }
  }
}

// The Communication nodes of a host program, by type (loop bodies count
// once: they are the program text, not its trips).
Counts countCommunications(const HostIrContainer& program) {
  Counts counts;
  walk(program.topLevel(), [&](const Expr* expr) {
    if (const auto* communication = dynamic_cast<const Communication*>(expr)) {
      ++counts[communication->type()];
    }
  });
  return counts;
}

template <typename T>
int countOf(const HostIrContainer& program) {
  int count = 0;
  walk(program.topLevel(), [&](const Expr* expr) { count += expr->isA<T>() ? 1 : 0; });
  return count;
}

std::string describe(const Counts& counts) {
  std::stringstream ss;
  ss << "{";
  for (const auto& [type, count] : counts) {
    ss << " " << toString(type) << ": " << count;
  }
  ss << " }";
  return ss.str();
}

class MultiDeviceExecutorTest : public ::testing::Test {
 protected:
  // Puts `tv` on `mesh`, sharding its logical axis `axis` over DIDx (none
  // when -1), either directly or through an outer split by the device count.
  static TensorView* shard(TensorView* tv, const DeviceMesh& mesh, int64_t axis,
                           bool via_split = false) {
    tv->setDeviceMesh(mesh);
    if (axis >= 0) {
      shardLogicalAxis(tv, axis, ParallelType::DIDx, via_split);
    }
    return tv;
  }

  // This rank's shard of `full` for a tensor on `mesh` sharded on `axis`
  // (-1: replicated); undefined when the mesh does not hold this rank.
  at::Tensor localShard(const at::Tensor& full, const DeviceMesh& mesh, int64_t axis) const {
    if (!mesh.has(me_)) {
      return at::Tensor();
    }
    if (axis < 0) {
      return full.clone();
    }
    return full.chunk(mesh.size(), axis)[mesh.idxOf(me_)].contiguous();
  }

  void expectShard(const at::Tensor& out, const at::Tensor& full_expected, const DeviceMesh& mesh,
                   int64_t axis) const {
    if (!mesh.has(me_)) {
      EXPECT_FALSE(out.defined()) << "device " << me_ << " is not on " << mesh.toString()
                                  << " and must get an undefined output";
      return;
    }
    ASSERT_TRUE(out.defined()) << "device " << me_ << " is on " << mesh.toString();
    at::Tensor expected = localShard(full_expected, mesh, axis);
    ASSERT_EQ(out.sizes(), expected.sizes());
    EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5))
        << "device " << me_ << " max |diff| = " << (out - expected).abs().max().item<double>();
  }

  static void expectCommunications(const MultiDeviceExecutor& exec, const Counts& expected) {
    // Compared as text, so that a mismatch prints the type names.
    EXPECT_EQ(describe(countCommunications(exec.hostProgram())), describe(expected))
        << "in the host program\n"
        << exec.hostProgram().toString();
  }

  // {first, ..., first + count - 1}
  static DeviceMesh meshOf(int64_t first, int64_t count) {
    std::vector<int64_t> devices(static_cast<size_t>(count));
    std::iota(devices.begin(), devices.end(), first);
    return DeviceMesh(devices);
  }

  at::Tensor randn(at::IntArrayRef shape) const {
    return at::randn(shape);
  }

  Communicator& comm_ = Communicator::getInstance();
  const int64_t n_ = comm_.size();
  const int64_t me_ = comm_.deviceId();
  const DeviceMesh all_ = DeviceMesh::createForNumDevices(n_);
};

// --- No communication -------------------------------------------------------

TEST_F(MultiDeviceExecutorTest, ShardedPointwiseNeedsNoCommunication) {
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE("sharded axis " + std::to_string(axis));
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(makeContigTensor(2), all_, axis, via_split);
      TensorView* y = shard(makeContigTensor(2), all_, axis, via_split);
      fusion.addInput(x);
      fusion.addInput(y);
      TensorView* z = shard(relu(add(x, y)), all_, axis, via_split);
      fusion.addOutput(z);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(exec, {});
      at::manual_seed(1);
      at::Tensor fx = randn({4 * n_, 8 * n_});
      at::Tensor fy = randn({4 * n_, 8 * n_});
      at::Tensor out = exec.run({localShard(fx, all_, axis), localShard(fy, all_, axis)}).at(0);
      expectShard(out, at::relu(fx + fy), all_, axis);
    }
  }
}

TEST_F(MultiDeviceExecutorTest, UnannotatedIntermediatesTakeTheInputsSharding) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);
  fusion.addInput(x);
  TensorView* z = exp(neg(x));  // no annotation: propagated
  fusion.addOutput(z);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {});
  at::manual_seed(2);
  at::Tensor fx = randn({4 * n_, 6});
  at::Tensor out = exec.run({localShard(fx, all_, 0)}).at(0);
  expectShard(out, at::exp(-fx), all_, 0);
}

// One run path: the executor copies the fusion once (its prepared
// definition) and lowers it once; runs with the same and with a new input
// signature copy and lower nothing more.
TEST_F(MultiDeviceExecutorTest, CopiesAndLowersOncePerDefinition) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);
  fusion.addInput(x);
  TensorView* z = shard(relu(x), all_, 0);
  fusion.addOutput(z);

  const int64_t copies = fusionCopyCount();
  const int64_t lowerings = hostIrLoweringCount();
  MultiDeviceExecutor exec(fusion, comm_);
  EXPECT_EQ(fusionCopyCount() - copies, 1);
  EXPECT_EQ(hostIrLoweringCount() - lowerings, 1);
  at::manual_seed(4);
  for (at::Tensor full : {randn({2 * n_, 3}), randn({2 * n_, 3}), randn({4 * n_, 5})}) {
    at::Tensor out = exec.run({localShard(full, all_, 0)}).at(0);
    expectShard(out, at::relu(full), all_, 0);
  }
  EXPECT_EQ(fusionCopyCount() - copies, 1) << "a run copied the fusion";
  EXPECT_EQ(hostIrLoweringCount() - lowerings, 1) << "a run lowered the fusion again";
}

// Overlap without annotations is the default (issue 36): a sharded fusion
// without Stream axes whose linear allgathers its input's rows is prepared at
// its first run (the planner needs the sizes); with the automatic splits
// turned off, or with nothing to pipeline, it is prepared at construction
// and its program can be read before any run. HOSTIR_OVERLAP sets the
// default: unset or auto turns them on, off turns them off.
TEST_F(MultiDeviceExecutorTest, AutomaticStreamSplitsAreTheDefaultWhereAnAllgatherFeedsAGemm) {
  ASSERT_EQ(unsetenv("HOSTIR_OVERLAP"), 0);
  EXPECT_TRUE(ExecutorParams{}.automatic_stream_splits);
  ASSERT_EQ(setenv("HOSTIR_OVERLAP", "off", 1), 0);
  EXPECT_FALSE(ExecutorParams{}.automatic_stream_splits);
  ASSERT_EQ(setenv("HOSTIR_OVERLAP", "sometimes", 1), 0);
  EXPECT_THROW((void)ExecutorParams{}, Error);
  ASSERT_EQ(unsetenv("HOSTIR_OVERLAP"), 0);

  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);  // [T, H] on tokens
  TensorView* w = shard(makeContigTensor(2), all_, 0);  // [F, H] on ffn
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addOutput(shard(linear(x, w), all_, 1));  // [T, F] on ffn: x's rows allgathered

  MultiDeviceExecutor automatic(fusion, comm_);
  MultiDeviceExecutor as_written(fusion, comm_, {.automatic_stream_splits = false});
  EXPECT_FALSE(as_written.preparedAtFirstRun());
  EXPECT_NO_THROW(as_written.hostProgram());
  // A team of one has no collective to hide.
  EXPECT_EQ(automatic.preparedAtFirstRun(), n_ > 1);
  if (n_ > 1) {
    try {
      automatic.hostProgram();
      ADD_FAILURE() << "hostProgram() before the first run of a deferred program";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("HOSTIR_OVERLAP=off"), std::string::npos)
          << error.what();
    }
  }
  at::manual_seed(5);
  at::Tensor fx = randn({4 * n_, 6});
  at::Tensor fw = randn({2 * n_, 6});
  for (MultiDeviceExecutor* exec : {&automatic, &as_written}) {
    at::Tensor out = exec->run({localShard(fx, all_, 0), localShard(fw, all_, 0)}).at(0);
    expectShard(out, at::linear(fx, fw), all_, 1);
  }
  EXPECT_FALSE(automatic.preparedAtFirstRun());
  EXPECT_NO_THROW(automatic.hostProgram());
  EXPECT_EQ(automatic.overlapReport().empty(), n_ == 1) << automatic.overlapReport();

  // Nothing to pipeline: prepared at construction, automatic splits or not.
  Fusion pointwise;
  FusionGuard pointwise_guard(&pointwise);
  TensorView* y = shard(makeContigTensor(2), all_, 0);
  pointwise.addInput(y);
  pointwise.addOutput(shard(relu(y), all_, 0));
  MultiDeviceExecutor prepared(pointwise, comm_);
  EXPECT_FALSE(prepared.preparedAtFirstRun());
  EXPECT_NO_THROW(prepared.hostProgram());
}

// --- set: one mesh ----------------------------------------------------------

TEST_F(MultiDeviceExecutorTest, SetUnshardedToShardedIsScatter) {
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE("sharded axis " + std::to_string(axis));
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(makeContigTensor(2), all_, -1);
      fusion.addInput(x);
      TensorView* y = shard(set(x), all_, axis, via_split);
      fusion.addOutput(y);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(exec, {{CommunicationType::Scatter, 1}});
      at::manual_seed(3);
      at::Tensor fx = randn({4 * n_, 4 * n_});
      at::Tensor out = exec.run({localShard(fx, all_, -1)}).at(0);
      expectShard(out, fx, all_, axis);
    }
  }
}

// Every rank holds a replicated tensor, so the Scatter onto its own mesh
// is each rank cutting its piece: nothing crosses the link. Seen by giving
// the ranks different "replicas" (a contract the caller breaks here on
// purpose): each output is the piece of its own rank's input, where a
// Scatter from device 0 would hand every rank device 0's.
TEST_F(MultiDeviceExecutorTest, AScatterOfAReplicatedTensorIsEachRanksOwnCut) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, -1);
  fusion.addInput(x);
  fusion.addOutput(shard(set(x), all_, 0));
  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Scatter, 1}});
  for (const int64_t rows : {4 * n_, 4 * n_ - 1}) {
    at::manual_seed(5);
    const at::Tensor mine = randn({rows, 3}) + static_cast<double>(comm_.deviceId());
    const at::Tensor out = exec.run({mine}).at(0);
    const at::Tensor want = mine.chunk(n_, 0).at(static_cast<size_t>(comm_.deviceId()));
    EXPECT_TRUE(at::equal(out, want)) << rows << " rows";
  }
}

TEST_F(MultiDeviceExecutorTest, SetShardedToUnshardedOnOneMeshIsAllgather) {
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE("sharded axis " + std::to_string(axis));
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(makeContigTensor(2), all_, axis, via_split);
      fusion.addInput(x);
      TensorView* y = shard(set(x), all_, -1);
      fusion.addOutput(y);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(exec, {{CommunicationType::Allgather, 1}});
      at::manual_seed(4);
      at::Tensor fx = randn({4 * n_, 4 * n_});
      at::Tensor out = exec.run({localShard(fx, all_, axis)}).at(0);
      expectShard(out, fx, all_, -1);
    }
  }
}

// A sharded input, a local op, a gather and an op on the whole tensor: the
// allgather sits between the two computations.
TEST_F(MultiDeviceExecutorTest, AllgatherBetweenComputations) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);
  fusion.addInput(x);
  TensorView* a = shard(mul(x, 2.0), all_, 0, /*via_split=*/true);
  TensorView* b = shard(set(a), all_, -1);
  TensorView* c = shard(sum(b, {0}), all_, -1);
  fusion.addOutput(c);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Allgather, 1}});
  at::manual_seed(5);
  at::Tensor fx = randn({4 * n_, 5});
  at::Tensor out = exec.run({localShard(fx, all_, 0)}).at(0);
  expectShard(out, (fx * 2).sum(0), all_, -1);
}

// A 2-D mesh [n/2, 2]: rows sharded over DIDy, columns over DIDx. Gathering
// the columns is one Allgather per mesh row (a team of 2); the rows stay
// sharded.
TEST_F(MultiDeviceExecutorTest, AllgatherAlongOneDimensionOfA2DMesh) {
  if (n_ < 4 || n_ % 2 != 0) {
    GTEST_SKIP() << "needs a 2-D mesh of at least 2 x 2 devices";
  }
  DeviceMesh mesh(all_.vector(), {n_ / 2, 2});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  x->setDeviceMesh(mesh);
  x->axis(0)->parallelize(ParallelType::DIDy);
  x->axis(1)->parallelize(ParallelType::DIDx);
  fusion.addInput(x);
  TensorView* y = set(x);
  y->setDeviceMesh(mesh);
  y->axis(0)->parallelize(ParallelType::DIDy);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Allgather, 1}});
  walk(exec.hostProgram().topLevel(), [&](const Expr* expr) {
    if (const auto* communication = dynamic_cast<const Communication*>(expr)) {
      std::vector<int64_t> team = communication->team();
      std::vector<int64_t> slice = mesh.getSlice(me_, ParallelType::DIDx);
      std::sort(team.begin(), team.end());
      std::sort(slice.begin(), slice.end());
      EXPECT_EQ(team, slice);
    }
  });
  at::manual_seed(23);
  at::Tensor fx = randn({4 * n_, 8});
  int64_t row = mesh.idxOf(me_, ParallelType::DIDy);
  int64_t col = mesh.idxOf(me_, ParallelType::DIDx);
  at::Tensor rows = fx.chunk(n_ / 2, 0)[row];
  at::Tensor out = exec.run({rows.chunk(2, 1)[col].contiguous()}).at(0);
  ASSERT_TRUE(out.defined());
  EXPECT_TRUE(at::allclose(out, rows)) << "device " << me_;
}

// --- set: between meshes ----------------------------------------------------

TEST_F(MultiDeviceExecutorTest, SetShardedToUnshardedOnAnotherMeshIsGather) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs two meshes: at least 2 ranks";
  }
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    Fusion fusion;
    FusionGuard fg(&fusion);
    DeviceMesh root({0});
    TensorView* x = shard(makeContigTensor(2), all_, 0, via_split);
    fusion.addInput(x);
    TensorView* y = shard(set(x), root, -1);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_);
    // Every device sends its shard; device 0 also receives.
    expectCommunications(exec, {{CommunicationType::Gather, 1}});
    at::manual_seed(6);
    at::Tensor fx = randn({4 * n_, 3});
    at::Tensor out = exec.run({localShard(fx, all_, 0)}).at(0);
    expectShard(out, fx, root, -1);
  }
}

// Gather onto a mesh of two receivers that is not a sub-mesh of the
// senders' mesh: one Gather per receiver.
TEST_F(MultiDeviceExecutorTest, GatherOntoSeveralReceiversIsOneGatherEach) {
  if (n_ < 4) {
    GTEST_SKIP() << "needs a 2-device sending mesh and a 2-device receiving mesh";
  }
  Fusion fusion;
  FusionGuard fg(&fusion);
  DeviceMesh senders({0, 1});
  DeviceMesh receivers({2, 3});
  // Concrete extents: the receivers hold no input to bind them from.
  TensorView* x = shard(makeContigConcreteTensor({6, 8}), senders, 1);
  fusion.addInput(x);
  TensorView* y = shard(set(x), receivers, -1);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  Counts expected;
  int joined = 0;
  for (int64_t receiver : receivers.vector()) {
    joined += (senders.has(me_) || me_ == receiver) ? 1 : 0;
  }
  if (joined > 0) {
    expected[CommunicationType::Gather] = joined;
  }
  expectCommunications(exec, expected);
  at::manual_seed(7);
  at::Tensor fx = randn({6, 8});
  at::Tensor out = exec.run({localShard(fx, senders, 1)}).at(0);
  expectShard(out, fx, receivers, -1);
}

TEST_F(MultiDeviceExecutorTest, SetBetweenMeshesWithTheSameShardingIsSendRecv) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs two meshes: at least 2 ranks";
  }
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    const int64_t half = n_ / 2;
    DeviceMesh first = meshOf(0, half);
    DeviceMesh second = meshOf(half, half);
    Fusion fusion;
    FusionGuard fg(&fusion);
    // Symbolic extents: the second mesh holds no input, so it learns them
    // from the ranks that do (the executor's extent exchange).
    TensorView* x = shard(makeContigTensor(2), first, 0, via_split);
    fusion.addInput(x);
    TensorView* y = shard(set(x), second, 0, via_split);
    TensorView* z = shard(add(y, 1.0), second, 0, via_split);
    fusion.addOutput(z);

    MultiDeviceExecutor exec(fusion, comm_);
    // Each device of the two meshes sends or receives exactly one shard; the
    // last device of an odd world is on neither and moves nothing.
    const bool on_a_mesh = first.has(me_) || second.has(me_);
    expectCommunications(exec, on_a_mesh ? Counts{{CommunicationType::SendRecv, 1}} : Counts{});
    at::manual_seed(8);
    at::Tensor fx = randn({4 * half, 5});
    at::Tensor out = exec.run({localShard(fx, first, 0)}).at(0);
    expectShard(out, fx + 1, second, 0);
  }
}

// The same devices in another order: shard i moves from device i to device
// n-1-i (the middle device of an odd world keeps its shard: a local copy).
TEST_F(MultiDeviceExecutorTest, SetOntoTheReversedMeshIsSendRecvPerShard) {
  if (n_ < 2) {
    GTEST_SKIP() << "the reversed mesh of one device is the same mesh";
  }
  std::vector<int64_t> reversed_devices(all_.vector().rbegin(), all_.vector().rend());
  DeviceMesh reversed(reversed_devices);
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 1);
  fusion.addInput(x);
  TensorView* y = shard(set(x), reversed, 1);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  // Device d sends shard d to n-1-d and receives shard n-1-d from it; the
  // middle device of an odd world copies its own shard (one SendRecv).
  const bool middle = 2 * me_ == n_ - 1;
  expectCommunications(exec, {{CommunicationType::SendRecv, middle ? 1 : 2}});
  at::manual_seed(9);
  at::Tensor fx = randn({3, 4 * n_});
  at::Tensor out = exec.run({localShard(fx, all_, 1)}).at(0);
  expectShard(out, fx, reversed, 1);
}

TEST_F(MultiDeviceExecutorTest, UnshardedSetOntoAnotherMeshIsBroadcast) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs two meshes: at least 2 ranks";
  }
  DeviceMesh sender({0});
  DeviceMesh receivers = meshOf(1, n_ - 1);
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), sender, -1);
  fusion.addInput(x);
  TensorView* y = shard(set(x), receivers, -1);
  TensorView* z = shard(mul(y, y), receivers, -1);
  fusion.addOutput(z);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Broadcast, 1}});
  at::manual_seed(10);
  at::Tensor fx = randn({4, 6});
  at::Tensor out = exec.run({localShard(fx, sender, -1)}).at(0);
  expectShard(out, fx * fx, receivers, -1);
}

TEST_F(MultiDeviceExecutorTest, UnshardedOnOneDeviceToShardedOnAllIsScatter) {
  DeviceMesh root({0});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigConcreteTensor({4 * n_, 2}), root, -1);
  fusion.addInput(x);
  TensorView* y = shard(set(x), all_, 0, /*via_split=*/true);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Scatter, 1}});
  at::manual_seed(11);
  at::Tensor fx = randn({4 * n_, 2});
  at::Tensor out = exec.run({localShard(fx, root, -1)}).at(0);
  expectShard(out, fx, all_, 0);
}

// Found by the sharded fuzzer (issue 11): collectives that move blocks onto
// or within a mesh whose devices are not in ascending order. Device d holds
// block mesh.idxOf(d), so a team lists the sharded mesh in mesh order: a
// scatter onto {n-1 ... 0} gives device n-1 the first block; an allgather
// on it puts device n-1's shard first; a reduce-scatter gives device n-1
// the first block of the sum; a gather onto device 0 orders the blocks by
// the mesh (the sorted team gave silent wrong shards before).
TEST_F(MultiDeviceExecutorTest, ReshardingOntoTheReversedMeshKeepsMeshOrder) {
  std::vector<int64_t> reversed_devices(all_.vector().rbegin(), all_.vector().rend());
  DeviceMesh reversed(reversed_devices);
  DeviceMesh first({0});
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, -1);            // [R, C] replicated
    TensorView* k = shard(makeContigTensor(2), all_, 1, via_split);  // [R, K], K sharded
    fusion.addInput(x);
    fusion.addInput(k);
    TensorView* scattered = shard(set(x), reversed, 0, via_split);  // Scatter
    TensorView* doubled = shard(mul(scattered, 2.0), reversed, 0, via_split);
    TensorView* gathered = shard(set(doubled), reversed, -1);                  // Allgather
    TensorView* onto_first = shard(set(doubled), first, -1);                   // Gather
    TensorView* k_reversed = shard(set(k), reversed, 1, via_split);            // SendRecv
    TensorView* summed = shard(sum(k_reversed, {1}), reversed, 0, via_split);  // ReduceScatter
    fusion.addOutput(scattered);
    fusion.addOutput(gathered);
    fusion.addOutput(onto_first);
    fusion.addOutput(summed);

    MultiDeviceExecutor exec(fusion, comm_);
    at::manual_seed(31);
    at::Tensor fx = randn({2 * n_, 3});
    at::Tensor fk = randn({2 * n_, 2 * n_});
    std::vector<at::Tensor> outs = exec.run({localShard(fx, all_, -1), localShard(fk, all_, 1)});
    ASSERT_EQ(outs.size(), 4u);
    expectShard(outs[0], fx, reversed, 0);
    expectShard(outs[1], fx * 2, reversed, -1);
    expectShard(outs[2], fx * 2, first, -1);
    expectShard(outs[3], fk.sum(1), reversed, 0);
  }
}

// Found by the sharded fuzzer: a [1, C] tensor (a broadcast row) sharded on
// axis 1. The lowering leaves the sharded axis behind the size-1 broadcast
// axis (same memory layout); scatter and allgather split their buffers
// along the first axis larger than 1. Before, the scatter's root failed
// ("its input must split into 2 blocks along axis 0, got [1, 2]") while its
// peers waited for the communication timeout.
TEST_F(MultiDeviceExecutorTest, ShardedBroadcastRowIsScatteredAndGathered) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, -1);  // [R, C]
  fusion.addInput(x);
  TensorView* row = shard(broadcast(sum(x, {0}), {true, false}), all_, -1);  // [1, C]
  TensorView* scattered = shard(set(row), all_, 1);                          // Scatter
  TensorView* gathered = shard(set(mul(scattered, 3.0)), all_, -1);          // Allgather
  fusion.addOutput(scattered);
  fusion.addOutput(gathered);

  MultiDeviceExecutor exec(fusion, comm_);
  at::manual_seed(32);
  at::Tensor fx = randn({3, 2 * n_});
  std::vector<at::Tensor> outs = exec.run({localShard(fx, all_, -1)});
  ASSERT_EQ(outs.size(), 2u);
  at::Tensor full_row = fx.sum(0).unsqueeze(0);
  expectShard(outs[0], full_row, all_, 1);
  expectShard(outs[1], full_row * 3, all_, -1);
}

// Found by the sharded fuzzer: preallocated outputs when an output lives on
// a mesh without this device. Its buffer here is undefined (as its result
// is); before, that device failed ("the buffer given for output ... is
// undefined") and its peers waited for the communication timeout.
TEST_F(MultiDeviceExecutorTest, PreallocatedOutputOnAnotherMesh) {
  DeviceMesh last({n_ - 1});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);
  fusion.addInput(x);
  TensorView* local = shard(relu(x), all_, 0);
  TensorView* on_last = shard(set(local), last, -1);  // Gather onto the last device
  fusion.addOutput(local);
  fusion.addOutput(on_last);

  MultiDeviceExecutor exec(fusion, comm_);
  at::manual_seed(33);
  at::Tensor fx = randn({2 * n_, 3});
  at::Tensor local_buffer = at::full({2, 3}, -7.0);
  at::Tensor last_buffer = last.has(me_) ? at::full({2 * n_, 3}, -7.0) : at::Tensor();
  std::vector<at::Tensor> outs = exec.run({localShard(fx, all_, 0)}, {local_buffer, last_buffer});
  ASSERT_EQ(outs.size(), 2u);
  expectShard(outs[0], at::relu(fx), all_, 0);
  EXPECT_TRUE(outs[0].is_same(local_buffer));
  expectShard(outs[1], at::relu(fx), last, -1);
  if (last.has(me_)) {
    EXPECT_TRUE(outs[1].is_same(last_buffer));
  }
}

// --- reductions over the sharded axis ---------------------------------------

TEST_F(MultiDeviceExecutorTest, ReductionOverShardedAxisWithShardedOutputIsReduceScatter) {
  for (bool via_split : {false, true}) {
    SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, 0, via_split);
    fusion.addInput(x);
    // The output's logical domain keeps the reduced axis (position 0), so
    // its remaining axis is logical position 1.
    TensorView* y = shard(sum(x, {0}), all_, 1, via_split);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_);
    expectCommunications(exec, {{CommunicationType::ReduceScatter, 1}});
    at::manual_seed(12);
    at::Tensor fx = randn({2 * n_, 8 * n_});
    at::Tensor out = exec.run({localShard(fx, all_, 0)}).at(0);
    expectShard(out, fx.sum(0), all_, 0);
  }
}

TEST_F(MultiDeviceExecutorTest, ReductionOverShardedAxisWithUnshardedOutputIsAllreduce) {
  for (bool use_max : {false, true}) {
    SCOPED_TRACE(use_max ? "max" : "sum");
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, 1);
    fusion.addInput(x);
    TensorView* r = use_max ? max(x, {1}) : sum(x, {1});
    TensorView* y = shard(r, all_, -1);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_);
    expectCommunications(exec, {{CommunicationType::Allreduce, 1}});
    at::manual_seed(13);
    at::Tensor fx = randn({5, 4 * n_});
    at::Tensor out = exec.run({localShard(fx, all_, 1)}).at(0);
    expectShard(out, use_max ? std::get<0>(fx.max(1)) : fx.sum(1), all_, -1);
  }
}

TEST_F(MultiDeviceExecutorTest, ReductionOverShardedAxisOntoAnotherMeshIsReduce) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs two meshes: at least 2 ranks";
  }
  DeviceMesh last({n_ - 1});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);
  fusion.addInput(x);
  TensorView* y = shard(sum(x, {0}), last, -1);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Reduce, 1}});
  at::manual_seed(14);
  at::Tensor fx = randn({4 * n_, 6});
  at::Tensor out = exec.run({localShard(fx, all_, 0)}).at(0);
  expectShard(out, fx.sum(0), last, -1);
}

// --- matmul / linear contracting a sharded K --------------------------------

TEST_F(MultiDeviceExecutorTest, MatmulContractingShardedKIsAllreduceOrReduceScatter) {
  for (bool scatter : {false, true}) {
    SCOPED_TRACE(scatter ? "output sharded on M" : "output unsharded");
    for (bool via_split : {false, true}) {
      SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* a = shard(makeContigTensor(2), all_, 1, via_split);  // [M, K]
      TensorView* b = shard(makeContigTensor(2), all_, 0, via_split);  // [K, N]
      fusion.addInput(a);
      fusion.addInput(b);
      TensorView* c = shard(matmul(a, b), all_, scatter ? 0 : -1, via_split);
      fusion.addOutput(c);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(
          exec, {{scatter ? CommunicationType::ReduceScatter : CommunicationType::Allreduce, 1}});
      at::manual_seed(15);
      at::Tensor fa = randn({4 * n_, 8 * n_});
      at::Tensor fb = randn({8 * n_, 6});
      at::Tensor out = exec.run({localShard(fa, all_, 1), localShard(fb, all_, 0)}).at(0);
      expectShard(out, at::matmul(fa, fb), all_, scatter ? 0 : -1);
    }
  }
}

TEST_F(MultiDeviceExecutorTest, RowParallelLinearIsAllreduceOrReduceScatter) {
  for (bool scatter : {false, true}) {
    SCOPED_TRACE(scatter ? "output sharded on rows" : "output unsharded");
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, 1);  // [M, K]
    TensorView* w = shard(makeContigTensor(2), all_, 1);  // [N, K]
    fusion.addInput(x);
    fusion.addInput(w);
    TensorView* y = shard(linear(x, w), all_, scatter ? 0 : -1);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_);
    expectCommunications(
        exec, {{scatter ? CommunicationType::ReduceScatter : CommunicationType::Allreduce, 1}});
    at::manual_seed(16);
    at::Tensor fx = randn({4 * n_, 4 * n_});
    at::Tensor fw = randn({6, 4 * n_});
    at::Tensor out = exec.run({localShard(fx, all_, 1), localShard(fw, all_, 1)}).at(0);
    expectShard(out, at::linear(fx, fw), all_, scatter ? 0 : -1);
  }
}

// The bias is added once, after the reduction, not by every device.
TEST_F(MultiDeviceExecutorTest, RowParallelLinearWithBiasAddsTheBiasOnce) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 1);
  TensorView* w = shard(makeContigTensor(2), all_, 1);
  TensorView* bias = shard(makeContigTensor(1), all_, -1);
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addInput(bias);
  TensorView* y = shard(linear(x, w, bias), all_, -1);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Allreduce, 1}});
  at::manual_seed(17);
  at::Tensor fx = randn({8, 4 * n_});
  at::Tensor fw = randn({6, 4 * n_});
  at::Tensor fbias = randn({6});
  at::Tensor out =
      exec.run({localShard(fx, all_, 1), localShard(fw, all_, 1), localShard(fbias, all_, -1)})
          .at(0);
  expectShard(out, at::linear(fx, fw, fbias), all_, -1);
}

// --- Megatron MLP -----------------------------------------------------------

// Column-parallel linear (w1 sharded on its output features), GELU on the
// sharded activations, row-parallel linear (w2 sharded on its input
// features): no allgather anywhere, one Allreduce or ReduceScatter at the end.
TEST_F(MultiDeviceExecutorTest, MegatronMlpCommunicatesOnceAtTheEnd) {
  for (bool scatter : {false, true}) {
    SCOPED_TRACE(scatter ? "output sharded on tokens" : "output replicated");
    for (bool via_split : {false, true}) {
      SCOPED_TRACE(via_split ? "DIDx on an outer split" : "DIDx on the logical axis");
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(makeContigTensor(2), all_, -1);             // [T, H]
      TensorView* w1 = shard(makeContigTensor(2), all_, 0, via_split);  // [F, H]
      TensorView* b1 = shard(makeContigTensor(1), all_, 0, via_split);  // [F]
      TensorView* w2 = shard(makeContigTensor(2), all_, 1, via_split);  // [H, F]
      fusion.addInput(x);
      fusion.addInput(w1);
      fusion.addInput(b1);
      fusion.addInput(w2);
      TensorView* h = shard(linear(x, w1, b1), all_, 1, via_split);  // [T, F] sharded on F
      TensorView* g = gelu(h);                                       // sharding propagated
      TensorView* y = shard(linear(g, w2), all_, scatter ? 0 : -1, via_split);
      fusion.addOutput(y);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(
          exec, {{scatter ? CommunicationType::ReduceScatter : CommunicationType::Allreduce, 1}});
      at::manual_seed(18);
      const int64_t tokens = 4 * n_;
      const int64_t hidden = 8;
      const int64_t ffn = 4 * n_;
      at::Tensor fx = randn({tokens, hidden});
      at::Tensor fw1 = randn({ffn, hidden});
      at::Tensor fb1 = randn({ffn});
      at::Tensor fw2 = randn({hidden, ffn});
      at::Tensor out = exec.run({localShard(fx, all_, -1), localShard(fw1, all_, 0),
                                 localShard(fb1, all_, 0), localShard(fw2, all_, 1)})
                           .at(0);
      at::Tensor expected = at::linear(at::gelu(at::linear(fx, fw1, fb1)), fw2);
      expectShard(out, expected, all_, scatter ? 0 : -1);
    }
  }
}

// --- pipelined allgather + GEMM ---------------------------------------------

struct PipelineShape {
  int64_t chunks;
  int streams;
};

// The pipelined loops of `program` with a GEMM of kind T: a prefetch loop
// that posts an Allgather per chunk, followed by a loop that waits for that
// Allgather and then runs the GEMM, on a worker stream.
template <typename T>
int pipelinedLoops(const HostIrContainer& program) {
  int loops = 0;
  const Communication* prefetched = nullptr;
  for (const Expr* expr : program.topLevel()) {
    const auto* loop = dynamic_cast<const ForLoop*>(expr);
    if (loop == nullptr) {
      continue;
    }
    bool waited = false;
    bool gemm_after_wait = false;
    for (const Expr* inner : loop->body()) {
      if (const auto* communication = dynamic_cast<const Communication*>(inner)) {
        if (communication->type() == CommunicationType::Allgather) {
          prefetched = communication;
        }
      } else if (const auto* wait = dynamic_cast<const Wait*>(inner)) {
        waited = waited || (prefetched != nullptr && wait->communication() == prefetched &&
                            std::find(loop->body().begin(), loop->body().end(), prefetched) ==
                                loop->body().end());
      } else if (inner->isA<T>()) {
        gemm_after_wait = gemm_after_wait || waited;
      }
    }
    loops += gemm_after_wait ? 1 : 0;
  }
  return loops;
}

TEST_F(MultiDeviceExecutorTest, PipelinedAllgatherLinear) {
  for (PipelineShape shape : {PipelineShape{4, 4}, PipelineShape{4, 2}, PipelineShape{2, 3}}) {
    SCOPED_TRACE("chunks " + std::to_string(shape.chunks) + " streams " +
                 std::to_string(shape.streams));
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);  // [S, H]
    TensorView* w = shard(makeContigTensor(2), all_, -1);                     // [F, H]
    fusion.addInput(x);
    fusion.addInput(w);
    TensorView* h = shard(linear(x, w), all_, -1);  // [S, F], whole on every device
    h->split(0, shape.chunks, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
    TensorView* y = shard(relu(h), all_, -1);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_, {.number_of_streams = shape.streams});
    // The allgather is in the loop, once per chunk; nothing else moves.
    expectCommunications(exec, {{CommunicationType::Allgather, 1}});
    EXPECT_EQ(pipelinedLoops<LinearOp>(exec.hostProgram()), 1) << exec.hostProgram().toString();
    EXPECT_EQ(countOf<LinearOp>(exec.hostProgram()), 1) << exec.hostProgram().toString();

    at::manual_seed(19);
    at::Tensor fx = randn({4 * n_ * shape.chunks, 8});
    at::Tensor fw = randn({6, 8});
    at::Tensor out = exec.run({localShard(fx, all_, 0), localShard(fw, all_, -1)}).at(0);
    expectShard(out, at::relu(at::linear(fx, fw)), all_, -1);
  }
}

// Sequence parallel: B sharded on its columns, the output keeps that
// sharding while its rows are gathered chunk by chunk.
TEST_F(MultiDeviceExecutorTest, PipelinedAllgatherMatmulWithColumnShardedOutput) {
  const int64_t chunks = 4;
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);  // [S, K]
  TensorView* b = shard(makeContigTensor(2), all_, 1, /*via_split=*/true);  // [K, N]
  fusion.addInput(a);
  fusion.addInput(b);
  TensorView* c = shard(matmul(a, b), all_, 1, /*via_split=*/true);  // [S, N], N sharded
  c->split(0, chunks, /*inner_split=*/false);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(c);

  MultiDeviceExecutor exec(fusion, comm_, {.number_of_streams = 4});
  expectCommunications(exec, {{CommunicationType::Allgather, 1}});
  EXPECT_EQ(pipelinedLoops<MatmulOp>(exec.hostProgram()), 1) << exec.hostProgram().toString();
  // The dump reads: derived extents are named once (`i45 = ...`) at the top
  // of the program or of their loop, so no line repeats them inline.
  const std::string printed = exec.hostProgram().toString();
  std::istringstream lines(printed);
  size_t longest = 0;
  for (std::string line; std::getline(lines, line);) {
    longest = std::max(longest, line.size());
  }
  EXPECT_LT(longest, 160u) << printed;
  EXPECT_TRUE(std::regex_search(printed, std::regex("\n +i[0-9]+ = \\( StreamIdx \\* ")))
      << printed;

  at::manual_seed(20);
  at::Tensor fa = randn({4 * n_ * chunks, 6});
  at::Tensor fb = randn({6, 4 * n_});
  at::Tensor out = exec.run({localShard(fa, all_, 0), localShard(fb, all_, 1)}).at(0);
  expectShard(out, at::matmul(fa, fb), all_, 1);
}

// The whole sequence-parallel MLP block from one Stream split on the first
// linear's rows: GELU and the row-parallel second linear run chunk by chunk
// in the same loop, and each chunk's partial product is reduce-scattered
// there, so nothing of the block runs on whole tensors after the loop.
// Uneven chunks (10 rows per rank in 4 chunks: 3, 3, 3, 1) and more chunks
// than streams give the streams uneven work; the collectives must still
// pair up in order on every rank.
TEST_F(MultiDeviceExecutorTest, PipelinedBlockReduceScattersEachChunkInTheLoop) {
  for (PipelineShape shape :
       {PipelineShape{4, 4}, PipelineShape{4, 3}, PipelineShape{8, 2}, PipelineShape{5, 1}}) {
    SCOPED_TRACE("chunks " + std::to_string(shape.chunks) + " streams " +
                 std::to_string(shape.streams));
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* x = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);   // [S, H]
    TensorView* w1 = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);  // [F, H]
    TensorView* w2 = shard(makeContigTensor(2), all_, 1, /*via_split=*/true);  // [H, F]
    fusion.addInput(x);
    fusion.addInput(w1);
    fusion.addInput(w2);
    TensorView* h = shard(linear(x, w1), all_, 1, /*via_split=*/true);
    h->split(0, shape.chunks, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
    TensorView* y = shard(linear(gelu(h), w2), all_, 0, /*via_split=*/true);
    fusion.addOutput(y);

    MultiDeviceExecutor exec(fusion, comm_, {.number_of_streams = shape.streams});
    const HostIrContainer& program = exec.hostProgram();
    expectCommunications(
        exec, {{CommunicationType::Allgather, 1}, {CommunicationType::ReduceScatter, 1}});
    EXPECT_EQ(pipelinedLoops<LinearOp>(program), 1) << program.toString();
    // Every linear, the GELU (with the first linear one GEMM with a post-op:
    // a HostUnit posted in the loop, gemm_epilogues) and the reduce-scatter
    // are in the compute loop; none is left at the top level. The
    // reduce-scatters' Waits are the caller's, in a loop after it (the last
    // top-level expr), so a stream goes on to its next chunk while its sums
    // are on the link.
    const std::list<Expr*>& top = program.topLevel().exprs();
    ASSERT_GE(top.size(), 2u) << program.toString();
    const auto* waits = dynamic_cast<const ForLoop*>(top.back());
    ASSERT_NE(waits, nullptr) << program.toString();
    ASSERT_EQ(waits->body().size(), 1u) << program.toString();
    const auto* wait = dynamic_cast<const Wait*>(waits->body().front());
    ASSERT_NE(wait, nullptr) << program.toString();
    const auto* loop = dynamic_cast<const ForLoop*>(*std::prev(top.end(), 2));
    ASSERT_NE(loop, nullptr) << program.toString();
    EXPECT_NE(std::find(loop->body().begin(), loop->body().end(), wait->communication()),
              loop->body().end())
        << "the Wait after the loop waits for the loop's reduce-scatter\n"
        << program.toString();
    std::vector<std::string> kinds;
    for (const Expr* inner : loop->body()) {
      if (inner->isA<LinearOp>() || inner->isA<UnaryOp>() || inner->isA<Wait>()) {
        kinds.push_back(inner->displayName());
      } else if (const auto* post = dynamic_cast<const PostOnStream*>(inner)) {
        for (const Expr* op : post->hostUnit()->fusion()->exprs()) {
          kinds.push_back("kernel: " + op->displayName());
        }
      } else if (const auto* communication = dynamic_cast<const Communication*>(inner)) {
        kinds.push_back(toString(communication->type()));
      }
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"Wait", "kernel: linear", "kernel: gelu", "linear",
                                               "ReduceScatter"}))
        << program.toString();
    for (const Expr* expr : top) {
      EXPECT_FALSE(expr->isA<LinearOp>() || expr->isA<PostOnStream>()) << expr->toString();
    }

    at::manual_seed(22);
    const int64_t tokens = 10 * n_;
    at::Tensor fx = randn({tokens, 8});
    at::Tensor fw1 = randn({6 * n_, 8});
    at::Tensor fw2 = randn({8, 6 * n_});
    for (int run = 0; run < 3; ++run) {  // later runs reuse groups and streams
      at::Tensor out =
          exec.run({localShard(fx, all_, 0), localShard(fw1, all_, 0), localShard(fw2, all_, 1)})
              .at(0);
      expectShard(out, at::linear(at::gelu(at::linear(fx, fw1)), fw2), all_, 0);
    }
  }
}

// When the first linear's output is a program output, it must exist whole:
// the tail stays after the loop (and the result is still right).
TEST_F(MultiDeviceExecutorTest, PipelinedGemmWhoseOutputIsNeededWholeKeepsItsTailOutside) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);
  TensorView* w1 = shard(makeContigTensor(2), all_, 0, /*via_split=*/true);
  TensorView* w2 = shard(makeContigTensor(2), all_, 1, /*via_split=*/true);
  fusion.addInput(x);
  fusion.addInput(w1);
  fusion.addInput(w2);
  TensorView* h = shard(linear(x, w1), all_, 1, /*via_split=*/true);
  h->split(0, 2, /*inner_split=*/false);
  h->axis(0)->parallelize(ParallelType::Stream);
  TensorView* y = shard(linear(gelu(h), w2), all_, 0, /*via_split=*/true);
  fusion.addOutput(h);
  fusion.addOutput(y);
  MultiDeviceExecutor exec(fusion, comm_);
  EXPECT_EQ(countOf<LinearOp>(exec.hostProgram()), 2) << exec.hostProgram().toString();
  at::manual_seed(23);
  at::Tensor fx = randn({4 * n_, 8});
  at::Tensor fw1 = randn({6 * n_, 8});
  at::Tensor fw2 = randn({8, 6 * n_});
  auto outs =
      exec.run({localShard(fx, all_, 0), localShard(fw1, all_, 0), localShard(fw2, all_, 1)});
  expectShard(outs.at(0), at::linear(fx, fw1), all_, 1);
  expectShard(outs.at(1), at::linear(at::gelu(at::linear(fx, fw1)), fw2), all_, 0);
}

// --- ranks outside a mesh ---------------------------------------------------

TEST_F(MultiDeviceExecutorTest, RankOutsideTheMeshSkipsTheWork) {
  DeviceMesh first({0});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), first, -1);
  TensorView* w = shard(makeContigTensor(2), first, -1);
  fusion.addInput(x);
  fusion.addInput(w);
  TensorView* y = shard(relu(linear(x, w)), first, -1);
  fusion.addOutput(y);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {});
  if (!first.has(me_)) {
    EXPECT_EQ(countOf<LinearOp>(exec.hostProgram()), 0) << exec.hostProgram().toString();
  }
  at::manual_seed(21);
  at::Tensor fx = randn({4, 8});
  at::Tensor fw = randn({6, 8});
  at::Tensor out = exec.run({localShard(fx, first, -1), localShard(fw, first, -1)}).at(0);
  expectShard(out, at::relu(at::linear(fx, fw)), first, -1);
}

// Two outputs on two meshes: each rank gets its own and an undefined tensor
// for the other.
TEST_F(MultiDeviceExecutorTest, OutputsOnSeveralMeshes) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs two meshes: at least 2 ranks";
  }
  DeviceMesh root({0});
  DeviceMesh rest = meshOf(1, n_ - 1);
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigConcreteTensor({4 * (n_ - 1), 3}), root, -1);
  fusion.addInput(x);
  TensorView* local = shard(neg(x), root, -1);
  TensorView* moved = shard(set(x), rest, 0);  // Scatter from device 0 onto the rest
  TensorView* doubled = shard(mul(moved, 2.0), rest, 0);
  fusion.addOutput(local);
  fusion.addOutput(doubled);

  MultiDeviceExecutor exec(fusion, comm_);
  expectCommunications(exec, {{CommunicationType::Scatter, 1}});
  at::manual_seed(22);
  at::Tensor fx = randn({4 * (n_ - 1), 3});
  std::vector<at::Tensor> outs = exec.run({localShard(fx, root, -1)});
  ASSERT_EQ(outs.size(), 2u);
  expectShard(outs[0], -fx, root, -1);
  expectShard(outs[1], fx * 2, rest, 0);
}

// --- reshapes of a sharded tensor ------------------------------------------

// Rows [start, start + rows) of `full` that torch.chunk gives this rank.
at::Tensor rowsOf(const at::Tensor& full, int64_t ranks, int64_t me) {
  const RowChunk mine = rowChunk(full.size(0), ranks, me);
  return full.narrow(0, mine.start, mine.rows).contiguous();
}

// A reshape written with -1 for the sharded outer axis keeps it when the
// other extents provably make up the other sizes: x [S, 2, 4] viewed {-1, 8}
// has the extent (S·2·4)/8 = S, and x [S, i1, i2] viewed {-1, i1·i2} the
// extent (S·i1·i2)/(i1·i2) = S. The reshape runs on each device's rows, with
// no collective (before, an Allgather of x and a Scatter cutting y: the -1
// extent was not S as written), for S the devices divide or not (torch.chunk
// rows, the last ranks fewer).
TEST_F(MultiDeviceExecutorTest, AReshapeKeepingTheShardedAxisAsMinusOneStaysLocal) {
  for (const bool constant_inner : {true, false}) {
    for (const bool annotated : {true, false}) {
      SCOPED_TRACE(
          std::string(constant_inner ? "x [S, 2, 4], {-1, 8}" : "x [S, i1, i2], {-1, i1*i2}") +
          (annotated ? ", output sharded by the user" : ", output propagated"));
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(
          constant_inner ? makeContigConcreteTensor({-1, 2, 4}) : makeContigTensor(3), all_, 0);
      fusion.addInput(x);
      TensorView* y =
          constant_inner
              ? reshape(x, {-1, 8})
              : reshapeToExtents(x, {IrBuilder::createInContainer<Scalar>(&fusion, int64_t{-1}),
                                     mul(x->axis(1)->extent(), x->axis(2)->extent())});
      TensorView* out = relu(y);
      fusion.addOutput(annotated ? shard(out, all_, 0) : out);

      MultiDeviceExecutor exec(fusion, comm_);
      expectCommunications(exec, {});
      for (const int64_t rows : {4 * n_, 4 * n_ - 1, n_ + 1}) {
        at::manual_seed(rows);  // the same whole tensor on every rank
        const at::Tensor fx = randn({rows, 2, 4});
        const at::Tensor got = exec.run({rowsOf(fx, n_, me_)}).at(0);
        const at::Tensor want = rowsOf(at::relu(fx.reshape({-1, 8})), n_, me_);
        ASSERT_EQ(got.sizes(), want.sizes()) << rows << " rows";
        EXPECT_TRUE(at::equal(got, want)) << rows << " rows";
      }
    }
  }
}

// A -1 that does not keep the sharded axis (x [4, 6, 2] viewed {-1, 3} is
// [16, 3]; x [S, i1, i2] viewed {-1, 8}, which is S only when i1·i2 = 8 at
// run time) runs on the gathered x: an Allgather, the reshape of the whole
// tensor, and each device's torch.chunk rows cut from it when the output is
// sharded (a Scatter each member cuts locally). Right for every shape the
// symbolic one takes, 8 = i1·i2 or not.
TEST_F(MultiDeviceExecutorTest, AReshapeNotKeepingTheShardedAxisGathersIt) {
  for (const bool constant_shape : {true, false}) {
    for (const bool annotated : {true, false}) {
      SCOPED_TRACE(std::string(constant_shape ? "x [4, 6, 2], {-1, 3}" : "x [S, i1, i2], {-1, 8}") +
                   (annotated ? ", output sharded by the user" : ", output propagated"));
      Fusion fusion;
      FusionGuard fg(&fusion);
      TensorView* x = shard(
          constant_shape ? makeContigConcreteTensor({4, 6, 2}) : makeContigTensor(3), all_, 0);
      fusion.addInput(x);
      TensorView* out = relu(constant_shape ? reshape(x, {-1, 3}) : reshape(x, {-1, 8}));
      fusion.addOutput(annotated ? shard(out, all_, 0) : out);

      MultiDeviceExecutor exec(fusion, comm_);
      Counts expected{{CommunicationType::Allgather, 1}};
      if (annotated) {
        expected[CommunicationType::Scatter] = 1;
      }
      expectCommunications(exec, expected);
      std::vector<std::vector<int64_t>> shapes{{4, 6, 2}};
      if (!constant_shape) {
        shapes = {{4 * n_ - 1, 2, 4}, {2 * n_, 4, 4}, {n_ + 1, 1, 8}};
      }
      for (const std::vector<int64_t>& shape : shapes) {
        at::manual_seed(shape[0]);
        const at::Tensor fx = randn(shape);
        const at::Tensor got = exec.run({rowsOf(fx, n_, me_)}).at(0);
        const at::Tensor whole = at::relu(fx.reshape({-1, constant_shape ? 3 : 8}));
        const at::Tensor want = annotated ? rowsOf(whole, n_, me_) : whole;
        ASSERT_EQ(got.sizes(), want.sizes()) << at::IntArrayRef(shape);
        EXPECT_TRUE(at::equal(got, want)) << at::IntArrayRef(shape);
      }
    }
  }
}

// --- errors -----------------------------------------------------------------

// What an all-to-all would do (the sharded axis moves from 0 to 1 on the
// same mesh) is not implemented: the executor rejects the fusion, naming
// the expr and both shardings.
TEST_F(MultiDeviceExecutorTest, MovingTheShardedAxisIsRejected) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);
  fusion.addInput(x);
  TensorView* y = shard(set(x), all_, 1);
  fusion.addOutput(y);
  try {
    MultiDeviceExecutor exec(fusion, comm_);
    ADD_FAILURE() << "expected an error for an all-to-all; got the host program\n"
                  << exec.hostProgram().toString();
  } catch (const Error& error) {
    std::string what = error.what();
    EXPECT_NE(what.find("cannot lower the resharding expr"), std::string::npos) << what;
    EXPECT_NE(what.find("set"), std::string::npos) << what;
    EXPECT_NE(what.find(all_.toString()), std::string::npos) << what;
    EXPECT_NE(what.find("logical axis 0"), std::string::npos) << what;
    EXPECT_NE(what.find("logical axis 1"), std::string::npos) << what;
  }
}

TEST_F(MultiDeviceExecutorTest, ShardedSetBetweenMeshesOfDifferentSizesIsRejected) {
  if (n_ < 2) {
    GTEST_SKIP() << "needs meshes of different sizes: at least 2 ranks";
  }
  DeviceMesh one({0});
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = shard(makeContigTensor(2), all_, 0);
  fusion.addInput(x);
  TensorView* y = shard(set(x), one, 0);
  fusion.addOutput(y);
  try {
    MultiDeviceExecutor exec(fusion, comm_);
    ADD_FAILURE() << "expected an error; got the host program\n" << exec.hostProgram().toString();
  } catch (const Error& error) {
    std::string what = error.what();
    EXPECT_NE(what.find("cannot lower the resharding expr"), std::string::npos) << what;
    EXPECT_NE(what.find(all_.toString()), std::string::npos) << what;
    EXPECT_NE(what.find(one.toString()), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hostir
