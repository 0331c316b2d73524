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
#include "hostir/host_ir/passes/current_streams.h"
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

// Whether `expr`, or an expr in its loop body (nested), is one `is` accepts.
template <typename Predicate>
bool anyInside(const Expr* expr, Predicate is) {
  if (is(expr)) {
    return true;
  }
  const auto* loop = dynamic_cast<const ForLoop*>(expr);
  return loop != nullptr && std::any_of(loop->body().begin(), loop->body().end(),
                                        [&](const Expr* inner) { return anyInside(inner, is); });
}

// A Communication, or a loop that posts one.
bool postsCollectives(const Expr* expr) {
  return anyInside(expr, [](const Expr* e) { return e->isA<Communication>(); });
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

// Whether a Wait may move past `expr` on its way to the program's end: the
// ops that group collectives or pair ranks' transfers stay put.
bool groupsTransfers(const Expr* expr) {
  return anyInside(expr, [](const Expr* e) {
    return e->isA<StartCoalescing>() || e->isA<EndCoalescing>() || e->isA<P2PCommunication>();
  });
}

// Moves a top-level Wait, or a loop of Waits, down to just before the first
// expr that reads or writes its collectives' buffers, not past a stream
// switch, a synchronization or a loop: a stream that synchronized with the
// blocked one before the Wait's new place (a pipeline's fork) would no
// longer wait for the collective. When nothing after it touches those
// buffers (the backward's reduce-scatters of dx, program outputs), it moves
// past all of that to the last place where the stream it blocks is current
// (the program's end): the compute after the pipeline (the wgrad of w2)
// then runs while the last chunks cross the link.
void sinkWaits(Scope& top, const ViewBases& bases, const CurrentStreams& streams, Expr* waits,
               const std::vector<const Expr*>& communications) {
  std::vector<Val*> buffers;
  for (const Expr* communication : communications) {
    buffers.insert(buffers.end(), communication->inputs().begin(), communication->inputs().end());
    buffers.insert(buffers.end(), communication->outputs().begin(), communication->outputs().end());
  }
  buffers = bases.withBases(buffers);
  auto touches = [&](const Expr* expr) {
    ValSet reads;
    ValSet writes;
    collectVals(expr, bases, reads, writes);
    return intersects(reads, buffers) || intersects(writes, buffers);
  };
  const Scope::Iterator after_waits = std::next(top.at(waits));
  Scope::Iterator landing = after_waits;
  const CurrentStreams::Id blocked = streams.before(waits);
  const bool untouched_after =
      blocked != nullptr && std::none_of(after_waits, top.end(), [&](const Expr* expr) {
        return touches(expr) || groupsTransfers(expr);
      });
  if (untouched_after) {
    for (Scope::Iterator position = after_waits; position != top.end();) {
      ++position;
      if ((position == top.end() ? streams.atEnd() : streams.before(*position)) == blocked) {
        landing = position;
      }
    }
  } else {
    while (landing != top.end() && !isStreamBarrier(*landing) && !(*landing)->isA<ForLoop>() &&
           !touches(*landing)) {
      ++landing;
    }
  }
  if (landing != after_waits) {
    top.erase(top.at(waits));
    top.insert(landing, waits);
  }
}

// A top-level loop that does nothing but post collectives: a pipeline's
// prefetch loop (index arithmetic, views of its slots, Communications).
bool isPrefetchLoop(const Expr* expr) {
  const auto* loop = dynamic_cast<const ForLoop*>(expr);
  if (loop == nullptr || !postsCollectives(loop)) {
    return false;
  }
  return std::all_of(loop->body().begin(), loop->body().end(), [](const Expr* inner) {
    return inner->isA<Communication>() || inner->isA<SliceOp>() || inner->isA<HirAliasSelect>() ||
           inner->isA<ReshapeOp>() ||
           std::all_of(inner->outputs().begin(), inner->outputs().end(),
                       [](const Val* out) { return out->vtype() == ValType::Scalar; });
  });
}

// The Communications a movable poster (a Communication or a prefetch loop)
// posts.
std::vector<const Communication*> postedBy(const Expr* poster) {
  if (const auto* communication = dynamic_cast<const Communication*>(poster)) {
    return {communication};
  }
  std::vector<const Communication*> result;
  for (const Expr* inner : poster->as<ForLoop>()->body()) {
    if (const auto* communication = dynamic_cast<const Communication*>(inner)) {
      result.push_back(communication);
    }
  }
  return result;
}

bool containsStreamSwitch(const Expr* expr) {
  return anyInside(expr, [](const Expr* e) { return e->isA<SetCurrentStream>(); });
}

// The top-level exprs before which the current stream is the caller's (the
// stream the program's inputs are ready on): so at the start; a
// SetCurrentStream to a stream that a GetCurrentStream bound while the
// caller's was current makes it so again; any other stream switch (a loop
// that sets its workers current) leaves another stream current.
std::unordered_set<const Expr*> callerCurrentPositions(const Scope& top) {
  std::unordered_set<const Expr*> result;
  std::unordered_set<const Val*> caller_streams;
  bool caller = true;
  for (const Expr* expr : top) {
    if (caller) {
      result.insert(expr);
    }
    if (const auto* get = dynamic_cast<const GetCurrentStream*>(expr); get != nullptr && caller) {
      caller_streams.insert(get->stream());
    } else if (const auto* set = dynamic_cast<const SetCurrentStream*>(expr)) {
      caller = caller_streams.count(set->stream()) != 0;
    } else if (containsStreamSwitch(expr)) {
      caller = false;
    }
  }
  return result;
}

// Whether every input of every collective `poster` posts is a program
// input or a view of one: ready on the caller's stream wherever it is
// current, as long as nothing writes it.
bool readsOnlyProgramInputs(const HostIrContainer& container, const ViewBases& bases,
                            const Expr* poster) {
  const std::vector<Val*>& program_inputs = container.inputs();
  const std::vector<const Communication*> communications = postedBy(poster);
  return !communications.empty() &&
         std::all_of(communications.begin(), communications.end(), [&](const Communication* c) {
           return std::all_of(c->inputs().begin(), c->inputs().end(), [&](const Val* input) {
             ValSet viewed;
             bases.insertWithBases(input, viewed);
             return std::any_of(program_inputs.begin(), program_inputs.end(),
                                [&](const Val* in) { return viewed.count(in) != 0; });
           });
         });
}

// What a poster moving up reads: its own reads and the extents of the
// buffers allocated with it.
void addExtents(const TensorView* buffer, ValSet& reads) {
  for (const IterDomain* id : buffer->getLogicalDomain()) {
    reads.insert(id->extent());
  }
}

// A slice, reshape or alias select whose input is (a view of) a buffer in
// `writes`.
bool isViewOfWritten(const Expr* expr, const ValSet& writes) {
  return (expr->isA<SliceOp>() || expr->isA<ReshapeOp>() || expr->isA<HirAliasSelect>()) &&
         writes.count(expr->input(0)) != 0;
}

// Moves a top-level Communication, or a prefetch loop, with the
// allocations of the buffers it writes (and views of them), up to just
// after the last expr that writes what it reads or touches what it writes,
// never past another poster. It crosses stream switches and
// synchronizations only when it reads program inputs alone and lands where
// the caller's stream is current, as where it was: its inputs are ready
// there.
void hoistPoster(Scope& top, const HostIrContainer& container, const ViewBases& bases,
                 Expr* poster) {
  ValSet reads;
  ValSet writes;
  collectVals(poster, bases, reads, writes);
  const std::unordered_set<const Expr*> caller_current = callerCurrentPositions(top);
  const bool crosses_streams =
      caller_current.count(poster) != 0 && readsOnlyProgramInputs(container, bases, poster);
  std::unordered_set<const Expr*> allocations;
  Scope::Iterator position = top.at(poster);
  while (position != top.begin()) {
    const Expr* previous = *std::prev(position);
    if (const auto* allocate = dynamic_cast<const Allocate*>(previous);
        allocate != nullptr && writes.count(allocate->buffer()) != 0) {
      allocations.insert(allocate);  // moves with the poster
      addExtents(allocate->buffer(), reads);
      --position;
      continue;
    }
    if (isViewOfWritten(previous, writes)) {
      // A view of a buffer the poster writes (a pipeline gathering into a
      // whole tensor's rows): defined where the buffer is, so it moves too.
      allocations.insert(previous);
      ValSet view_writes;
      collectVals(previous, bases, reads, view_writes);
      --position;
      continue;
    }
    ValSet previous_reads;
    ValSet previous_writes;
    collectVals(previous, bases, previous_reads, previous_writes);
    const bool barrier = isStreamBarrier(previous) || containsStreamSwitch(previous);
    if ((barrier && !crosses_streams) || previous->isA<StartCoalescing>() ||
        previous->isA<EndCoalescing>() || previous->isA<P2PCommunication>() ||
        intersects(previous_writes, reads) || intersects(previous_reads, writes) ||
        intersects(previous_writes, writes)) {
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
  // Down to where the caller's stream is current (and the allocations
  // between stay with the poster).
  while (crosses_streams && position != top.at(poster) && caller_current.count(*position) == 0) {
    ++position;
  }
  std::vector<Expr*> moved;
  for (Scope::Iterator it = position; it != top.at(poster); ++it) {
    if (allocations.count(*it) != 0) {
      moved.push_back(*it);
    }
  }
  if (moved.size() == static_cast<size_t>(std::distance(position, top.at(poster)))) {
    return;  // nothing but its own allocations above it
  }
  moved.push_back(poster);
  while (allocations.count(*position) != 0) {
    ++position;  // lands before the first expr that stays
  }
  const Expr* anchor = *position;
  for (Expr* expr : moved) {
    top.erase(top.at(expr));
  }
  for (Expr* expr : moved) {
    top.insertBefore(anchor, expr);
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
  const CurrentStreams streams(top);
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
    sinkWaits(top, bases, streams, *it, collectivesWaitedBy(*it));
  }
  // The Communications and prefetch loops, in program order: each moves
  // up to the one placed before it at most.
  std::vector<Expr*> posters;
  for (Expr* expr : top) {
    if ((expr->isA<Communication>() && movable.count(expr) != 0) || isPrefetchLoop(expr)) {
      posters.push_back(expr);
    }
  }
  for (Expr* poster : posters) {
    hoistPoster(top, container, bases, poster);
  }
}

}  // namespace hostir
