// Multi-rank reliability (issue 11), run by every rank of a job started with
// `hostir launch -n K` (K = 2, 4): ranks that disagree on shard sizes, on the
// program or on the number of streams get a hostir::Error on every rank,
// naming the tensor, the ranks and the sizes, before any collective of the
// program; a collective slower than the stream timeout is not cut short by
// it. Every rank runs every test in the same order; tests that need two
// ranks skip on one (the same decision on every rank).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/streams/stream_timeout.h"

namespace hostir {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class MultiRankReliabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (communicator_.size() < 2) {
      GTEST_SKIP() << "needs at least two ranks";
    }
  }

  // x [S, H] sharded on its rows over every rank, allgathered, then relu
  // (or neg: a different program) of the whole tensor.
  static void buildAllgather(Fusion& fusion, int64_t ranks, bool use_neg = false) {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(ranks);
    TensorView* x = makeContigTensor(2);
    fusion.addInput(x);
    x->setDeviceMesh(mesh);
    shardLogicalAxis(x, 0, ParallelType::DIDx, /*via_outer_split=*/false);
    TensorView* gathered = set(x);
    gathered->setDeviceMesh(mesh);
    TensorView* out = use_neg ? neg(gathered) : relu(gathered);
    out->setDeviceMesh(mesh);
    fusion.addOutput(out);
  }

  // Expects `body` to throw hostir::Error containing every part.
  static void expectErrorOnThisRank(const std::function<void()>& body,
                                    const std::vector<std::string>& parts) {
    try {
      body();
      ADD_FAILURE() << "expected a hostir::Error";
    } catch (const Error& error) {
      for (const std::string& part : parts) {
        EXPECT_TRUE(contains(error.what(), part)) << "missing \"" << part << "\" in\n"
                                                  << error.what();
      }
    }
  }

  Communicator& communicator_ = Communicator::getInstance();
  const int64_t me_ = communicator_.deviceId();
};

// torch.chunk's pieces of 4n - 1 rows (issue 37 item 1): the last rank
// holds 3, the others 4; the allgather puts them back together on every
// rank, and an even shape afterwards still runs on the same executor.
TEST_F(MultiRankReliabilityTest, UnevenShardsOfAnAllgatherRunAsTorchChunkPieces) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size());
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t rows : {4 * communicator_.size() - 1, int64_t{1}, 4 * communicator_.size()}) {
    at::manual_seed(rows);
    at::Tensor full = at::randn({rows, 5});
    std::vector<at::Tensor> pieces = full.chunk(communicator_.size(), 0);
    at::Tensor mine =
        me_ < static_cast<int64_t>(pieces.size()) ? pieces[me_].contiguous() : at::empty({0, 5});
    std::vector<at::Tensor> outs = executor.run({mine});
    EXPECT_TRUE(at::allclose(outs[0], at::relu(full))) << rows << " rows";
  }
}

// Ranks that disagree on the global extent (issue 37 item 5): rank 0 holds
// 4,095 rows and the others 4,096, which torch.chunk gives for no extent
// (its first pieces are the larger), and a replicated input of 4,095 rows
// on rank 0 and 4,096 elsewhere. Every rank raises, naming the sizes.
TEST_F(MultiRankReliabilityTest, RanksDisagreeingOnTheGlobalExtentRaiseOnEveryRank) {
  const int64_t n = communicator_.size();
  if (n < 2) {
    GTEST_SKIP() << "one rank agrees with itself";
  }
  const int64_t rows = me_ == 0 ? 4095 : 4096;
  Fusion sharded;
  buildAllgather(sharded, n);
  MultiDeviceExecutor sharded_executor(sharded, communicator_);
  expectErrorOnThisRank(
      [&] {
        sharded_executor.run({at::zeros({rows, 2})});
      },
      {"uneven shards", "rank 0 holds 4095", "rank 1 holds 4096", "no torch.chunk layout",
       "disagree on the global extent"});
  Fusion replicated;
  {
    FusionGuard guard(&replicated);
    TensorView* x = shard(makeContigTensor(2), DeviceMesh::createForNumDevices(n), -1);
    replicated.addInput(x);
    replicated.addOutput(relu(x));
  }
  MultiDeviceExecutor replicated_executor(replicated, communicator_);
  expectErrorOnThisRank(
      [&] {
        replicated_executor.run({at::zeros({rows, 2})});
      },
      {"size mismatch across ranks", "rank 0 holds 4095", "rank 1 holds 4096"});
}

