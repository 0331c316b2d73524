#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "hostir/segment/segmented_fusion.h"

namespace hostir {

class Fusion;

// Decides whether a producer group and one of its consumers may become one
// segment. It is asked before the (costlier) acyclicity check, so it may see
// a pair that then stays apart because merging it would create a cycle.
using MergePredicate =
    std::function<bool(const SegmentedGroup& producer, const SegmentedGroup& consumer)>;

struct SegmentOptions {
  // The caller's policy of what may share a segment; empty: anything may.
  // While merging, a group's exprs (not yet sorted) and edges are current,
  // its inputs() and outputs() are computed on demand, and forwarded chains
  // are not copied into their readers yet (that happens once merging is
  // done).
  MergePredicate should_merge;
  // Recompute cheap chains in each segment that reads them (forwarding.h).
  bool forward_cheap_chains = true;
};

// Splits a Fusion's dataflow into segments. Starts with one group per tensor
// expr (scalar arithmetic is not segmented: it is cloned along with whatever
// uses it) and greedily merges producer-consumer pairs, visiting groups in
// topological order and each group's consumers by id, until no pair can
// merge. A pair merges when the predicate allows it and no other path joins
// them through a third group (the merged graph stays acyclic). The result is
// deterministic: the same fusion always gives the same groups and run order.
class SegmentCandidateFinder {
 public:
  // `fusion` must outlive the result. Prints it when HOSTIR_DUMP=segments.
  static std::unique_ptr<SegmentedFusion> segment(const Fusion* fusion,
                                                  const SegmentOptions& options = {});

 private:
  SegmentCandidateFinder(const Fusion* fusion, const SegmentOptions& options);

  void buildSingletonGroups();
  // One pass over the groups in topological order; whether anything merged.
  bool mergeSweep();
  // Merges into `producer` every consumer that may join it.
  bool mergeConsumersInto(SegmentedGroup* producer);
  bool createsCycle(const SegmentedGroup* producer, const SegmentedGroup* consumer);
  void merge(SegmentedGroup* producer, SegmentedGroup* consumer);
  void reorderForMerge(SegmentedGroup* producer, SegmentedGroup* consumer);
  void compactOrder();

  // After merging: give each group exactly the forwarded chains its own
  // exprs read (forwarding.h).
  void resolveForwarding();
  // Drops groups left empty, rebuilds edges and the run order, renumbers.
  void finalize();

  SegmentOptions options_;
  std::unique_ptr<SegmentedFusion> segmented_;
  // Live groups by their id while merging (nullptr once merged away).
  std::vector<SegmentedGroup*> by_id_;
  // A topological order of the live groups, with holes left by merges;
  // position_[id] is a group's index in it.
  std::vector<SegmentedGroup*> order_;
  std::vector<int64_t> position_;
  // Scratch for createsCycle: groups reached from the producer before the
  // consumer's position, marked with the current stamp.
  std::vector<int64_t> visit_stamp_;
  int64_t current_stamp_ = 0;
  std::vector<SegmentedGroup*> reached_;
};

}  // namespace hostir
