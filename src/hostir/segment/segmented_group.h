#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class SegmentedFusion;

// A set of exprs of one Fusion that runs as a unit (one segment), with the
// values that cross its boundary and the groups it exchanges them with.
// Created and merged by SegmentCandidateFinder; owned by a SegmentedFusion.
class SegmentedGroup {
 public:
  SegmentedGroup(const SegmentedGroup&) = delete;
  SegmentedGroup& operator=(const SegmentedGroup&) = delete;

  // Once segmentation is done: the group's index in the run order.
  int64_t id() const {
    return id_;
  }

  // In the complete fusion's topological order once segmentation is done
  // (while merging, in the order groups were merged). Includes this group's
  // copy of forwarded exprs (see forwarding.h), which other groups may list.
  const std::vector<Expr*>& exprs() const {
    return exprs_;
  }
  // The exprs of exprs() that are forwarded (recomputed where used).
  std::vector<Expr*> forwardedExprs() const;
  bool isForwarded(const Expr* expr) const;

  // Values the group reads but does not produce: tensors computed by other
  // groups, fusion inputs, and the non-constant scalars its exprs need that
  // its tensor inputs' extents do not provide. Order of first use.
  const std::vector<Val*>& inputs() const;
  // Values the group produces that another group reads or that are fusion
  // outputs. Forwarded values are never outputs once segmentation is done.
  const std::vector<Val*>& outputs() const;

  // Groups producing this group's inputs / consuming its outputs, by id.
  const std::vector<SegmentedGroup*>& producers() const {
    return producers_;
  }
  const std::vector<SegmentedGroup*>& consumers() const {
    return consumers_;
  }

  // "group 3 (producers: 1, consumers: 4) { inputs: ... outputs: ... exprs: ... }".
  std::string toString(int indent = 0) const;

 private:
  friend class SegmentedFusion;
  friend class SegmentCandidateFinder;

  SegmentedGroup(const SegmentedFusion* owner, int64_t id, std::vector<Expr*> exprs)
      : owner_(owner), id_(id), exprs_(std::move(exprs)) {}

  // Inputs and outputs are computed on demand and cached: a merge predicate
  // may ask for them, and recomputing them on every merge would be quadratic.
  void computeBoundary() const;
  void invalidateBoundary() {
    boundary_valid_ = false;
  }

  const SegmentedFusion* owner_;
  int64_t id_;
  std::vector<Expr*> exprs_;
  std::vector<SegmentedGroup*> producers_;
  std::vector<SegmentedGroup*> consumers_;

  mutable bool boundary_valid_ = false;
  mutable std::vector<Val*> inputs_;
  mutable std::vector<Val*> outputs_;
};

}  // namespace hostir
