// Greedy merging: what merges without a policy, the caller's predicate, and
// the acyclicity rule.

#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

using Names = std::vector<std::vector<std::string>>;

TEST_F(SegmentTest, WithoutPredicateConnectedExprsFormOneGroup) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = neg(a);
  TensorView* c = add(b, y);
  TensorView* d = sum(c, {1});
  fusion_.addOutput(d);

  auto segmented = SegmentCandidateFinder::segment(&fusion_);

  ASSERT_EQ(segmented->runOrder().size(), 1u);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set", "neg", "add", "sum"}}));
  const SegmentedGroup& group = *segmented->runOrder()[0];
  EXPECT_EQ(group.inputs(), (std::vector<Val*>{x, y}));
  EXPECT_EQ(group.outputs(), (std::vector<Val*>{d}));
  EXPECT_TRUE(group.producers().empty());
  EXPECT_TRUE(group.consumers().empty());
}

TEST_F(SegmentTest, DisconnectedComputationsStayApart) {
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  fusion_.addOutput(relu(set(x)));
  fusion_.addOutput(exp(set(y)));

  auto segmented = SegmentCandidateFinder::segment(&fusion_);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set", "relu"}, {"Set", "exp"}}));
}

TEST_F(SegmentTest, PredicateDecidesWhichPairsMerge) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  TensorView* a = set(x);
  TensorView* b = neg(a);
  TensorView* c = abs(b);
  TensorView* d = set(c);
  TensorView* e = relu(d);
  fusion_.addOutput(e);

  // Merge only groups without a Set: the Sets split the chain in three.
  SegmentOptions options;
  int64_t calls = 0;
  options.should_merge = [&](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    ++calls;
    auto has_set = [](const SegmentedGroup& group) {
      return std::any_of(group.exprs().begin(), group.exprs().end(),
                         [](const Expr* expr) { return expr->isA<LoadStoreOp>(); });
    };
    return !has_set(producer) && !has_set(consumer);
  };
  auto segmented = SegmentCandidateFinder::segment(&fusion_, options);

  EXPECT_GT(calls, 0);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set"}, {"neg", "abs"}, {"Set"}, {"relu"}}));
}

TEST_F(SegmentTest, PredicateSeesProducerThenConsumer) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  TensorView* a = neg(set(x));
  fusion_.addOutput(abs(a));

  SegmentOptions options;
  options.should_merge = [&](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    // Every consumer reads something the producer writes.
    for (const Val* in : consumer.inputs()) {
      if (containsVal(producer.outputs(), in)) {
        return true;
      }
    }
    ADD_FAILURE() << "consumer does not read the producer";
    return false;
  };
  auto segmented = SegmentCandidateFinder::segment(&fusion_, options);
  EXPECT_EQ(segmented->runOrder().size(), 1u);
}

// p feeds c directly and through q; q may not merge with anything, so
// merging p with c would make the group {p, c} both feed and read q.
TEST_F(SegmentTest, MergeThatWouldCreateACycleThroughAThirdGroupIsRefused) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  TensorView* p = relu(set(x));
  TensorView* q = set(p);
  TensorView* c = add(p, q);
  fusion_.addOutput(c);

  SegmentOptions options;
  options.forward_cheap_chains = false;
  options.should_merge = [&](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    auto holds_q = [&](const SegmentedGroup& group) {
      return std::find(group.exprs().begin(), group.exprs().end(), q->definition()) !=
             group.exprs().end();
    };
    return !holds_q(producer) && !holds_q(consumer);
  };
  auto segmented = SegmentCandidateFinder::segment(&fusion_, options);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set", "relu"}, {"Set"}, {"add"}}));
  const auto& order = segmented->runOrder();
  EXPECT_EQ(order[2]->producers(), (std::vector<SegmentedGroup*>{order[0], order[1]}));

  // Without the predicate the whole diamond is one group.
  auto merged = SegmentCandidateFinder::segment(&fusion_);
  EXPECT_EQ(merged->runOrder().size(), 1u);
}

// A pair refused because of a path through a third group is tried again
// once that group has joined one of them.
TEST_F(SegmentTest, RefusedPairMergesOnceTheThirdGroupJoinsIt) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  TensorView* p = relu(set(x));
  TensorView* q = neg(p);
  TensorView* c = add(p, q);
  fusion_.addOutput(c);

  // p's group may not take q alone; q may join c, and then p may join both.
  SegmentOptions options;
  options.forward_cheap_chains = false;
  options.should_merge = [&](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    bool consumer_is_q_alone = consumer.exprs() == std::vector<Expr*>{q->definition()};
    return !consumer_is_q_alone;
  };
  auto segmented = SegmentCandidateFinder::segment(&fusion_, options);
  EXPECT_EQ(groupOpNames(*segmented), (Names{{"Set", "relu", "neg", "add"}}));
}

TEST_F(SegmentTest, RunOrderIsTopologicalAndDeterministic) {
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* a = set(x);
  TensorView* b = set(y);
  TensorView* c = add(a, b);
  TensorView* d = mul(c, a);
  TensorView* e = sub(d, b);
  fusion_.addOutput(e);
  fusion_.addOutput(c);

  auto first = segmentForHost(fusion_);
  auto second = segmentForHost(fusion_);

  EXPECT_EQ(groupOpNames(*first), (Names{{"Set"}, {"Set"}, {"add"}, {"mul"}, {"sub"}}));
  EXPECT_EQ(first->toString(), second->toString());
  for (size_t i = 0; i < first->runOrder().size(); ++i) {
    const SegmentedGroup* group = first->runOrder()[i];
    EXPECT_EQ(group->id(), static_cast<int64_t>(i));
    for (const SegmentedGroup* producer : group->producers()) {
      EXPECT_LT(producer->id(), group->id());
      EXPECT_TRUE(std::find(producer->consumers().begin(), producer->consumers().end(), group) !=
                  producer->consumers().end());
    }
  }
  const SegmentedGroup* sub_group = first->runOrder()[4];
  EXPECT_EQ(sub_group->producers(),
            (std::vector<SegmentedGroup*>{first->runOrder()[1], first->runOrder()[3]}));
}

// Scalar arithmetic (here a slice bound) is cloned with its user, never a
// group of its own.
TEST_F(SegmentTest, ScalarArithmeticIsNotSegmented) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  Val* stop = sub(x->axis(0)->extent(), constant(1));
  TensorView* y = slice(x, 0, constant(0), stop);
  fusion_.addOutput(y);

  auto segmented = segmentForHost(fusion_);

  EXPECT_EQ(groupOpNames(*segmented), (Names{{"slice"}}));
  EXPECT_EQ(segmented->runOrder()[0]->inputs(), (std::vector<Val*>{x}));
  auto segment = segmented->makeFusion(segmented->runOrder()[0]);
  ASSERT_EQ(segment->inputs().size(), 1u);
  EXPECT_EQ(countExprs<SliceOp>(*segment), 1);
  EXPECT_EQ(countExprs<BinaryOp>(*segment), 1);  // the cloned `i0 - 1`
}

TEST_F(SegmentTest, EmptyFusionHasNoGroups) {
  TensorView* x = makeContigTensor(1);
  fusion_.addInput(x);
  fusion_.addOutput(x);
  auto segmented = SegmentCandidateFinder::segment(&fusion_);
  EXPECT_TRUE(segmented->runOrder().empty());
  EXPECT_EQ(segmented->toString(), "%SegmentedFusion {\n} // %SegmentedFusion\n");
}

}  // namespace
}  // namespace hostir::test
