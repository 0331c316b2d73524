// insert_stream_splits (issue 36): an unannotated sharded fusion's
// allgathers that a pipelined loop can hide are found, a planner decides the
// chunk count, and the GEMMs get the Stream split a user would write.
#include <gtest/gtest.h>

#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_split_insertion.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"
#include "multidevice_test_utils.h"

namespace hostir::test {

namespace {

// Answers every chunkable candidate with `chunks` and remembers what it saw.
class FixedPlanner : public StreamSplitPlanner {
 public:
  explicit FixedPlanner(int64_t chunks) : chunks_(chunks) {}
  std::vector<StreamSplitDecision> decide(
      const std::vector<StreamSplitCandidate>& candidates) override {
    ++calls;
    seen = candidates;
    std::vector<StreamSplitDecision> decisions;
    for (const StreamSplitCandidate& candidate : candidates) {
      decisions.push_back({candidate.not_chunkable.empty() ? chunks_ : 1, "fixed by the test", {}});
    }
    return decisions;
  }
  int calls = 0;
  std::vector<StreamSplitCandidate> seen;

 private:
  int64_t chunks_;
};

TensorView* outerSharded(TensorView* tv, const DeviceMesh& mesh, int64_t axis) {
  return shard(tv, mesh, axis, ParallelType::DIDx, /*via_outer_split=*/true);
}

}  // namespace

class StreamSplitInsertionTest : public MultiDeviceTest {
 protected:
  // The sequence-parallel MLP block as a user writes it, without Stream
  // splits: x [T, H] sharded on tokens, w1 on ffn, w2 on ffn.
  TensorView* buildMlp() {
    TensorView* x = makeContigTensor(2);
    TensorView* w1 = makeContigTensor(2);
    TensorView* w2 = makeContigTensor(2);
    fusion_.addInput(x);
    fusion_.addInput(w1);
    fusion_.addInput(w2);
    outerSharded(x, mesh2_, 0);
    outerSharded(w1, mesh2_, 0);
    outerSharded(w2, mesh2_, 1);
    TensorView* h = outerSharded(linear(x, w1), mesh2_, 1);
    fusion_.addOutput(outerSharded(linear(gelu(h), w2), mesh2_, 0));
    return h;
  }