// A tensor sharded from a replicated one (a scatter) on an axis its devices
// do not divide: every rank gets torch.chunk's piece (issue 37 item 2; it
// was refused before, "uneven shards: ... pad the axis"), and even shapes
// still run on the same executor.
TEST_F(MultiRankReliabilityTest, UnevenScatterOfAReplicatedTensorRunsAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, -1);
    fusion.addInput(x);
    fusion.addOutput(shard(set(x), mesh, 0));
  }
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t rows : {2 * n + 1, int64_t{1}, 2 * n}) {
    at::manual_seed(rows);
    at::Tensor full = at::randn({rows, 4});
    const RowChunk mine = rowChunk(rows, n, me_);
    std::vector<at::Tensor> outs = executor.run({full});
    EXPECT_TRUE(at::equal(outs[0], full.narrow(0, mine.start, mine.rows))) << rows << " rows";
  }
}

// A reduction's output sharded on rows its devices do not divide: the
// reduce-scatter leaves each rank torch.chunk's piece (issue 37 item 1).
TEST_F(MultiRankReliabilityTest, UnevenReduceScatterRunsAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, 1);  // [R, C], C sharded
    fusion.addInput(x);
    // Summing the sharded C with the rows sharded: a reduce-scatter of R.
    fusion.addOutput(shard(sum(x, {1}), mesh, 0));
  }
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t rows : {2 * n + 1, 2 * n}) {
    at::manual_seed(rows);
    at::Tensor full = at::randn({rows, 2 * n});
    std::vector<at::Tensor> outs = executor.run({full.chunk(n, 1)[me_].contiguous()});
    const RowChunk piece = rowChunk(rows, n, me_);
    EXPECT_TRUE(at::allclose(outs[0], full.sum(1).narrow(0, piece.start, piece.rows), 1e-5, 1e-5))
        << rows;
  }
}

// A tensor sharded unevenly, gathered to device 0 and scattered back from
// it (issue 37 item 2): device 0 gets the whole, every rank torch.chunk's
// piece; an even shape afterwards runs on the same executor. Before, both
// were refused ("exchanges equal blocks only").
TEST_F(MultiRankReliabilityTest, UnevenGatherAndScatterRunAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    DeviceMesh first({0});
    TensorView* x = shard(makeContigTensor(2), mesh, 0);
    fusion.addInput(x);
    TensorView* gathered = shard(set(x), first);  // a Gather to device 0
    TensorView* doubled = shard(mul(gathered, 2.0), first);
    fusion.addOutput(doubled);
    fusion.addOutput(shard(set(doubled), mesh, 0));  // a Scatter from device 0
  }
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t rows : {2 * n, 2 * n + 1, int64_t{1}, 4 * n - 1}) {
    at::manual_seed(rows);
    at::Tensor full = at::randn({rows, 3});
    const RowChunk mine = rowChunk(rows, n, me_);
    std::vector<at::Tensor> outs =
        executor.run({full.narrow(0, mine.start, mine.rows).contiguous()});
    if (me_ == 0) {
      EXPECT_TRUE(at::equal(outs[0], full * 2.0)) << rows << " rows";
    } else {
      EXPECT_FALSE(outs[0].defined()) << rows << " rows";
    }
    EXPECT_TRUE(at::equal(outs[1], (full * 2.0).narrow(0, mine.start, mine.rows)))
        << rows << " rows";
  }
}

