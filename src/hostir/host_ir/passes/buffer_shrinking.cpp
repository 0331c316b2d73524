#include "hostir/host_ir/passes/buffer_shrinking.h"

#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// Every expr of a scope, loop bodies included, with the loop holding it.
void collect(const Scope& scope, const ForLoop* loop,
             std::vector<std::pair<Expr*, const ForLoop*>>& out) {
  for (Expr* expr : scope) {
    out.emplace_back(expr, loop);
    if (const auto* inner = dynamic_cast<const ForLoop*>(expr)) {
      collect(inner->body(), inner, out);
    }
  }
}

// Whether `expr` makes a slice of its input 0 (an alias a loop creates).
bool isSliceOfInput(const Expr* expr) {
  return expr->isA<HirAliasSelect>() || expr->isA<SliceOp>();
}

// Whether `loop` walks `axis`: a fused loop iterates the Stream axis of its
// first expr's output, which is a different IterDomain from (but iterates
// like) the Stream axes of the other tensors the loop computes.
bool iteratesLike(const ForLoop* loop, const StreamAxis& axis) {
  const IterDomain* id = loop->iterDomain();
  if (id == nullptr || !id->extent()->sameAs(axis.loop_id->extent())) {
    return false;
  }
  const auto* split =
      id->definition() == nullptr ? nullptr : dynamic_cast<const Split*>(id->definition());
  if (axis.chunk_size == nullptr) {
    return split == nullptr;
  }
  return split != nullptr && split->inner()->extent()->sameAs(axis.chunk_size);
}

// [slots, <tv's logical axes at this device's extents, the stream
// axis replaced by a chunk or dropped>].
TensorView* makeRing(HostIrContainer& container, const TensorView* tv, const StreamAxis& axis,
                     Val* slots) {
  std::vector<IterDomain*> ids{IrBuilder::createInContainer<IterDomain>(&container, slots)};
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  for (size_t i = 0; i < logical.size(); ++i) {
    if (static_cast<int64_t>(i) == axis.logical_pos) {
      if (axis.chunk_size != nullptr) {
        ids.push_back(IrBuilder::createInContainer<IterDomain>(&container, axis.chunk_size));
      }
      continue;
    }
    // A sharded axis holds this device's part only.
    Val* extent = logical[i]->isReduction() ? logical[i]->extent() : localExtent(tv, logical[i]);
    ids.push_back(
        IrBuilder::createInContainer<IterDomain>(&container, extent, logical[i]->iterType()));
  }
  return makeTensorOver(&container, ids, tv->dtype());
}

// A ring slot: the ring's axes after the first.
TensorView* makeSlot(HostIrContainer& container, const TensorView* ring) {
  std::vector<IterDomain*> ids;
  const std::vector<IterDomain*>& logical = ring->getLogicalDomain();
  for (size_t i = 1; i < logical.size(); ++i) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(&container, logical[i]->extent(),
                                                           logical[i]->iterType()));
  }
  return makeTensorOver(&container, ids, ring->dtype());
}

}  // namespace

void shrinkStreamBuffers(HostIrContainer& container) {
  std::vector<std::pair<Expr*, const ForLoop*>> all;
  collect(container.topLevel(), nullptr, all);

  // Where each tensor is read, and by which loop.
  std::unordered_map<const Val*, std::vector<std::pair<Expr*, const ForLoop*>>> readers;
  for (const auto& [expr, loop] : all) {
    for (Val* input : expr->inputs()) {
      readers[input].emplace_back(expr, loop);
    }
  }

  Val* number_of_streams = nullptr;
  std::unordered_map<const ForLoop*, Val*> slots_of_loop;
  Scope& top = container.topLevel();
  for (auto it = top.begin(); it != top.end(); ++it) {
    auto* allocate = dynamic_cast<Allocate*>(*it);
    if (allocate == nullptr || container.isOutput(allocate->buffer())) {
      continue;
    }
    TensorView* buffer = allocate->buffer();
    std::optional<StreamAxis> axis = findStreamAxis(buffer);
    const auto& uses = readers[buffer];
    if (!axis || uses.empty()) {
      continue;
    }
    // Only alias exprs of one stream loop may touch the buffer, and that
    // loop must be its producer's (an alias in the loop writes it).
    const ForLoop* loop = uses.front().second;
    bool local = loop != nullptr && iteratesLike(loop, *axis);
    for (const auto& [expr, user_loop] : uses) {
      local = local && user_loop == loop && isSliceOfInput(expr);
      // A slice of another iteration (e.g. index 0 of a broadcast) would
      // read a slot that this iteration does not own.
      if (local && expr->isA<HirAliasSelect>()) {
        local = expr->as<HirAliasSelect>()->index() == loop->index();
      }
    }
    if (!local) {
      continue;
    }
    if (number_of_streams == nullptr) {
      number_of_streams =
          IrBuilder::createInContainer<Scalar>(&container, kNumberOfStreams, DataType::Int64);
    }
    // A loop of fewer iterations than streams uses one slot per iteration:
    // the ring holds minimum(numberOfStreams, the loop's stop) slots, and the
    // same Val indexes them, so the extent and the index cannot disagree.
    auto [slots_it, fresh] = slots_of_loop.try_emplace(loop, nullptr);
    if (fresh) {
      slots_it->second = minimum(number_of_streams, loop->stop());
    }
    Val* slots = slots_it->second;
    TensorView* ring = makeRing(container, buffer, *axis, slots);
    Val* slot_index = mod(loop->index(), slots);
    Scope& body = const_cast<ForLoop*>(loop)->body();
    for (const auto& [expr, user_loop] : uses) {
      Val* slice =
          expr->isA<HirAliasSelect>() ? expr->as<HirAliasSelect>()->out() : expr->output(0);
      if (axis->chunk_size == nullptr) {
        body.replace(expr, {IrBuilder::createInContainer<HirAliasSelect>(
                               &container, ring, slice->as<TensorView>(), 0, slot_index)});
        continue;
      }
      // A chunk: the ring slot, then the chunk's rows of it (the last chunk
      // may be shorter than a slot).
      const auto* chunk = expr->as<SliceOp>();
      TensorView* slot = makeSlot(container, ring);
      Val* rows = sub(chunk->stop(), chunk->start());
      Expr* select =
          IrBuilder::createInContainer<HirAliasSelect>(&container, ring, slot, 0, slot_index);
      Expr* narrow = chunk->newObject(
          &container, {slot, IrBuilder::createInContainer<Scalar>(&container, int64_t{0}), rows},
          {slice}, chunk->attributes(), {});
      body.replace(expr, {select, narrow});
    }
    it = top.replace(it, {IrBuilder::createInContainer<Allocate>(&container, ring)});
  }
}

}  // namespace hostir
