// End-to-end lowering of fusions with Stream axes (issue 4): each test
// builds a fusion, lowers it with lowerToHostIr / HostExecutor, asserts the
// host program's structure (node kinds, loop nesting, streams) and compares
// the results against ATen with 1, 2 and 4 streams.

#include <gtest/gtest.h>

#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

using Strings = std::vector<std::string>;

// The structure a single stream-parallel op with `slices` HirAliasSelects
// (inputs and output) and node kind `op` lowers to.
Strings singleLoopProgram(int slices, const std::string& op, const Strings& before = {}) {
  std::string body = "ForLoop{SetCurrentStream,";
  for (int i = 0; i < slices; ++i) {
    body += "HirAliasSelect,";
  }
  body += op + ",SetCurrentStream,Synchronize}";
  Strings out{"GetCurrentStream"};
  out.insert(out.end(), before.begin(), before.end());
  Strings rest{"Allocate", "ForLoop{SetCurrentStream,Synchronize}", "SetCurrentStream", body};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

class StreamLoweringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

TEST_F(StreamLoweringTest, SingleSetOuterAxis) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "LoadStoreOp"));
  EXPECT_EQ(
      structureWithStreams(*hic),
      (Strings{"GetCurrentStream", "Allocate",
               "ForLoop{SetCurrentStream(worker),Synchronize(caller)}", "SetCurrentStream(caller)",
               "ForLoop{SetCurrentStream(worker),HirAliasSelect,HirAliasSelect,LoadStoreOp,"
               "SetCurrentStream(caller),Synchronize(worker)}"}));
  const Stream* caller = callerStreamOf(hic->topLevel());
  ASSERT_NE(caller, nullptr);
  std::vector<const ForLoop*> loops = topLevelLoops(*hic);
  ASSERT_EQ(loops.size(), 2u);
  // The sync loop runs min(extent, numberOfStreams) iterations.
  EXPECT_NE(loops[0]->stop()->toInlineString().find("numberOfStreams"), std::string::npos);
  expectMainLoopStreams(loops[1], caller);
  // Both slices are taken at StreamIdx along axis 0; the whole output is
  // allocated before the loops.
  for (const HirAliasSelect* select : exprsOfKind<HirAliasSelect>(*hic)) {
    EXPECT_EQ(select->axis(), 0);
    EXPECT_EQ(select->index()->toInlineString(), "StreamIdx");
  }
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_TRUE(hic->isOutput(allocations[0]->buffer()));

  at::Tensor t0 = at::randn({6, 5});
  expectMatchesAten(fusion_, {t0}, {t0});
}

TEST_F(StreamLoweringTest, SingleSetInnerAxis) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "LoadStoreOp"));
  for (const HirAliasSelect* select : exprsOfKind<HirAliasSelect>(*hic)) {
    EXPECT_EQ(select->axis(), 1);
  }
  at::Tensor t0 = at::randn({3, 5, 4});
  expectMatchesAten(fusion_, {t0}, {t0});
}

TEST_F(StreamLoweringTest, BinaryOpWithBroadcastOperand) {
  TensorView* x = makeContigTensor(2);
  TensorView* row = makeContigTensor(1);
  TensorView* col = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(row);
  fusion_.addInput(col);
  // row broadcast over the stream axis; col along it.
  TensorView* y = add(x, broadcast(row, {true, false}));
  TensorView* out = mul(y, broadcast(col, {false, true}));
  y->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // The forwarded broadcasts run whole before the loop; both binary ops share
  // one loop; `y` lives only in the loop, so it is a ring.
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "BroadcastOp", "BroadcastOp", "Allocate", "Allocate",
                     "ForLoop{SetCurrentStream,Synchronize}", "SetCurrentStream",
                     "ForLoop{SetCurrentStream,HirAliasSelect,HirAliasSelect,HirAliasSelect,"
                     "BinaryOp,HirAliasSelect,HirAliasSelect,BinaryOp,SetCurrentStream,"
                     "Synchronize}"}));

  at::Tensor t0 = at::randn({6, 5});
  at::Tensor t1 = at::randn({5});
  at::Tensor t2 = at::randn({6});
  expectMatchesAten(fusion_, {t0, t1, t2}, {(t0 + t1.unsqueeze(0)) * t2.unsqueeze(1)});
}