// The pipelined loop (allgather of row chunks before a linear) with
// torch.chunk layouts (issue 37 item 1): every rank cuts its chunks from the
// largest shard, the short ones from a zero-padded copy, and the gathered
// rows are the first n of [devices * largest shard]. 4n - 1 rows (the last
// rank short by one), 1 row (every rank but the first empty), n + 1, then
// an even shape on the same executor. Before, every rank raised "uneven
// shards: ... Stream chunks".
TEST_F(MultiRankReliabilityTest, UnevenShardsOfAPipelinedLoopRunAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, 0, ParallelType::DIDx, true);  // [S, H]
    TensorView* w = shard(makeContigTensor(2), mesh, -1);                           // [F, H]
    fusion.addInput(x);
    fusion.addInput(w);
    TensorView* h = shard(linear(x, w), mesh, -1);
    h->split(0, 3, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
    fusion.addOutput(h);
    fusion.addOutput(shard(relu(h), mesh, -1));
  }
  MultiDeviceExecutor executor(fusion, communicator_, {.number_of_streams = 2});
  for (int64_t rows : {4 * n - 1, int64_t{1}, n + 1, 4 * n}) {
    at::manual_seed(rows);
    at::Tensor x = at::randn({rows, 8});
    at::Tensor w = at::randn({6, 8});
    const RowChunk mine = rowChunk(rows, n, me_);
    std::vector<at::Tensor> outs =
        executor.run({x.narrow(0, mine.start, mine.rows).contiguous(), w});
    at::Tensor h = at::linear(x, w);
    EXPECT_TRUE(at::allclose(outs[0], h, 1e-5, 1e-5)) << rows << " rows";
    EXPECT_TRUE(at::allclose(outs[1], at::relu(h), 1e-5, 1e-5)) << rows << " rows";
  }
}

// Several GEMMs of one allgathered tensor, pipelined with its allgather
// (the attention's Q, K and V projections), with torch.chunk layouts: each
// GEMM's output is the first n rows of a buffer of every device's largest
// shard.
TEST_F(MultiRankReliabilityTest, UnevenShardsOfPipelinedGatheredGemmsRunAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, 0);  // [S, H]
    TensorView* w1 = shard(makeContigTensor(2), mesh, -1);
    TensorView* w2 = shard(makeContigTensor(2), mesh, -1);
    fusion.addInput(x);
    fusion.addInput(w1);
    fusion.addInput(w2);
    TensorView* gathered = shard(set(x), mesh, -1);
    for (TensorView* w : {w1, w2}) {
      TensorView* out = shard(linear(gathered, w), mesh, -1);
      out->split(0, 2, /*inner_split=*/false);
      out->axis(0)->parallelize(ParallelType::Stream);
      fusion.addOutput(out);
    }
  }
  MultiDeviceExecutor executor(fusion, communicator_, {.number_of_streams = 2});
  for (int64_t rows : {4 * n - 1, int64_t{1}, 2 * n}) {
    at::manual_seed(rows);
    at::Tensor x = at::randn({rows, 8});
    at::Tensor w1 = at::randn({5, 8});
    at::Tensor w2 = at::randn({3, 8});
    const RowChunk mine = rowChunk(rows, n, me_);
    std::vector<at::Tensor> outs =
        executor.run({x.narrow(0, mine.start, mine.rows).contiguous(), w1, w2});
    EXPECT_TRUE(at::allclose(outs[0], at::linear(x, w1), 1e-5, 1e-5)) << rows << " rows";
    EXPECT_TRUE(at::allclose(outs[1], at::linear(x, w2), 1e-5, 1e-5)) << rows << " rows";
  }
}

// A Stream split that no pipelined allgather + GEMM cuts, read by a
// collective: chunks of the rows reduce-scattered as they are computed
// (the attention's sum over the heads), onto rows that need not split
// evenly (torch.chunk: the last ranks hold fewer, or none). Every rank's
// chunks are cut from the whole rows and every member's rows sit in a
// padded [ranks, ceilDiv(R, ranks), ...] buffer; the rows the last rank
// lacks are reduce-scattered after the loop. Raised "uneven shards" on
// every rank before.
TEST_F(MultiRankReliabilityTest, UnevenShardsOfAChunkedReduceScatterRunAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, 1);  // [R, C], C sharded
    fusion.addInput(x);
    TensorView* y = shard(relu(x), mesh, 1);
    y->split(0, 3, /*inner_split=*/false);
    y->axis(0)->parallelize(ParallelType::Stream);
    fusion.addOutput(shard(sum(y, {1}), mesh, 0));  // a reduce-scatter of R
  }
  MultiDeviceExecutor executor(fusion, communicator_, {.number_of_streams = 2});
  for (int64_t rows : {4 * n - 1, int64_t{1}, n + 1, 2 * n - 1, 4 * n}) {
    at::manual_seed(rows);
    at::Tensor x = at::randn({rows, 2 * n});
    std::vector<at::Tensor> outs = executor.run({x.chunk(n, 1)[me_].contiguous()});
    const RowChunk mine = rowChunk(rows, n, me_);
    at::Tensor want = at::relu(x).sum(1).narrow(0, mine.start, mine.rows);
    EXPECT_EQ(outs[0].sizes(), want.sizes()) << rows << " rows";
    EXPECT_TRUE(at::allclose(outs[0], want, 1e-5, 1e-5)) << rows << " rows";
  }
}

