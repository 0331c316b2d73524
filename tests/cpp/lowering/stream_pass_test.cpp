// The stream parallelization and buffer shrinking passes run directly on a
// container: hand-built programs and lowerSegmentsToHostIr output, before and
// after each pass.

#include <gtest/gtest.h>

#include "hostir/host_ir/passes/buffer_shrinking.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {
namespace {

using Strings = std::vector<std::string>;

const std::string kSyncLoop = "ForLoop{SetCurrentStream(worker),Synchronize(caller)}";

// A program built by hand in hic_: its top-level exprs are pushed one by one.
class StreamPassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  void push(TensorView* tv) {
    hic_->pushBackTopLevelExpr(tv->definition());
  }

  std::unique_ptr<HostIrContainer> hic_ = std::make_unique<HostIrContainer>();
  FusionGuard guard_{hic_.get()};
};

TEST_F(StreamPassTest, HandBuiltSingleSet) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(out);

  parallelizeStreams(*hic_);
  EXPECT_EQ(structureWithStreams(*hic_),
            (Strings{"GetCurrentStream", "Allocate", kSyncLoop, "SetCurrentStream(caller)",
                     "ForLoop{SetCurrentStream(worker),HirAliasSelect,HirAliasSelect,LoadStoreOp,"
                     "SetCurrentStream(caller),Synchronize(worker)}"}));
  std::vector<const ForLoop*> loops = topLevelLoops(*hic_);
  ASSERT_EQ(loops.size(), 2u);
  // The main loop iterates the output's Stream axis.
  EXPECT_EQ(loops[1]->iterDomain(), out->axis(0));
  expectMainLoopStreams(loops[1], callerStreamOf(hic_->topLevel()));

  // Nothing to shrink: the only buffer is an output.
  std::string before = hic_->toString();
  shrinkStreamBuffers(*hic_);
  EXPECT_EQ(hic_->toString(), before);

  at::Tensor t0 = at::randn({7, 3});
  expectProgramMatchesAten(*hic_, {t0}, {t0});
}

TEST_F(StreamPassTest, HandBuiltTwoSetsThenShrink) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(mid);
  push(out);

  parallelizeStreams(*hic_);
  const std::string main_loop =
      "ForLoop{SetCurrentStream(worker),HirAliasSelect,HirAliasSelect,LoadStoreOp,"
      "HirAliasSelect,LoadStoreOp,SetCurrentStream(caller),Synchronize(worker)}";
  EXPECT_EQ(structureWithStreams(*hic_),
            (Strings{"GetCurrentStream", "Allocate", "Allocate", kSyncLoop,
                     "SetCurrentStream(caller)", main_loop}));
  std::vector<const Allocate*> allocations = exprsOfKind<Allocate>(*hic_);
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_EQ(allocations[0]->buffer(), mid);  // in full before shrinking
  EXPECT_EQ(allocations[0]->toString().find("numberOfStreams"), std::string::npos);

  // The middle slice is written and read in the same iteration: one
  // HirAliasSelect of `mid`, reused by both ops.
  int mid_selects = 0;
  for (const HirAliasSelect* select : exprsOfKind<HirAliasSelect>(*hic_)) {
    mid_selects += select->in() == mid ? 1 : 0;
  }
  EXPECT_EQ(mid_selects, 1);

  at::Tensor t0 = at::randn({6, 4});
  expectProgramMatchesAten(*hic_, {t0}, {t0});

  shrinkStreamBuffers(*hic_);
  EXPECT_EQ(structure(*hic_).size(), 6u);  // same shape of program
  allocations = exprsOfKind<Allocate>(*hic_);
  ASSERT_EQ(allocations.size(), 2u);
  EXPECT_NE(allocations[0]->buffer(), mid);
  EXPECT_NE(allocations[0]->toString().find("size=( numberOfStreams * "), std::string::npos)
      << allocations[0]->toString();
  expectProgramMatchesAten(*hic_, {t0}, {t0});
}

TEST_F(StreamPassTest, HandBuiltSplitMatmul) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  hic_->addInput(a);
  hic_->addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 3, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(out);
  push(out);

  std::optional<StreamAxis> axis = findStreamAxis(out);
  ASSERT_TRUE(axis.has_value());
  EXPECT_EQ(axis->logical_pos, 0);
  EXPECT_NE(axis->chunk_size, nullptr);

  parallelizeStreams(*hic_);
  EXPECT_EQ(structureWithStreams(*hic_),
            (Strings{"GetCurrentStream", "Allocate", kSyncLoop, "SetCurrentStream(caller)",
                     "ForLoop{SetCurrentStream(worker),SliceOp,SliceOp,MatmulOp,"
                     "SetCurrentStream(caller),Synchronize(worker)}"}));
  // Three iterations whatever M is.
  std::vector<const ForLoop*> loops = topLevelLoops(*hic_);
  EXPECT_EQ(loops[1]->iterDomain(), out->axis(0));

  for (int64_t m : {9, 10, 4}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    at::Tensor t0 = at::randn({m, 5});
    at::Tensor t1 = at::randn({5, 6});
    for (int streams : streamCounts()) {
      HostIrEvaluator evaluator(hic_->clone(), {.number_of_streams = streams});
      std::vector<at::Tensor> outputs = evaluator.run({t0, t1});
      ASSERT_EQ(outputs.size(), 1u);
      EXPECT_TRUE(allClose(outputs[0], at::matmul(t0, t1), 1e-4, 1e-5));
    }
  }
}

