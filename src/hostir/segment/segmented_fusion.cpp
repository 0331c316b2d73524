#include "hostir/segment/segmented_fusion.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/options.h"

namespace hostir {

SegmentedFusion::SegmentedFusion(const Fusion* fusion)
    : fusion_(fusion),
      fusion_inputs_(fusion->inputs().begin(), fusion->inputs().end()),
      fusion_outputs_(fusion->outputs().begin(), fusion->outputs().end()) {}

SegmentedGroup* SegmentedFusion::groupOf(const Expr* expr) const {
  auto it = group_of_.find(expr);
  return it == group_of_.end() ? nullptr : it->second;
}

int64_t SegmentedFusion::topoIndex(const Expr* expr) const {
  auto it = topo_index_.find(expr);
  HOSTIR_ASSERT(it != topo_index_.end(), expr->opName(), " is not in the segmented dataflow");
  return it->second;
}

void SegmentedFusion::sortTopologically(std::vector<Expr*>& exprs) const {
  std::vector<std::pair<int64_t, Expr*>> keyed;
  keyed.reserve(exprs.size());
  for (Expr* expr : exprs) {
    keyed.emplace_back(topoIndex(expr), expr);
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < exprs.size(); ++i) {
    exprs[i] = keyed[i].second;
  }
}

std::unique_ptr<Fusion> SegmentedFusion::makeFusion(const SegmentedGroup* group) const {
  HOSTIR_ASSERT(group != nullptr && group->owner_ == this,
                "makeFusion needs a group of this SegmentedFusion");
  auto segment = std::make_unique<Fusion>();
  FusionGuard guard(segment.get());
  IrCloner cloner(segment.get());
  // Inputs first: cloning a tensor does not clone the op computing it, so the
  // boundary tensors arrive definition-free, as inputs must be.
  for (Val* in : group->inputs()) {
    segment->addInput(cloner.clone(in));
  }
  for (const Expr* expr : group->exprs()) {
    cloner.clone(expr);
  }
  for (Val* out : group->outputs()) {
    segment->addOutput(cloner.clone(out));
  }
  return segment;
}

std::string SegmentedFusion::toString() const {
  std::stringstream ss;
  ss << "%SegmentedFusion {\n";
  for (const SegmentedGroup* group : run_order_) {
    ss << group->toString(1);
  }
  ss << "} // %SegmentedFusion\n";
  return ss.str();
}

void SegmentedFusion::printIfDumpEnabled() const {
  if (isDumpEnabled("segments")) {
    std::cout << toString() << std::flush;
  }
}

}  // namespace hostir
