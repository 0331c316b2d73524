#pragma once

// Shared helpers for the segmenter tests (no ATen).

#include <string>
#include <vector>

#include "core_ir/test_utils.h"
#include "hostir/ir/ops.h"
#include "hostir/segment/host_lowering_policy.h"
#include "hostir/segment/segment_candidate_finder.h"

namespace hostir::test {

// The printed op names of a group's exprs, in order ("neg", "Set", "full").
inline std::vector<std::string> opNames(const SegmentedGroup& group) {
  std::vector<std::string> names;
  for (const Expr* expr : group.exprs()) {
    names.push_back(expr->displayName());
  }
  return names;
}

// The op names of every group, in run order.
inline std::vector<std::vector<std::string>> groupOpNames(const SegmentedFusion& segmented) {
  std::vector<std::vector<std::string>> result;
  for (const SegmentedGroup* group : segmented.runOrder()) {
    result.push_back(opNames(*group));
  }
  return result;
}

// The host lowering's policy with binary ops and reductions standing alone
// as well (as before segments compiled into kernels): these tests use them
// as segment boundaries. lowering_policy_test checks the policy itself.
inline bool aloneWithBinaryOps(const Expr* expr) {
  return isHostLowerable(expr) || expr->isA<BinaryOp>() || expr->isA<ReductionOp>();
}

inline std::unique_ptr<SegmentedFusion> segmentForHost(Fusion& fusion) {
  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy(aloneWithBinaryOps);
  return SegmentCandidateFinder::segment(&fusion, options);
}

template <typename OpType>
int64_t countExprs(const Fusion& fusion) {
  int64_t count = 0;
  for (const Expr* expr : fusion.exprs()) {
    count += expr->isA<OpType>() ? 1 : 0;
  }
  return count;
}

inline bool containsVal(const std::vector<Val*>& vals, const Val* val) {
  return std::find(vals.begin(), vals.end(), val) != vals.end();
}

using SegmentTest = IrTest;

}  // namespace hostir::test