TEST_F(StreamLoweringTest, BinaryOpWithScalars) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* s = scalarInput(DataType::Double);
  TensorView* out = mul(add(x, s), 2.0);
  out->definition()->input(0)->as<TensorView>()->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", "Allocate",
                     "ForLoop{SetCurrentStream,Synchronize}", "SetCurrentStream",
                     "ForLoop{SetCurrentStream,HirAliasSelect,HirAliasSelect,BinaryOp,"
                     "HirAliasSelect,BinaryOp,SetCurrentStream,Synchronize}"}));
  at::Tensor t0 = at::randn({4, 7});
  expectMatchesAtenValues(fusion_, {t0, 0.5}, {(t0 + 0.5) * 2.0});
}

TEST_F(StreamLoweringTest, TwoSetsShareOneLoopAndShrink) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(
      structureWithStreams(*hic),
      (Strings{"GetCurrentStream", "Allocate", "Allocate",
               "ForLoop{SetCurrentStream(worker),Synchronize(caller)}", "SetCurrentStream(caller)",
               "ForLoop{SetCurrentStream(worker),HirAliasSelect,HirAliasSelect,LoadStoreOp,"
               "HirAliasSelect,LoadStoreOp,SetCurrentStream(caller),Synchronize(worker)}"}));
  // The intermediate is a ring of numberOfStreams slices, indexed by
  // StreamIdx % numberOfStreams; the output is allocated in full.
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_NE(allocations[0]->toString().find("size=( numberOfStreams * "), std::string::npos)
      << allocations[0]->toString();
  EXPECT_FALSE(hic->isOutput(allocations[0]->buffer()));
  EXPECT_TRUE(hic->isOutput(allocations[1]->buffer()));
  EXPECT_EQ(allocations[1]->toString().find("numberOfStreams"), std::string::npos);
  int ring_selects = 0;
  for (const HirAliasSelect* select : exprsOfKind<HirAliasSelect>(*hic)) {
    if (select->in() == allocations[0]->buffer()) {
      ++ring_selects;
      EXPECT_EQ(select->index()->toInlineString(), "( StreamIdx % numberOfStreams )");
    }
  }
  EXPECT_EQ(ring_selects, 1);

  // More iterations (9) than streams: ring slots are reused.
  at::Tensor t0 = at::randn({9, 33});
  expectMatchesAten(fusion_, {t0}, {t0});
}

TEST_F(StreamLoweringTest, ThreeSetsMiddleNotStreamParallel) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = set(a);
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const std::string loop =
      "ForLoop{SetCurrentStream(worker),HirAliasSelect,HirAliasSelect,LoadStoreOp,"
      "SetCurrentStream(caller),Synchronize(worker)}";
  const std::string sync = "ForLoop{SetCurrentStream(worker),Synchronize(caller)}";
  EXPECT_EQ(structureWithStreams(*hic),
            (Strings{"GetCurrentStream", "Allocate", sync, "SetCurrentStream(caller)", loop,
                     "LoadStoreOp", "Allocate", sync, "SetCurrentStream(caller)", loop}));
  // `a` is read by the op between the loops: allocated in full.
  for (const Allocate* allocate : exprsOfKind<Allocate>(*hic)) {
    EXPECT_EQ(allocate->toString().find("numberOfStreams"), std::string::npos);
  }
  at::Tensor t0 = at::randn({5, 8});
  expectMatchesAten(fusion_, {t0}, {t0});
}

TEST_F(StreamLoweringTest, ReductionOverNonStreamAxis) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = sum(in, {2});
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "ReductionOp"));
  at::Tensor t0 = at::randn({4, 3, 10});
  expectMatchesAten(fusion_, {t0}, {t0.sum({2})});
}

TEST_F(StreamLoweringTest, ReductionOverMiddleAxisStreamOnLast) {
  TensorView* in = makeContigTensor(3);
  fusion_.addInput(in);
  TensorView* out = sum(in, {1});
  out->axis(-1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "ReductionOp"));
  at::Tensor t0 = at::randn({4, 3, 5});
  expectMatchesAten(fusion_, {t0}, {t0.sum({1})});
}

