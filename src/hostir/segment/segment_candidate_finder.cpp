#include "hostir/segment/segment_candidate_finder.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>
#include <utility>

#include "hostir/ir/fusion.h"
#include "hostir/segment/forwarding.h"

namespace hostir {

namespace {

// Scalar arithmetic (extents, indices) is not a segment of its own: it is
// cloned along with the tensor exprs that use it.
bool computesOnlyScalars(const Expr* expr) {
  return !expr->outputs().empty() &&
         std::all_of(expr->outputs().begin(), expr->outputs().end(),
                     [](const Val* out) { return out->vtype() == ValType::Scalar; });
}

bool contains(const std::vector<SegmentedGroup*>& groups, const SegmentedGroup* group) {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

void addUnique(std::vector<SegmentedGroup*>& groups, SegmentedGroup* group) {
  if (!contains(groups, group)) {
    groups.push_back(group);
  }
}

void removeGroup(std::vector<SegmentedGroup*>& groups, const SegmentedGroup* group) {
  groups.erase(std::remove(groups.begin(), groups.end(), group), groups.end());
}

}  // namespace

std::unique_ptr<SegmentedFusion> SegmentCandidateFinder::segment(const Fusion* fusion,
                                                                 const SegmentOptions& options) {
  HOSTIR_CHECK(fusion != nullptr, "segment: no Fusion given");
  SegmentCandidateFinder finder(fusion, options);
  finder.buildSingletonGroups();
  while (finder.mergeSweep()) {
  }
  if (options.forward_cheap_chains) {
    finder.resolveForwarding();
  }
  finder.finalize();
  std::unique_ptr<SegmentedFusion> result = std::move(finder.segmented_);
  result->printIfDumpEnabled();
  return result;
}

SegmentCandidateFinder::SegmentCandidateFinder(const Fusion* fusion, const SegmentOptions& options)
    : options_(options), segmented_(new SegmentedFusion(fusion)) {}

void SegmentCandidateFinder::buildSingletonGroups() {
  SegmentedFusion& segmented = *segmented_;
  std::vector<Expr*> dataflow;
  for (Expr* expr : segmented.fusion_->exprs()) {
    if (!computesOnlyScalars(expr)) {
      dataflow.push_back(expr);
    }
  }
  if (options_.forward_cheap_chains) {
    segmented.forwarded_ = findForwardedExprs(*segmented.fusion_, dataflow);
  }
  std::unordered_map<const Expr*, SegmentedGroup*> group_of;
  for (size_t i = 0; i < dataflow.size(); ++i) {
    Expr* expr = dataflow[i];
    auto id = static_cast<int64_t>(i);
    segmented.topo_index_[expr] = id;
    segmented.groups_.emplace_back(new SegmentedGroup(&segmented, id, {expr}));
    SegmentedGroup* group = segmented.groups_.back().get();
    group_of[expr] = group;
    by_id_.push_back(group);
    order_.push_back(group);
    position_.push_back(id);
    visit_stamp_.push_back(0);
  }
  // Edges follow operands; fusion inputs have no producer group.
  for (SegmentedGroup* consumer : by_id_) {
    for (Val* in : consumer->exprs_.front()->inputs()) {
      auto it = in->definition() == nullptr ? group_of.end() : group_of.find(in->definition());
      if (it == group_of.end() || it->second == consumer) {
        continue;
      }
      SegmentedGroup* producer = it->second;
      if (!contains(consumer->producers_, producer)) {
        consumer->producers_.push_back(producer);
        producer->consumers_.push_back(consumer);
      }
    }
  }
}

void SegmentCandidateFinder::compactOrder() {
  std::erase(order_, nullptr);
  for (size_t i = 0; i < order_.size(); ++i) {
    position_[order_[i]->id_] = static_cast<int64_t>(i);
  }
}

bool SegmentCandidateFinder::mergeSweep() {
  compactOrder();
  std::vector<bool> visited(by_id_.size(), false);
  bool merged_any = false;
  size_t i = 0;
  while (i < order_.size()) {
    SegmentedGroup* group = order_[i];
    if (group == nullptr || visited[group->id_]) {
      ++i;
      continue;
    }
    visited[group->id_] = true;
    // A merge may move this group later in the order; the loop then meets
    // the groups that moved before it at index i, still unvisited.
    merged_any |= mergeConsumersInto(group);
  }
  return merged_any;
}

bool SegmentCandidateFinder::mergeConsumersInto(SegmentedGroup* producer) {
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> candidates;
  for (const SegmentedGroup* consumer : producer->consumers_) {
    candidates.push(consumer->id_);
  }
  int64_t merges = 0;
  // A consumer refused once is tried again only after a merge changed the
  // neighbourhood (it may have removed the path that made a cycle).
  int64_t last_refused = -1;
  int64_t merges_at_last_refusal = -1;
  while (!candidates.empty()) {
    int64_t id = candidates.top();
    candidates.pop();
    SegmentedGroup* consumer = by_id_[id];
    if (consumer == nullptr || !contains(consumer->producers_, producer)) {
      continue;
    }
    if (id == last_refused && merges == merges_at_last_refusal) {
      continue;
    }
    if ((options_.should_merge && !options_.should_merge(*producer, *consumer)) ||
        createsCycle(producer, consumer)) {
      last_refused = id;
      merges_at_last_refusal = merges;
      continue;
    }
    std::vector<SegmentedGroup*> inherited_consumers = consumer->consumers_;
    merge(producer, consumer);
    ++merges;
    for (const SegmentedGroup* next : inherited_consumers) {
      candidates.push(next->id_);
    }
  }
  return merges > 0;
}

bool SegmentCandidateFinder::createsCycle(const SegmentedGroup* producer,
                                          const SegmentedGroup* consumer) {
  // Another path producer -> X -> ... -> consumer only passes through groups
  // placed between the two, so the search stops at the consumer's position.
  ++current_stamp_;
  reached_.clear();
  int64_t limit = position_[consumer->id_];
  std::vector<SegmentedGroup*> stack;
  auto reach = [&](SegmentedGroup* group) {
    if (position_[group->id_] < limit && visit_stamp_[group->id_] != current_stamp_) {
      visit_stamp_[group->id_] = current_stamp_;
      reached_.push_back(group);
      stack.push_back(group);
    }
  };
  for (SegmentedGroup* next : producer->consumers_) {
    if (next != consumer) {
      reach(next);
    }
  }
  while (!stack.empty()) {
    SegmentedGroup* group = stack.back();
    stack.pop_back();
    for (SegmentedGroup* next : group->consumers_) {
      if (next == consumer) {
        return true;
      }
      reach(next);
    }
  }
  return false;
}

void SegmentCandidateFinder::reorderForMerge(SegmentedGroup* producer, SegmentedGroup* consumer) {
  // Groups placed between the pair that depend on the producer (reached_,
  // stamped by createsCycle) must follow the merged group; the others keep
  // preceding it. The freed slot goes to the front, away from later windows.
  int64_t low = position_[producer->id_];
  int64_t high = position_[consumer->id_];
  std::vector<SegmentedGroup*> independent;
  std::vector<SegmentedGroup*> dependent;
  for (int64_t i = low + 1; i < high; ++i) {
    SegmentedGroup* group = order_[i];
    if (group == nullptr) {
      continue;
    }
    (visit_stamp_[group->id_] == current_stamp_ ? dependent : independent).push_back(group);
  }
  auto live = static_cast<int64_t>(independent.size() + 1 + dependent.size());
  int64_t next = high - live + 1;
  std::fill(order_.begin() + low, order_.begin() + next, nullptr);
  auto place = [&](SegmentedGroup* group) {
    order_[next] = group;
    position_[group->id_] = next++;
  };
  std::for_each(independent.begin(), independent.end(), place);
  place(producer);
  std::for_each(dependent.begin(), dependent.end(), place);
}

void SegmentCandidateFinder::merge(SegmentedGroup* producer, SegmentedGroup* consumer) {
  reorderForMerge(producer, consumer);

  // Appended, not merged in order: keeping a large group sorted on every
  // merge would be quadratic. finalize() sorts each group once.
  producer->exprs_.insert(producer->exprs_.end(), consumer->exprs_.begin(), consumer->exprs_.end());

  for (SegmentedGroup* other_producer : consumer->producers_) {
    if (other_producer == producer) {
      continue;
    }
    removeGroup(other_producer->consumers_, consumer);
    addUnique(other_producer->consumers_, producer);
    addUnique(producer->producers_, other_producer);
  }
  for (SegmentedGroup* next : consumer->consumers_) {
    removeGroup(next->producers_, consumer);
    addUnique(next->producers_, producer);
    addUnique(producer->consumers_, next);
  }
  removeGroup(producer->consumers_, consumer);
  by_id_[consumer->id_] = nullptr;
  consumer->exprs_.clear();
  consumer->producers_.clear();
  consumer->consumers_.clear();
  producer->invalidateBoundary();
}

void SegmentCandidateFinder::resolveForwarding() {
  SegmentedFusion& segmented = *segmented_;
  for (SegmentedGroup* group : by_id_) {
    if (group == nullptr) {
      continue;
    }
    // Keep the group's own exprs, and of the forwarded ones exactly those its
    // own exprs read, back to the chains' roots (fusion inputs and factory
    // ops), wherever merging had put them. A forwarded expr the group holds
    // but no longer reads is dropped: its readers compute their own copy.
    std::vector<Expr*> exprs;
    std::copy_if(group->exprs_.begin(), group->exprs_.end(), std::back_inserter(exprs),
                 [&](const Expr* expr) { return !segmented.isForwarded(expr); });
    std::unordered_set<const Expr*> members(exprs.begin(), exprs.end());
    std::vector<Expr*> worklist = exprs;
    while (!worklist.empty()) {
      Expr* expr = worklist.back();
      worklist.pop_back();
      for (Val* in : expr->inputs()) {
        Expr* definition = in->definition();
        if (definition != nullptr && segmented.isForwarded(definition) &&
            members.insert(definition).second) {
          exprs.push_back(definition);
          worklist.push_back(definition);
        }
      }
    }
    group->exprs_ = std::move(exprs);
    group->invalidateBoundary();
  }
  segmented.forwarding_resolved_ = true;
}

void SegmentCandidateFinder::finalize() {
  SegmentedFusion& segmented = *segmented_;

  // A group that held only forwarded exprs is empty now: each reader has
  // its own copy.
  std::vector<SegmentedGroup*> live;
  for (SegmentedGroup* group : by_id_) {
    if (group != nullptr && !group->exprs_.empty()) {
      live.push_back(group);
    }
  }

  for (SegmentedGroup* group : live) {
    segmented.sortTopologically(group->exprs_);
    group->invalidateBoundary();
    group->producers_.clear();
    group->consumers_.clear();
    for (Expr* expr : group->exprs_) {
      if (!segmented.isForwarded(expr)) {
        segmented.group_of_[expr] = group;
      }
    }
  }
  for (SegmentedGroup* group : live) {
    for (Val* in : group->inputs()) {
      if (in->definition() == nullptr) {
        continue;
      }
      SegmentedGroup* producer = segmented.groupOf(in->definition());
      HOSTIR_ASSERT(producer != nullptr && producer != group, in->toInlineString(),
                    " crosses a segment boundary but no other group computes it");
      addUnique(group->producers_, producer);
      addUnique(producer->consumers_, group);
    }
  }

  // Kahn's algorithm; among ready groups, the one whose first own expr comes
  // first in the fusion runs first (own exprs belong to one group only, so
  // the key is unique and the order deterministic).
  auto first_own_expr = [&](const SegmentedGroup* group) {
    auto it = std::find_if(group->exprs_.begin(), group->exprs_.end(),
                           [&](const Expr* expr) { return !segmented.isForwarded(expr); });
    HOSTIR_ASSERT(it != group->exprs_.end(), "group ", group->id_, " has only forwarded exprs");
    return segmented.topoIndex(*it);
  };
  std::unordered_map<const SegmentedGroup*, size_t> unmet;
  using Ready = std::pair<int64_t, SegmentedGroup*>;
  auto later = [](const Ready& a, const Ready& b) { return a.first > b.first; };
  std::priority_queue<Ready, std::vector<Ready>, decltype(later)> ready(later);
  for (SegmentedGroup* group : live) {
    unmet[group] = group->producers_.size();
    if (group->producers_.empty()) {
      ready.emplace(first_own_expr(group), group);
    }
  }
  std::vector<SegmentedGroup*> run_order;
  while (!ready.empty()) {
    SegmentedGroup* group = ready.top().second;
    ready.pop();
    run_order.push_back(group);
    for (SegmentedGroup* consumer : group->consumers_) {
      if (--unmet[consumer] == 0) {
        ready.emplace(first_own_expr(consumer), consumer);
      }
    }
  }
  HOSTIR_ASSERT(run_order.size() == live.size(), "the segmented groups form a cycle");

  for (size_t i = 0; i < run_order.size(); ++i) {
    run_order[i]->id_ = static_cast<int64_t>(i);
  }
  auto by_id = [](const SegmentedGroup* a, const SegmentedGroup* b) { return a->id_ < b->id_; };
  for (SegmentedGroup* group : run_order) {
    std::sort(group->producers_.begin(), group->producers_.end(), by_id);
    std::sort(group->consumers_.begin(), group->consumers_.end(), by_id);
  }
  // Keep only the live groups, owned in run order.
  std::unordered_set<const SegmentedGroup*> is_live(run_order.begin(), run_order.end());
  std::vector<std::unique_ptr<SegmentedGroup>> owned(run_order.size());
  for (std::unique_ptr<SegmentedGroup>& group : segmented.groups_) {
    if (is_live.count(group.get()) != 0) {
      owned[group->id_] = std::move(group);
    }
  }
  segmented.groups_ = std::move(owned);
  segmented.run_order_ = std::move(run_order);
}

}  // namespace hostir
