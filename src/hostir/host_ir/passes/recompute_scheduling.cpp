#include "hostir/host_ir/passes/recompute_scheduling.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/passes/expr_dependencies.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

using ExprSet = std::unordered_set<const Expr*>;

bool isProgramInput(const HostIrContainer& container, const Val* val) {
  return std::find(container.inputs().begin(), container.inputs().end(), val) !=
         container.inputs().end();
}

bool isProgramOutput(const HostIrContainer& container, const Val* val) {
  return std::find(container.outputs().begin(), container.outputs().end(), val) !=
         container.outputs().end();
}

// Compute that makes new values (not a view, a collective, a Wait, a loop or
// an allocation) from tensors that are all program inputs.
bool isRecompute(const HostIrContainer& container, const Expr* expr) {
  if (!(expr->isA<UnaryOp>() || expr->isA<BinaryOp>() || expr->isA<WhereOp>() ||
        expr->isA<PostOnStream>()) ||
      expr->outputs().empty()) {
    return false;
  }
  bool reads_a_tensor = false;
  for (const Val* input : expr->inputs()) {
    if (dynamic_cast<const TensorView*>(input) == nullptr) {
      continue;
    }
    if (!isProgramInput(container, input)) {
      return false;
    }
    reads_a_tensor = true;
  }
  return reads_a_tensor &&
         std::none_of(expr->outputs().begin(), expr->outputs().end(),
                      [&](const Val* out) { return isProgramOutput(container, out); });
}

// An expr a group may carry: compute or a view, no collective, Wait, loop,
// allocation or stream barrier.
bool isMovableCompute(const Expr* expr) {
  return !(expr->isA<Communication>() || expr->isA<Wait>() || expr->isA<ForLoop>() ||
           expr->isA<Allocate>() || expr->isA<Deallocate>() || isStreamBarrier(expr));
}

struct Access {
  ValSet reads;
  ValSet writes;
};

// What each top-level expr reads and writes (its place does not change it).
class Accesses {
 public:
  explicit Accesses(Scope& top) : bases_(top) {
    for (const Expr* expr : top) {
      collectVals(expr, bases_, of_[expr].reads, of_[expr].writes);
    }
  }

  const Access& of(const Expr* expr) const {
    return of_.at(expr);
  }

  // The top-level exprs other than `writer` that read what `writer` writes.
  std::vector<Expr*> readersOf(Scope& top, const Expr* writer) const {
    const ValSet& written = of(writer).writes;
    std::vector<Expr*> readers;
    for (Expr* expr : top) {
      if (expr != writer && intersects(of(expr).reads, written)) {
        readers.push_back(expr);
      }
    }
    return readers;
  }

 private:
  ViewBases bases_;
  std::unordered_map<const Expr*, Access> of_;
};

// The recompute, its one reader, the reader's operands only it reads, and
// the allocations of what they write, in program order; empty when the
// recompute is not moved.
std::vector<Expr*> groupOf(Scope& top, const Accesses& accesses, Expr* recompute) {
  const std::vector<Expr*> readers = accesses.readersOf(top, recompute);
  if (readers.size() != 1 || !isMovableCompute(readers.front())) {
    return {};
  }
  Expr* reader = readers.front();
  // Its results are read by nothing after it: it holds nothing else alive.
  if (!accesses.readersOf(top, reader).empty()) {
    return {};
  }
  ExprSet members{recompute, reader};
  for (Expr* expr : top) {
    if (expr == reader) {
      break;
    }
    if (members.count(expr) != 0 || !isMovableCompute(expr)) {
      continue;
    }
    const std::vector<Expr*> its_readers = accesses.readersOf(top, expr);
    if (its_readers.size() == 1 && its_readers.front() == reader) {
      members.insert(expr);
    }
  }
  ValSet written;
  for (const Expr* member : members) {
    const ValSet& writes = accesses.of(member).writes;
    written.insert(writes.begin(), writes.end());
  }
  std::vector<Expr*> group;
  for (Expr* expr : top) {
    const auto* allocate = dynamic_cast<const Allocate*>(expr);
    if (members.count(expr) != 0 ||
        (allocate != nullptr && written.count(allocate->buffer()) != 0)) {
      group.push_back(expr);
    }
  }
  return group;
}

bool conflicts(const Access& a, const Access& b) {
  return intersects(a.writes, b.reads) || intersects(a.reads, b.writes) ||
         intersects(a.writes, b.writes);
}

// Moves `group` to just after the last expr before its last member that it
// depends on; false (nothing moved) where a member would cross an expr it
// depends on on the way down.
bool hoistGroup(Scope& top, const Accesses& accesses, const std::vector<Expr*>& group) {
  const ExprSet members(group.begin(), group.end());
  Access all;
  for (const Expr* member : group) {
    const Access& access = accesses.of(member);
    all.reads.insert(access.reads.begin(), access.reads.end());
    all.writes.insert(access.writes.begin(), access.writes.end());
  }
  Scope::Iterator cursor = top.at(group.back());
  Expr* anchor = nullptr;  // nullptr: the program's start
  while (cursor != top.begin()) {
    Expr* previous = *std::prev(cursor);
    --cursor;
    if (members.count(previous) == 0 &&
        (isStreamBarrier(previous) || conflicts(accesses.of(previous), all))) {
      anchor = previous;
      break;
    }
  }
  // Members before the anchor move down past what lies between.
  for (Expr* member : group) {
    if (anchor == nullptr ||
        std::distance(top.begin(), top.at(member)) > std::distance(top.begin(), top.at(anchor))) {
      continue;
    }
    const Access& own = accesses.of(member);
    for (auto it = std::next(top.at(member)); *std::prev(it) != anchor; ++it) {
      if (members.count(*it) == 0 && (isStreamBarrier(*it) || conflicts(accesses.of(*it), own))) {
        return false;
      }
    }
  }
  for (Expr* member : group) {
    top.erase(top.at(member));
  }
  Scope::Iterator position = anchor == nullptr ? top.begin() : std::next(top.at(anchor));
  for (Expr* member : group) {
    top.insert(position, member);
  }
  return true;
}

}  // namespace

void scheduleRecomputes(HostIrContainer& container) {
  Scope& top = container.topLevel();
  std::vector<Expr*> recomputes;
  for (Expr* expr : top) {
    if (isRecompute(container, expr)) {
      recomputes.push_back(expr);
    }
  }
  const Accesses accesses(top);
  for (Expr* recompute : recomputes) {
    const std::vector<Expr*> group = groupOf(top, accesses, recompute);
    if (!group.empty()) {
      hoistGroup(top, accesses, group);
    }
  }
}

}  // namespace hostir
