// Properties of segmentation over generated fusions: every expr has its
// group, groups run after their producers, and merging went as far as the
// policy and acyclicity allow.

#include <functional>
#include <random>
#include <unordered_set>

#include "hostir/ir/ops.h"
#include "segment_test_utils.h"

namespace hostir::test {
namespace {

// A random DAG of pointwise ops over [4, 4] tensors, reading any earlier
// tensor; the tensors nothing reads are the outputs.
void buildRandomFusion(Fusion& fusion, uint32_t seed, int64_t num_ops) {
  std::mt19937 rng(seed);
  std::vector<TensorView*> tensors;
  for (int i = 0; i < 3; ++i) {
    tensors.push_back(makeContigConcreteTensor({4, 4}));
    fusion.addInput(tensors.back());
  }
  tensors.push_back(full({constant(4), constant(4)}, constant(1), DataType::Float));
  auto pick = [&]() {
    return tensors[std::uniform_int_distribution<size_t>(0, tensors.size() - 1)(rng)];
  };
  for (int64_t i = 0; i < num_ops; ++i) {
    switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
      case 0: tensors.push_back(set(pick())); break;
      case 1: tensors.push_back(neg(pick())); break;
      case 2: tensors.push_back(relu(pick())); break;
      case 3: tensors.push_back(add(pick(), pick())); break;
      default: tensors.push_back(mul(pick(), pick())); break;
    }
  }
  for (TensorView* tv : tensors) {
    if (tv->uses().empty() && !fusion.isInput(tv)) {
      fusion.addOutput(tv);
    }
  }
}

// Whether `to` is reachable from `from` through at least one third group.
bool hasIndirectPath(const SegmentedGroup* from, const SegmentedGroup* to) {
  std::vector<const SegmentedGroup*> stack;
  std::unordered_set<const SegmentedGroup*> seen;
  for (const SegmentedGroup* next : from->consumers()) {
    if (next != to) {
      stack.push_back(next);
    }
  }
  while (!stack.empty()) {
    const SegmentedGroup* group = stack.back();
    stack.pop_back();
    if (group == to) {
      return true;
    }
    if (seen.insert(group).second) {
      stack.insert(stack.end(), group->consumers().begin(), group->consumers().end());
    }
  }
  return false;
}

void checkSegmentation(const Fusion& fusion, const SegmentedFusion& segmented,
                       const MergePredicate& should_merge, bool forwarding) {
  std::unordered_map<const Expr*, int64_t> owners;
  for (const SegmentedGroup* group : segmented.runOrder()) {
    for (const Expr* expr : group->exprs()) {
      if (!segmented.isForwarded(expr)) {
        EXPECT_TRUE(owners.emplace(expr, group->id()).second) << expr->toString();
        EXPECT_EQ(segmented.groupOf(expr), group);
      }
    }
    // Inputs come from earlier groups or from outside the dataflow.
    for (const Val* in : group->inputs()) {
      if (in->definition() != nullptr) {
        const SegmentedGroup* producer = segmented.groupOf(in->definition());
        ASSERT_NE(producer, nullptr) << in->toInlineString();
        EXPECT_LT(producer->id(), group->id());
      }
    }
    for (const SegmentedGroup* producer : group->producers()) {
      EXPECT_LT(producer->id(), group->id());
    }
    auto segment = segmented.makeFusion(group);
    EXPECT_EQ(segment->exprs().size(), group->exprs().size());
  }
  for (const Expr* expr : fusion.exprs()) {
    if (!segmented.isForwarded(expr)) {
      EXPECT_EQ(owners.count(expr), 1u) << "no group computes " << expr->toString();
    }
  }
  // Forwarding drops edges, so only without it is every remaining edge one
  // that the predicate or a cycle forbids.
  if (!forwarding) {
    for (const SegmentedGroup* group : segmented.runOrder()) {
      for (const SegmentedGroup* consumer : group->consumers()) {
        bool allowed = !should_merge || should_merge(*group, *consumer);
        EXPECT_TRUE(!allowed || hasIndirectPath(group, consumer))
            << "groups " << group->id() << " and " << consumer->id() << " could still merge";
      }
    }
  }
}

TEST(RandomFusionSegmentTest, PropertiesHoldUnderSeveralPolicies) {
  // At most three exprs per group: a policy that leaves many edges to test.
  MergePredicate small_groups = [](const SegmentedGroup& a, const SegmentedGroup& b) {
    return a.exprs().size() + b.exprs().size() <= 3;
  };
  std::vector<MergePredicate> policies = {MergePredicate{}, hostLoweringMergePolicy(),
                                          small_groups};
  for (uint32_t seed = 0; seed < 20; ++seed) {
    for (size_t p = 0; p < policies.size(); ++p) {
      for (bool forwarding : {false, true}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + ", policy " + std::to_string(p) +
                     ", forwarding " + std::to_string(forwarding));
        Fusion fusion;
        FusionGuard guard(&fusion);
        buildRandomFusion(fusion, seed, 40);
        SegmentOptions options;
        options.should_merge = policies[p];
        options.forward_cheap_chains = forwarding;
        auto segmented = SegmentCandidateFinder::segment(&fusion, options);
        checkSegmentation(fusion, *segmented, policies[p], forwarding);
        auto again = SegmentCandidateFinder::segment(&fusion, options);
        EXPECT_EQ(segmented->toString(), again->toString());
      }
    }
  }
}

}  // namespace
}  // namespace hostir::test