// A reshape of an uneven tensor that keeps the sharded rows outermost ([S,
// H] sharded on S viewed [S, heads, hd], as an attention splits its heads)
// runs: every device's rows are whole rows of both shapes.
TEST_F(MultiRankReliabilityTest, UnevenShardsOfAReshapedTensorRunAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    TensorView* x = shard(makeContigTensor(2), mesh, 0);  // [S, 8], S sharded
    fusion.addInput(x);
    fusion.addOutput(shard(relu(reshape(x, {-1, 2, 4})), mesh, 0));
  }
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t rows : {4 * n - 1, int64_t{1}, n + 1, 4 * n}) {
    at::Tensor x = at::randn({rows, 8});
    const RowChunk mine = rowChunk(rows, n, me_);
    std::vector<at::Tensor> outs = executor.run({x.narrow(0, mine.start, mine.rows).contiguous()});
    at::Tensor want = at::relu(x.view({-1, 2, 4})).narrow(0, mine.start, mine.rows);
    EXPECT_EQ(outs[0].sizes(), want.sizes()) << rows << " rows";
    EXPECT_TRUE(at::allclose(outs[0], want)) << rows << " rows";
  }
}

// A reshape that shards an axis it makes (x [S, 5] flattened into [5S]
// sharded over the devices) runs as sharding propagation lowers it, from x
// sharded on S or replicated: x gathered if sharded, reshaped whole on every
// device, each keeping its torch.chunk piece of [5S], for S the devices
// divide or not. Before, the reshape ran on the whole (or gathered) x into
// the device's local shape and failed even for even sizes ("reshape: ...
// has 28 elements but the shape [14] ..."), and an uneven S was refused
// ("uneven shards: ... it is reshaped by ...").
TEST_F(MultiRankReliabilityTest, AReshapeShardingAnAxisItMakesRunsAsTorchChunkPieces) {
  const int64_t n = communicator_.size();
  for (const bool x_sharded : {true, false}) {
    Fusion fusion;
    {
      FusionGuard guard(&fusion);
      DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
      TensorView* x = shard(makeContigTensor(2), mesh, x_sharded ? 0 : -1);  // [S, 5]
      fusion.addInput(x);
      fusion.addOutput(shard(relu(shard(reshape(x, {-1}), mesh, 0)), mesh, 0));
    }
    MultiDeviceExecutor executor(fusion, communicator_);
    for (int64_t rows : {4 * n - 1, int64_t{1}, n + 1, 4 * n}) {
      at::manual_seed(rows);  // the same whole tensor on every rank
      const at::Tensor x = at::randn({rows, 5});
      const RowChunk mine = rowChunk(rows, n, me_);
      std::vector<at::Tensor> outs =
          executor.run({x_sharded ? x.narrow(0, mine.start, mine.rows).contiguous() : x});
      const RowChunk out_rows = rowChunk(5 * rows, n, me_);
      const at::Tensor want = at::relu(x.view({-1})).narrow(0, out_rows.start, out_rows.rows);
      EXPECT_EQ(outs[0].sizes(), want.sizes()) << rows << " rows, x sharded: " << x_sharded;
      EXPECT_TRUE(at::equal(outs[0], want)) << rows << " rows, x sharded: " << x_sharded;
    }
  }
}