TEST_F(StreamLoweringTest, MatmulStreamOnM) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // A is sliced by rows, B used whole.
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "MatmulOp"));
  std::vector<const HirAliasSelect*> selects = exprsOfKind<HirAliasSelect>(*hic);
  ASSERT_EQ(selects.size(), 2u);
  EXPECT_EQ(selects[0]->in(), hic->inputs()[0]);
  at::Tensor t0 = at::randn({6, 8});
  at::Tensor t1 = at::randn({8, 5});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

TEST_F(StreamLoweringTest, MatmulStreamOnN) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(1)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // B is sliced by columns (axis 1), A used whole.
  EXPECT_EQ(structure(*hic), singleLoopProgram(2, "MatmulOp"));
  std::vector<const HirAliasSelect*> selects = exprsOfKind<HirAliasSelect>(*hic);
  ASSERT_EQ(selects.size(), 2u);
  EXPECT_EQ(selects[0]->in(), hic->inputs()[1]);
  EXPECT_EQ(selects[0]->axis(), 1);
  EXPECT_EQ(selects[1]->axis(), 1);
  at::Tensor t0 = at::randn({6, 8});
  at::Tensor t1 = at::randn({8, 5});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

TEST_F(StreamLoweringTest, BatchedMatmulStreamOnBatch) {
  TensorView* a = makeContigTensor(3);
  TensorView* b = makeContigTensor(3);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), singleLoopProgram(3, "MatmulOp"));
  at::Tensor t0 = at::randn({5, 4, 8});
  at::Tensor t1 = at::randn({5, 8, 3});
  expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
}

TEST_F(StreamLoweringTest, SplitMatmulChunks) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  // Chunks are SliceOps (narrow) of A's and the output's rows.
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", "ForLoop{SetCurrentStream,Synchronize}",
                     "SetCurrentStream",
                     "ForLoop{SetCurrentStream,SliceOp,SliceOp,MatmulOp,SetCurrentStream,"
                     "Synchronize}"}));
  for (int64_t m : {16, 14, 5, 3}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    at::Tensor t0 = at::randn({m, 8});
    at::Tensor t1 = at::randn({8, 6});
    expectMatchesAten(fusion_, {t0, t1}, {at::matmul(t0, t1)}, 1e-4, 1e-5);
  }
}

// Split stream axis on a set: 4 chunks of ceilDiv(extent, 4) rows.
TEST_F(StreamLoweringTest, SplitStreamAxisDivisibleAndNot) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", "ForLoop{SetCurrentStream,Synchronize}",
                     "SetCurrentStream",
                     "ForLoop{SetCurrentStream,SliceOp,SliceOp,LoadStoreOp,SetCurrentStream,"
                     "Synchronize}"}));
  // 8: 2+2+2+2. 10: 3+3+3+1. 5: 2+2+1+0 (the last chunk is empty). 3: 1+1+1+0.
  for (int64_t rows : {8, 10, 5, 3, 1}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 7});
    expectMatchesAten(fusion_, {t0}, {t0});
  }
}

TEST_F(StreamLoweringTest, SplitStreamAxisBufferShrinking) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = abs(set(in));
  TensorView* out = add(mid, 1.0);
  for (TensorView* tv : {mid->definition()->input(0)->as<TensorView>(), mid, out}) {
    tv->split(0, 3, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  int rings = 0;
  for (const Allocate* allocate : allocations) {
    if (allocate->toString().find("size=( ( numberOfStreams * ") != std::string::npos ||
        allocate->toString().find("size=( numberOfStreams * ") != std::string::npos) {
      ++rings;
    }
  }
  // set -> abs -> add: both intermediates are rings; the output is whole.
  EXPECT_EQ(rings, 2) << hic->toString();
  ASSERT_EQ(topLevelLoops(*hic).size(), 2u);
  for (int64_t rows : {12, 10, 7, 2, 1}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 5});
    expectMatchesAten(fusion_, {t0}, {at::abs(t0) + 1.0});
  }
}

