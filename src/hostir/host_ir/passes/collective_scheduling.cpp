#include "hostir/host_ir/passes/collective_scheduling.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/stream_ops.h"

namespace hostir {

namespace {

using ValSet = std::unordered_set<const Val*>;

// What an expr (a loop: its body too) reads and writes. A Wait completes
// its collective: it writes the collective's output and reads its input.
void collectVals(const Expr* expr, ValSet& reads, ValSet& writes) {
  if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
    const Expr* communication = wait->communication();
    reads.insert(communication->inputs().begin(), communication->inputs().end());
    writes.insert(communication->outputs().begin(), communication->outputs().end());
    return;
  }
  reads.insert(expr->inputs().begin(), expr->inputs().end());
  reads.insert(expr->attributeVals().begin(), expr->attributeVals().end());
  writes.insert(expr->outputs().begin(), expr->outputs().end());
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    for (const Expr* inner : loop->body()) {
      collectVals(inner, reads, writes);
    }
  }
}

bool intersects(const ValSet& a, const std::vector<Val*>& b) {
  return std::any_of(b.begin(), b.end(), [&](const Val* val) { return a.count(val) != 0; });
}

// Exprs no collective or Wait moves across: they change which stream is
// current or order streams, or they group collectives.
bool isStreamBarrier(const Expr* expr) {
  return expr->isA<SetCurrentStream>() || expr->isA<GetCurrentStream>() ||
         expr->isA<Synchronize>() || expr->isA<StartCoalescing>() || expr->isA<EndCoalescing>() ||
         expr->isA<P2PCommunication>();
}

// The top-level Communications outside coalescing groups, in program order.
std::vector<Communication*> movableCommunications(Scope& top) {
  std::vector<Communication*> result;
  bool coalescing = false;
  for (Expr* expr : top) {
    if (expr->isA<StartCoalescing>()) {
      coalescing = true;
    } else if (expr->isA<EndCoalescing>()) {
      coalescing = false;
    } else if (auto* communication = dynamic_cast<Communication*>(expr);
               communication != nullptr && !coalescing) {
      result.push_back(communication);
    }
  }
  return result;
}

Wait* topLevelWaitOf(Scope& top, const Communication* communication) {
  for (Expr* expr : top) {
    auto* wait = dynamic_cast<Wait*>(expr);
    if (wait != nullptr && wait->communication() == communication) {
      return wait;
    }
  }
  return nullptr;
}

void sinkWait(Scope& top, Wait* wait) {
  const Expr* communication = wait->communication();
  std::vector<Val*> buffers = communication->inputs();
  buffers.insert(buffers.end(), communication->outputs().begin(), communication->outputs().end());
  Scope::Iterator position = std::next(top.at(wait));
  while (position != top.end()) {
    const Expr* next = *position;
    ValSet reads;
    ValSet writes;
    collectVals(next, reads, writes);
    if (isStreamBarrier(next) || next->isA<ForLoop>() || intersects(reads, buffers) ||
        intersects(writes, buffers)) {
      break;
    }
    ++position;
  }
  if (position != std::next(top.at(wait))) {
    top.erase(top.at(wait));
    top.insert(position, wait);
  }
}

void hoistCommunication(Scope& top, Communication* communication) {
  const std::vector<Val*>& inputs = communication->inputs();
  const std::vector<Val*>& outputs = communication->outputs();
  Allocate* allocation = nullptr;
  Scope::Iterator position = top.at(communication);
  while (position != top.begin()) {
    const Expr* previous = *std::prev(position);
    if (const auto* allocate = dynamic_cast<const Allocate*>(previous);
        allocate != nullptr && allocate->buffer() == communication->out()) {
      allocation = const_cast<Allocate*>(allocate);  // moves with the collective
      --position;
      continue;
    }
    ValSet reads;
    ValSet writes;
    collectVals(previous, reads, writes);
    if (isStreamBarrier(previous) || intersects(writes, inputs) || intersects(reads, outputs) ||
        intersects(writes, outputs)) {
      break;
    }
    if (previous->isA<Communication>()) {
      // Collectives keep their order: ranks whose programs differ (work of
      // other devices dropped) must still post them in the same order.
      break;
    }
    --position;
  }
  if (position == top.at(communication) ||
      (allocation != nullptr && position == top.at(allocation))) {
    return;
  }
  if (allocation != nullptr) {
    top.erase(top.at(allocation));
  }
  top.erase(top.at(communication));
  Scope::Iterator placed = top.insert(position, communication);
  if (allocation != nullptr) {
    top.insert(placed, allocation);
  }
}

}  // namespace

void scheduleCollectives(HostIrContainer& container) {
  Scope& top = container.topLevel();
  std::vector<Communication*> communications = movableCommunications(top);
  for (auto it = communications.rbegin(); it != communications.rend(); ++it) {
    if (Wait* wait = topLevelWaitOf(top, *it)) {
      sinkWait(top, wait);
    }
  }
  for (Communication* communication : communications) {
    hoistCommunication(top, communication);
  }
}

}  // namespace hostir