// A tensor on a one-device mesh that carries a DIDx axis (sharded over 1
// device) cannot be the other side of a move from (or to) a sharded tensor on
// the full mesh: both sides look sharded, and the collectives size their
// buffers from the DIDx axes. Every rank refuses the program when it builds
// its executor, naming the mesh and what to write instead; written so (the
// one-device tensor replicated), the Gather onto device 0 and the Scatter
// from it run.
TEST_F(MultiRankReliabilityTest, AOneDeviceMeshWithADidAxisBesideAShardedMeshIsRefusedOnEveryRank) {
  const int64_t n = communicator_.size();
  for (const bool onto : {true, false}) {
    for (const bool replicated : {false, true}) {
      Fusion fusion;
      {
        FusionGuard guard(&fusion);
        DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
        DeviceMesh first({0});
        TensorView* x =
            shard(makeContigTensor(2), onto ? mesh : first, onto || !replicated ? 0 : -1);
        fusion.addInput(x);
        TensorView* y = set(x);
        fusion.addOutput(shard(y, onto ? first : mesh, !onto || !replicated ? 0 : -1));
      }
      const std::string what =
          std::string(onto ? "onto" : "from") + (replicated ? ", replicated" : "");
      if (!replicated) {
        expectErrorOnThisRank([&] { MultiDeviceExecutor executor(fusion, communicator_); },
                              {"cannot lower the resharding expr", "the one-device mesh",
                               std::string("this move ") + (onto ? "onto" : "from") +
                                   " that device is a " + (onto ? "Gather" : "Scatter"),
                               "declare the one-device tensor replicated (no DIDx axis)"});
        continue;
      }
      MultiDeviceExecutor executor(fusion, communicator_);
      at::manual_seed(7);  // the same whole tensor on every rank
      const at::Tensor x = at::randn({2 * n, 3});
      const at::Tensor mine = x.narrow(0, 2 * me_, 2).contiguous();
      std::vector<at::Tensor> outs = executor.run({onto ? mine : (me_ == 0 ? x : at::Tensor())});
      if (onto) {
        ASSERT_EQ(outs[0].defined(), me_ == 0) << what;
        EXPECT_TRUE(me_ != 0 || at::equal(outs[0], x)) << what;
      } else {
        EXPECT_TRUE(at::equal(outs[0], mine)) << what;
      }
    }
  }
}

// Found by the sharded fuzzer with Stream axes on computed values: a Stream
// axis on a tensor computed by an op stream parallelization does not
// support (here a permute) was rejected by the lowering only on the devices
// that compute it; the lowering of the others dropped that work first, so
// they built their executor and waited in the cross-rank check until the
// rejecting rank exited (or the communication timeout). The check now runs
// before other devices' work is dropped: every rank raises when it
// constructs its executor.
TEST_F(MultiRankReliabilityTest, AnUnsupportedStreamAxisIsRejectedOnEveryRank) {
  const int64_t n = communicator_.size();
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(n);
    DeviceMesh last({n - 1});
    TensorView* x = shard(makeContigTensor(2), mesh, 1);
    fusion.addInput(x);
    TensorView* gathered = shard(set(x), last, -1);  // a Gather onto the last device
    TensorView* y = shard(permute(gathered, {1, 0}), last, -1);
    y->split(0, 2, /*inner_split=*/false);
    y->axis(0)->parallelize(ParallelType::Stream);
    fusion.addOutput(y);
  }
  expectErrorOnThisRank(
      [&] {
        MultiDeviceExecutor executor(fusion, communicator_);
        executor.run({at::randn({4, 2})});
      },
      {"has a Stream axis but is computed by"});
}

TEST_F(MultiRankReliabilityTest, ReplicatedSizeMismatchRaisesOnEveryRank) {
  Fusion fusion;
  {
    FusionGuard guard(&fusion);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(communicator_.size());
    TensorView* x = makeContigTensor(2);
    TensorView* y = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addInput(y);
    x->setDeviceMesh(mesh);
    y->setDeviceMesh(mesh);
    shardLogicalAxis(x, 0, ParallelType::DIDx, false);
    TensorView* gathered = set(x);
    gathered->setDeviceMesh(mesh);
    TensorView* out = add(gathered, y);
    out->setDeviceMesh(mesh);
    fusion.addOutput(out);
  }
  MultiDeviceExecutor executor(fusion, communicator_);
  const int64_t n = communicator_.size();
  const int64_t cols = me_ == 0 ? 5 : 6;  // replicated y disagrees on its columns
  expectErrorOnThisRank(
      [&] {
        executor.run({at::randn({2, cols}), at::randn({2 * n, cols})});
      },
      {"size mismatch across ranks", "input 0", "axis 1", "rank 0 holds 5", "rank 1 holds 6"});
}