// 4 chunks of 5 rows: 2+2+1+0, the last chunk starting past the end.
TEST_F(StreamLoweringTest, SplitStreamAxisBufferShrinkingChunkPastTheEnd) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  for (TensorView* tv : {mid, out}) {
    tv->split(0, 4, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(out);
  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_NE(exprsOfKind<Allocate>(*hic)[0]->toString().find("numberOfStreams"), std::string::npos);
  for (int64_t rows : {5, 6, 9, 13}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    at::Tensor t0 = at::randn({rows, 3});
    expectMatchesAten(fusion_, {t0}, {t0});
  }
}

TEST_F(StreamLoweringTest, BufferShrinkingWithManyIterations) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = mul(a, 3.0);
  TensorView* c = add(b, a);
  for (TensorView* tv : {a, b, c}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic);
  ASSERT_EQ(allocations.size(), 3u);
  EXPECT_NE(allocations[0]->toString().find("size=( numberOfStreams * "), std::string::npos);
  EXPECT_NE(allocations[1]->toString().find("size=( numberOfStreams * "), std::string::npos);
  EXPECT_EQ(allocations[2]->toString().find("numberOfStreams"), std::string::npos);
  ASSERT_EQ(topLevelLoops(*hic).size(), 2u);
  // 37 iterations on at most 4 ring slots.
  at::Tensor t0 = at::randn({37, 65});
  expectMatchesAten(fusion_, {t0}, {t0 * 3.0 + t0});
}

TEST_F(StreamLoweringTest, PostOnStreamSegmentBetweenStreamLoops) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = exp(abs(a));  // not host-lowerable: one PostOnStream segment
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  const std::string loop =
      "ForLoop{SetCurrentStream,HirAliasSelect,HirAliasSelect,LoadStoreOp,SetCurrentStream,"
      "Synchronize}";
  const std::string sync = "ForLoop{SetCurrentStream,Synchronize}";
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", sync, "SetCurrentStream", loop, "PostOnStream",
                     "Allocate", sync, "SetCurrentStream", loop}));
  std::vector<const PostOnStream*> posts = exprsOfKind<PostOnStream>(*hic);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0]->hostUnit()->fusion()->exprs().size(), 2u);
  at::Tensor t0 = at::randn({6, 9});
  expectMatchesAten(fusion_, {t0}, {at::exp(at::abs(t0))});
}

// A stream-parallel unary chain: its ops run in the loop, one by one.
TEST_F(StreamLoweringTest, StreamParallelUnaryChain) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = abs(a);
  TensorView* c = exp(b);
  for (TensorView* tv : {a, b, c}) {
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion_.addOutput(c);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(exprsOfKind<PostOnStream>(*hic).size(), 0u);
  EXPECT_EQ(topLevelLoops(*hic).size(), 2u) << hic->toString();
  EXPECT_EQ(exprsOfKind<UnaryOp>(*hic).size(), 2u);
  at::Tensor t0 = at::randn({5, 9});
  expectMatchesAten(fusion_, {t0}, {at::exp(at::abs(t0))});
}

// Stream loops over tensors of different extents do not fuse.
TEST_F(StreamLoweringTest, LoopsOverDifferentExtentsStaySeparate) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = set(y);
  a->axis(0)->parallelize(ParallelType::Stream);
  b->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(a);
  fusion_.addOutput(b);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(topLevelLoops(*hic).size(), 4u);  // a sync loop and a main loop each
  at::Tensor t0 = at::randn({3, 4});
  at::Tensor t1 = at::randn({5, 4});
  expectMatchesAten(fusion_, {t0, t1}, {t0, t1});
}

// Different chunk counts on the same axis do not fuse either.
TEST_F(StreamLoweringTest, DifferentChunkCountsStaySeparate) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* a = set(in);
  TensorView* b = set(a);
  a->split(0, 2, /*inner_split=*/false);
  a->axis(0)->parallelize(ParallelType::Stream);
  b->split(0, 4, /*inner_split=*/false);
  b->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(b);

  std::unique_ptr<HostIrContainer> hic = lowerToHostIr(fusion_);
  EXPECT_EQ(topLevelLoops(*hic).size(), 4u);
  at::Tensor t0 = at::randn({9, 4});
  expectMatchesAten(fusion_, {t0}, {t0});
}

}  // namespace
}  // namespace hostir::test
