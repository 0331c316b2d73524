#include "hostir/host_ir/passes/collective_scheduling.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/passes/expr_dependencies.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/stream_ops.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

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

// A Communication, or a loop that posts one.
bool postsCollectives(const Expr* expr) {
  if (expr->isA<Communication>()) {
    return true;
  }
  const auto* loop = dynamic_cast<const ForLoop*>(expr);
  return loop != nullptr && std::any_of(loop->body().begin(), loop->body().end(),
                                        [](const Expr* inner) { return postsCollectives(inner); });
}

// The collectives a top-level expr waits for: a Wait's, or those of a loop
// whose body is nothing but Waits (a pipeline waiting for its chunks'
// reduce-scatters, one per iteration); none for any other expr.
std::vector<const Expr*> collectivesWaitedBy(const Expr* expr) {
  if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
    return {wait->communication()};
  }
  const auto* loop = dynamic_cast<const ForLoop*>(expr);
  if (loop == nullptr || loop->body().empty()) {
    return {};
  }
  std::vector<const Expr*> result;
  for (const Expr* inner : loop->body()) {
    const auto* wait = dynamic_cast<const Wait*>(inner);
    if (wait == nullptr) {
      return {};
    }
    result.push_back(wait->communication());
  }
  return result;
}

// Moves a top-level Wait, or a loop of Waits, down to just before the first
// expr that reads or writes its collectives' buffers.
void sinkWaits(Scope& top, const ViewBases& bases, Expr* waits,
               const std::vector<const Expr*>& communications) {
  std::vector<Val*> buffers;
  for (const Expr* communication : communications) {
    buffers.insert(buffers.end(), communication->inputs().begin(), communication->inputs().end());
    buffers.insert(buffers.end(), communication->outputs().begin(), communication->outputs().end());
  }
  buffers = bases.withBases(buffers);
  Scope::Iterator position = std::next(top.at(waits));
  while (position != top.end()) {
    const Expr* next = *position;
    ValSet reads;
    ValSet writes;
    collectVals(next, bases, reads, writes);
    if (isStreamBarrier(next) || next->isA<ForLoop>() || intersects(reads, buffers) ||
        intersects(writes, buffers)) {
      break;
    }
    ++position;
  }
  if (position != std::next(top.at(waits))) {
    top.erase(top.at(waits));
    top.insert(position, waits);
  }
}

void hoistCommunication(Scope& top, const ViewBases& bases, Communication* communication) {
  const std::vector<Val*> inputs = bases.withBases(communication->inputs());
  const std::vector<Val*> outputs = bases.withBases(communication->outputs());
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
    collectVals(previous, bases, reads, writes);
    if (isStreamBarrier(previous) || intersects(writes, inputs) || intersects(reads, outputs) ||
        intersects(writes, outputs)) {
      break;
    }
    if (postsCollectives(previous)) {
      // Collectives keep their order: ranks whose programs differ (work of
      // other devices dropped) must still post them in the same order. A
      // pipeline's prefetch loop posts its chunks' collectives too.
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

bool isProgramInput(const HostIrContainer& container, const Val* val) {
  return std::find(container.inputs().begin(), container.inputs().end(), val) !=
         container.inputs().end();
}

// A fusion op that becomes collectives (a segment's PostOnStream is
// compute: its permutes move DID axes without communicating).
bool becomesCollectives(const Expr* expr) {
  return hasTrait(expr, OpTrait::AtenEvaluable) && isResharding(expr);
}

// What an input gather may move past: compute and reduce-scatters.
bool isPassableByInputGather(const Expr* expr) {
  return !becomesCollectives(expr) ||
         classifyResharding(expr).type == CollectiveType::ReduceScatter;
}

}  // namespace

// A resharding set that allgathers a program input, read by no GEMM that
// would pipeline the gather (a matmul or linear with a Stream-split
// output: the pipeline needs its other operands where the set is).
bool isGatherOfProgramInput(const HostIrContainer& container, const Expr* expr) {
  if (!expr->isA<LoadStoreOp>() || !becomesCollectives(expr) ||
      !isProgramInput(container, expr->input(0)) ||
      classifyResharding(expr).type != CollectiveType::Allgather) {
    return false;
  }
  const std::vector<Expr*>& readers = expr->output(0)->uses();
  return std::none_of(readers.begin(), readers.end(), [](const Expr* reader) {
    return (reader->isA<MatmulOp>() || reader->isA<LinearOp>()) &&
           findStreamAxis(reader->output(0)->as<TensorView>()).has_value();
  });
}

void moveInputGathersAheadOfReduceScatters(HostIrContainer& container) {
  Scope& top = container.topLevel();
  std::vector<Expr*> gathers;
  for (Expr* expr : top) {
    if (isGatherOfProgramInput(container, expr)) {
      gathers.push_back(expr);
    }
  }
  for (Expr* gather : gathers) {
    Scope::Iterator position = top.at(gather);
    // The set defines its output and reads a program input: nothing before
    // it reads or writes either.
    while (position != top.begin() && isPassableByInputGather(*std::prev(position))) {
      --position;
    }
    if (position != top.at(gather)) {
      top.erase(top.at(gather));
      top.insert(position, gather);
    }
  }
}

void scheduleCollectives(HostIrContainer& container) {
  Scope& top = container.topLevel();
  std::vector<Communication*> communications = movableCommunications(top);
  const ViewBases bases(top);
  // The Waits of the movable collectives and the loops of Waits for
  // collectives (not point-to-point transfers), latest first: a Wait moves
  // past the later ones already placed.
  const std::unordered_set<const Expr*> movable(communications.begin(), communications.end());
  std::vector<Expr*> waiters;
  for (Expr* expr : top) {
    const std::vector<const Expr*> waited = collectivesWaitedBy(expr);
    const bool sinks =
        expr->isA<Wait>()
            ? movable.count(waited.front()) != 0
            : !waited.empty() &&
                  std::all_of(waited.begin(), waited.end(), [](const Expr* communication) {
                    return communication->isA<Communication>();
                  });
    if (sinks) {
      waiters.push_back(expr);
    }
  }
  for (auto it = waiters.rbegin(); it != waiters.rend(); ++it) {
    sinkWaits(top, bases, *it, collectivesWaitedBy(*it));
  }
  for (Communication* communication : communications) {
    hoistCommunication(top, bases, communication);
  }
}

}  // namespace hostir