TEST_F(StreamPassTest, HandBuiltStreamParallelInputIsRejected) {
  TensorView* in = makeContigTensor(2);
  in->axis(0)->parallelize(ParallelType::Stream);
  hic_->addInput(in);
  TensorView* out = set(in);
  hic_->addOutput(out);
  push(out);
  expectErrorContaining([&] { parallelizeStreams(*hic_); },
                        {"program input T", "has a Stream axis"});
}

TEST_F(StreamPassTest, NonStreamExprsAreLeftAlone) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* out = add(in, in);
  hic_->addOutput(out);
  push(out);
  parallelizeStreams(*hic_);
  shrinkStreamBuffers(*hic_);
  EXPECT_EQ(structure(*hic_), (Strings{"BinaryOp"}));
}

// One GetCurrentStream for the whole program, shared by every loop.
TEST_F(StreamPassTest, OneCallerStreamForSeveralLoops) {
  TensorView* in = makeContigTensor(2);
  hic_->addInput(in);
  TensorView* a = set(in);
  TensorView* b = add(a, a);
  TensorView* c = set(b);
  a->axis(0)->parallelize(ParallelType::Stream);
  c->axis(0)->parallelize(ParallelType::Stream);
  hic_->addOutput(c);
  push(a);
  push(b);
  push(c);
  parallelizeStreams(*hic_);
  EXPECT_EQ(exprsOfKind<GetCurrentStream>(*hic_).size(), 1u);
  const Stream* caller = callerStreamOf(hic_->topLevel());
  std::vector<const ForLoop*> loops = topLevelLoops(*hic_);
  ASSERT_EQ(loops.size(), 4u);
  expectMainLoopStreams(loops[1], caller);
  expectMainLoopStreams(loops[3], caller);
  at::Tensor t0 = at::randn({5, 3});
  expectProgramMatchesAten(*hic_, {t0}, {t0 + t0});
}

// ---- The same cases from lowerSegmentsToHostIr, pass by pass ----------------

class SegmentsThenPassTest : public ::testing::Test {
 protected:
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

TEST_F(SegmentsThenPassTest, SingleSet) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* out = set(in);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), (Strings{"LoadStoreOp"}));
  parallelizeStreams(*hic);
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", "ForLoop{SetCurrentStream,Synchronize}",
                     "SetCurrentStream",
                     "ForLoop{SetCurrentStream,HirAliasSelect,HirAliasSelect,LoadStoreOp,"
                     "SetCurrentStream,Synchronize}"}));
  at::Tensor t0 = at::randn({3, 8});
  expectProgramMatchesAten(*hic, {t0}, {t0});
}

TEST_F(SegmentsThenPassTest, TwoSets) {
  TensorView* in = makeContigTensor(2);
  fusion_.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  mid->axis(0)->parallelize(ParallelType::Stream);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), (Strings{"LoadStoreOp", "LoadStoreOp"}));
  parallelizeStreams(*hic);
  EXPECT_EQ(topLevelLoops(*hic).size(), 2u);
  EXPECT_EQ(exprsOfKind<LoadStoreOp>(*hic).size(), 2u);
  shrinkStreamBuffers(*hic);
  EXPECT_NE(exprsOfKind<Allocate>(*hic)[0]->toString().find("numberOfStreams"), std::string::npos);
  at::Tensor t0 = at::randn({9, 2});
  expectProgramMatchesAten(*hic, {t0}, {t0});
}

TEST_F(SegmentsThenPassTest, SplitMatmul) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  std::unique_ptr<HostIrContainer> hic = lowerSegmentsToHostIr(fusion_);
  EXPECT_EQ(structure(*hic), (Strings{"MatmulOp"}));
  parallelizeStreams(*hic);
  EXPECT_EQ(structure(*hic),
            (Strings{"GetCurrentStream", "Allocate", "ForLoop{SetCurrentStream,Synchronize}",
                     "SetCurrentStream",
                     "ForLoop{SetCurrentStream,SliceOp,SliceOp,MatmulOp,SetCurrentStream,"
                     "Synchronize}"}));
  at::Tensor t0 = at::randn({10, 6});
  at::Tensor t1 = at::randn({6, 3});
  expectProgramMatchesAten(*hic, {t0, t1}, {at::matmul(t0, t1)});
}

}  // namespace
}  // namespace hostir::test