  void placeShardings() {
    validateShardings(&fusion_);
    propagateShardings(&fusion_);
  }
};

// The MLP's first linear allgathers x's rows: one candidate, whose tail (the
// GELU and the second linear, reduce-scattered) joins its chunks; that
// reduce-scatter is listed as the tail.
TEST_F(StreamSplitInsertionTest, FindsTheAllgatherOfTheMlpAndListsItsReduceScatter) {
  TensorView* h = buildMlp();
  placeShardings();
  std::vector<StreamSplitCandidate> candidates = findStreamSplitCandidates(fusion_);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_TRUE(candidates[0].not_chunkable.empty()) << candidates[0].not_chunkable;
  EXPECT_EQ(candidates[0].gemms, (std::vector<const Expr*>{h->definition()}));
  EXPECT_EQ(candidates[0].output_rows, (std::vector<int64_t>{0}));
  EXPECT_EQ(candidates[0].gathered, fusion_.inputs()[0]);
  EXPECT_EQ(candidates[0].tail_contraction, fusion_.outputs()[0]->definition());
  EXPECT_EQ(candidates[0].tail_pointwise_ops, 1);  // the GELU
  EXPECT_EQ(candidates[1].other, fusion_.outputs()[0]->definition());
  EXPECT_EQ(candidates[1].not_chunkable.rfind("the tail of the allgather of T0", 0), 0u)
      << candidates[1].not_chunkable;
  EXPECT_EQ(candidates[1].follows, std::optional<size_t>(0));
}

// The report calls the reduce-scatter of the tail pipelined, with its head's
// chunk count, when the head is (it said "not pipelined" before, though the
// lowering reduce-scatters it chunk by chunk in the head's loop), and not
// pipelined when the head is not.
TEST_F(StreamSplitInsertionTest, ATailIsReportedPipelinedWithItsHead) {
  buildMlp();
  placeShardings();
  const std::vector<StreamSplitCandidate> candidates = findStreamSplitCandidates(fusion_);
  ASSERT_EQ(candidates.size(), 2u);
  const std::string chunked =
      describeStreamSplits(candidates, {{4, "fixed", {}}, {1, "a tail", {}}});
  EXPECT_NE(chunked.find("\npipelined as a tail, 4 chunks: the collective of linear("),
            std::string::npos)
      << chunked;
  const std::string unchunked =
      describeStreamSplits(candidates, {{1, "fixed", {}}, {1, "a tail", {}}});
  EXPECT_NE(unchunked.find("\nnot pipelined: the collective of linear("), std::string::npos)
      << unchunked;
}

// With a planner that says 4 chunks, h gets the outer split a user writes,
// and the resharding linear is then the pipelined allgather + GEMM.
TEST_F(StreamSplitInsertionTest, SplitsTheGemmOutputAndTheLoweringPipelinesIt) {
  TensorView* h = buildMlp();
  placeShardings();
  FixedPlanner planner(4);
  {
    StreamSplitPlannerScope scope(&planner);
    insertStreamSplits(&fusion_);
  }
  EXPECT_EQ(planner.calls, 1);
  std::optional<StreamAxis> axis = findStreamAxis(h);
  ASSERT_TRUE(axis.has_value());
  EXPECT_EQ(axis->logical_pos, 0);
  ASSERT_NE(axis->chunk_size, nullptr);
  EXPECT_EQ(axis->loop_id->extent()->toInlineString(), "4");
  ASSERT_TRUE(isLoweredDirectly(h->definition()));
  EXPECT_EQ(classifyResharding(h->definition()).pattern, ReshardingPattern::PipelinedAllgatherGemm);
}

// The registered pass runs between propagate_shardings and
// insert_reshardings; without a planner (no sizes: `hostir lower`) nothing
// changes, and the linear is split into allgather + local GEMM as before.
TEST_F(StreamSplitInsertionTest, WithoutAPlannerTheFusionStaysAsWritten) {
  TensorView* h = buildMlp();
  runPresegmentationPasses(&fusion_);
  EXPECT_FALSE(hasStreamAxis(fusion_));
  EXPECT_FALSE(isResharding(h->definition()));
}

// A user's Stream annotation wins: the planner is not even asked.
TEST_F(StreamSplitInsertionTest, AUsersAnnotationWins) {
  TensorView* h = buildMlp();
  h->split(0, 2, /*inner_split=*/false);
  h->axis(0)->parallelize(ParallelType::Stream);
  placeShardings();
  FixedPlanner planner(8);
  StreamSplitPlannerScope scope(&planner);
  insertStreamSplits(&fusion_);
  EXPECT_EQ(planner.calls, 0);
  EXPECT_EQ(findStreamAxis(h)->loop_id->extent()->toInlineString(), "2");
}

// An explicit allgather read by three GEMMs (the attention's Q, K and V
// projections of the gathered tokens): one candidate, each GEMM split on
// the rows it takes from the gathered tensor.
TEST_F(StreamSplitInsertionTest, AllgatherReadByThreeGemmsSplitsEachOnItsRows) {
  TensorView* xn = makeContigTensor(2);
  fusion_.addInput(xn);
  outerSharded(xn, mesh2_, 0);
  TensorView* gathered = shard(set(xn), mesh2_);
  std::vector<TensorView*> projections;
  for (int i = 0; i < 3; ++i) {
    TensorView* w = makeContigTensor(3);  // [heads, H, head dim]
    fusion_.addInput(w);
    outerSharded(w, mesh2_, 0);
    projections.push_back(outerSharded(matmul(gathered, w), mesh2_, 0));  // [heads, T, hd]
  }
  fusion_.addOutput(add(projections[0], add(projections[1], projections[2])));
  placeShardings();
  FixedPlanner planner(2);
  StreamSplitPlannerScope scope(&planner);
  insertStreamSplits(&fusion_);
  ASSERT_EQ(planner.seen.size(), 1u);
  EXPECT_TRUE(planner.seen[0].not_chunkable.empty()) << planner.seen[0].not_chunkable;
  EXPECT_EQ(planner.seen[0].gemms.size(), 3u);
  for (TensorView* projection : projections) {
    std::optional<StreamAxis> axis = findStreamAxis(projection);
    ASSERT_TRUE(axis.has_value()) << projection->toString();
    EXPECT_EQ(axis->logical_pos, 1);  // the tokens
  }
}

// A gathered tensor that a pointwise op also reads is needed whole: listed,
// not chunked, with the reason naming the consumer.
TEST_F(StreamSplitInsertionTest, AConsumerThatNeedsTheWholeTensorIsTheReason) {
  TensorView* xn = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  fusion_.addInput(xn);
  fusion_.addInput(w);
  outerSharded(xn, mesh2_, 0);
  outerSharded(w, mesh2_, 0);
  TensorView* gathered = shard(set(xn), mesh2_);
  TensorView* y = outerSharded(linear(gathered, w), mesh2_, 1);
  fusion_.addOutput(y);
  fusion_.addOutput(shard(neg(gathered), mesh2_));
  placeShardings();
  FixedPlanner planner(4);
  StreamSplitPlannerScope scope(&planner);
  insertStreamSplits(&fusion_);
  ASSERT_EQ(planner.seen.size(), 1u);
  EXPECT_NE(planner.seen[0].not_chunkable.find("a consumer that needs the whole tensor: "),
            std::string::npos)
      << planner.seen[0].not_chunkable;
  EXPECT_NE(planner.seen[0].not_chunkable.find("neg"), std::string::npos);
  EXPECT_FALSE(hasStreamAxis(fusion_));
  const std::string report = describeStreamSplits(planner.seen, {{1, "fixed", {}}});
  EXPECT_EQ(report.rfind("not pipelined: allgather of ", 0), 0u) << report;
}

}  // namespace hostir::test
