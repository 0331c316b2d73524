#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/segment/segmented_group.h"

namespace hostir {

class Fusion;

// The groups (segments) of one Fusion, produced by SegmentCandidateFinder.
// Refers to the complete fusion, which must outlive it.
class SegmentedFusion {
 public:
  SegmentedFusion(const SegmentedFusion&) = delete;
  SegmentedFusion& operator=(const SegmentedFusion&) = delete;

  const Fusion* completeFusion() const {
    return fusion_;
  }

  // Every group, in a deterministic topological order: each group comes
  // after the groups it reads from, ties broken by the complete fusion's
  // expr order. runOrder()[i]->id() == i.
  const std::vector<SegmentedGroup*>& runOrder() const {
    return run_order_;
  }

  // The group computing a non-forwarded expr; nullptr for a forwarded expr
  // (it may be in several groups) or an expr outside the dataflow.
  SegmentedGroup* groupOf(const Expr* expr) const;

  // Whether `expr` is recomputed by each group that uses it (forwarding.h).
  bool isForwarded(const Expr* expr) const {
    return forwarded_.count(expr) != 0;
  }

  // A standalone Fusion computing `group`: a clone of its exprs, with the
  // clones of group->inputs() as inputs and of group->outputs() as outputs,
  // in the same order, so position i maps back to the group's i-th value.
  std::unique_ptr<Fusion> makeFusion(const SegmentedGroup* group) const;

  // Every group in run order (what HOSTIR_DUMP=segments prints).
  std::string toString() const;
  void printIfDumpEnabled() const;

 private:
  friend class SegmentCandidateFinder;
  friend class SegmentedGroup;

  explicit SegmentedFusion(const Fusion* fusion);

  // Position of a dataflow expr in the complete fusion's topological order.
  int64_t topoIndex(const Expr* expr) const;
  // Sorts dataflow exprs into that order (one lookup per expr, not per
  // comparison).
  void sortTopologically(std::vector<Expr*>& exprs) const;
  bool isDataflowExpr(const Expr* expr) const {
    return topo_index_.count(expr) != 0;
  }
  // Fusion::isInput/isOutput scan a list; these are asked once per value.
  bool isFusionInput(const Val* val) const {
    return fusion_inputs_.count(val) != 0;
  }
  bool isFusionOutput(const Val* val) const {
    return fusion_outputs_.count(val) != 0;
  }

  const Fusion* fusion_;
  std::unordered_set<const Val*> fusion_inputs_;
  std::unordered_set<const Val*> fusion_outputs_;
  std::unordered_map<const Expr*, int64_t> topo_index_;
  std::unordered_set<const Expr*> forwarded_;
  // Set once each group has its own copy of the forwarded chains it reads.
  bool forwarding_resolved_ = false;
  std::vector<std::unique_ptr<SegmentedGroup>> groups_;
  std::vector<SegmentedGroup*> run_order_;
  std::unordered_map<const Expr*, SegmentedGroup*> group_of_;
};

}  // namespace hostir