// Issue 22: ranks whose shape sequences diverge after a signature each has
// seen before (rank 0: 8, 16, 8 columns; the others 8, 16, 16) raise on
// every rank on that call, instead of entering the allgather with
// different sizes (a SIGABRT in Gloo or a wrong result before).
TEST_F(MultiRankReliabilityTest, RanksOutOfStepOnASeenSignatureRaiseOnEveryRank) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size());
  MultiDeviceExecutor executor(fusion, communicator_);
  for (int64_t cols : {8, 16}) {
    at::Tensor x = at::randn({2, cols});
    std::vector<at::Tensor> outputs = executor.run({x});
    EXPECT_EQ(outputs.at(0).size(0), 2 * communicator_.size());
  }
  const int64_t cols = me_ == 0 ? 8 : 16;
  expectErrorOnThisRank(
      [&] {
        executor.run({at::randn({2, cols})});
      },
      {"size mismatch across ranks", "input 0", "axis 1", "rank 0 holds 8", "rank 1 holds 16"});
}

// A rank that changes its shapes one call late (rank 0: 8, 16, 16; the
// others 8, 8, 16): every rank raises on the second call (before: rank 0
// waited out the communication timeout), and the third, on which the
// ranks agree again, runs.
TEST_F(MultiRankReliabilityTest, ARankChangingShapesOneCallLateRaisesOnEveryRankThenRecovers) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size());
  MultiDeviceExecutor executor(fusion, communicator_);
  executor.run({at::randn({2, 8})});
  const int64_t cols = me_ == 0 ? 16 : 8;
  expectErrorOnThisRank(
      [&] {
        executor.run({at::randn({2, cols})});
      },
      {"size mismatch across ranks", "axis 1", "rank 0 holds 16", "rank 1 holds 8"});
  at::Tensor x = at::full({2, 16}, static_cast<double>(me_ + 1));
  at::Tensor out = executor.run({x}).at(0);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2 * communicator_.size(), 16}));
  EXPECT_EQ(out[2 * communicator_.size() - 1][0].item<float>(),
            static_cast<float>(communicator_.size()));
}

TEST_F(MultiRankReliabilityTest, DifferentProgramsRaiseOnEveryRank) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size(), /*use_neg=*/me_ == 1);
  MultiDeviceExecutor executor(fusion, communicator_);
  expectErrorOnThisRank(
      [&] {
        executor.run({at::randn({2, 3})});
      },
      {"the ranks run different programs", "rank 0: ", "rank 1: "});
}

TEST_F(MultiRankReliabilityTest, DifferentNumbersOfStreamsRaiseOnEveryRank) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size());
  MultiDeviceExecutor executor(fusion, communicator_, {.number_of_streams = me_ == 0 ? 2 : 3});
  expectErrorOnThisRank(
      [&] {
        executor.run({at::randn({2, 3})});
      },
      {"different numbers of streams", "rank 0: 2", "rank 1: 3"});
}

// A collective that takes longer than the stream timeout (a peer arrives
// late) completes: the stream-side waits of a program that communicates
// are bounded by the stream timeout plus the communication timeout, and the
// collective's own timeout is the communication timeout.
TEST_F(MultiRankReliabilityTest, SlowCollectiveIsNotCutShortByTheStreamTimeout) {
  Fusion fusion;
  buildAllgather(fusion, communicator_.size());
  MultiDeviceExecutor executor(fusion, communicator_);
  at::manual_seed(5);
  at::Tensor full = at::randn({2 * communicator_.size(), 3});
  at::Tensor mine = full.chunk(communicator_.size(), 0)[me_].contiguous();
  executor.run({mine});  // the agreement check and the groups, before timing
  const runtime::WaitTimeout previous = runtime::defaultWaitTimeout();
  runtime::setDefaultWaitTimeout(std::chrono::milliseconds(200));
  if (me_ == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  std::vector<at::Tensor> outs;
  try {
    outs = executor.run({mine});
  } catch (const Error& error) {
    ADD_FAILURE() << error.what();
  }
  runtime::setDefaultWaitTimeout(previous);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(at::allclose(outs[0], at::relu(full)));
}

}  // namespace
}  // namespace hostir
