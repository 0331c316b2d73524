#include "hostir/host_ir/passes/stream_parallelization.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

bool isPointwise(const Expr* expr) {
  return hasTrait(expr, OpTrait::Pointwise);
}

bool isStreamParallelizable(const Expr* expr) {
  return hasTrait(expr, OpTrait::StreamParallelizable);
}

// Host IR nodes (allocations, loops, communications) are already lowered.
bool isFusionOp(const Expr* expr) {
  return hasTrait(expr, OpTrait::AtenEvaluable) || expr->isA<PostOnStream>();
}

// The expr's output Stream axis, validating what the pass cannot lower.
std::optional<StreamAxis> streamAxisOf(const Expr* expr) {
  if (!isFusionOp(expr)) {
    return std::nullopt;
  }
  for (Val* output : expr->outputs()) {
    auto* tv = dynamic_cast<TensorView*>(output);
    if (tv == nullptr) {
      continue;
    }
    std::optional<StreamAxis> axis = findStreamAxis(tv);
    if (!axis) {
      continue;
    }
    HOSTIR_CHECK(
        isStreamParallelizable(expr), tv->toInlineString(),
        " has a Stream axis but is computed by\n", expr->toString(1),
        "which stream parallelization does not support; supported: set, unary, binary, where, "
        "reduction, broadcast, matmul and linear");
    return axis;
  }
  return std::nullopt;
}

// A GEMM in a stream loop (its output has a Stream axis) cannot read an
// operand chunked along the axis it sums over.
void checkContraction(const Expr* expr) {
  if (!expr->isA<MatmulOp>() && !expr->isA<LinearOp>()) {
    return;
  }
  for (TensorView* operand : tensorInputs(expr)) {
    std::optional<StreamAxis> axis = findStreamAxis(operand);
    HOSTIR_CHECK(!axis || axis->logical_pos != contractedAxis(expr, operand), "the Stream axis of ",
                 operand->toInlineString(), " is the contraction (K) axis of\n", expr->toString(1),
                 "a contracted axis cannot be stream-parallel; parallelize M, N or a batch axis");
  }
}

// A slice of `tv` as this device holds it: `tv`'s logical axes at their
// local (per-device) extents, the axis at `logical_pos` dropped (nullptr
// `chunk_extent`) or of extent `chunk_extent`. Slices carry no sharding:
// they are views of the local buffer.
TensorView* localSliceTensor(const TensorView* tv, int64_t logical_pos, Val* chunk_extent) {
  std::vector<IterDomain*> ids;
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  for (size_t i = 0; i < logical.size(); ++i) {
    Val* extent = logical[i]->isReduction() ? logical[i]->extent() : localExtent(tv, logical[i]);
    if (static_cast<int64_t>(i) == logical_pos) {
      if (chunk_extent == nullptr) {
        continue;
      }
      extent = chunk_extent;
    }
    ids.push_back(
        IrBuilder::createInContainer<IterDomain>(tv->container(), extent, logical[i]->iterType()));
  }
  return makeTensorOver(tv->container(), ids, tv->dtype());
}

// Builds one main loop (stream_loop.h): slices every tensor once and
// rewrites the exprs onto the slices.
class StreamLoopBuilder {
 public:
  StreamLoopBuilder(HostIrContainer& container, const StreamAxis& axis, Stream* caller_stream)
      : container_(container),
        axis_(axis),
        main_loop_(container, axis.loop_id, caller_stream),
        index_(main_loop_.index()),
        loop_(main_loop_.loop()) {}

  // Whether `expr` can join: every tensor it reads that this loop produces
  // is read along that tensor's Stream axis.
  bool canAdd(const Expr* expr) const {
    if (const auto* communication = dynamic_cast<const Communication*>(expr)) {
      return canAddCommunication(communication);
    }
    if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
      return chunked_communications_.count(wait->communication()) != 0;
    }
    auto axis = streamAxisOf(expr);
    if (!axis || !sameIteration(*axis, axis_)) {
      return false;
    }
    for (TensorView* input : tensorInputs(expr)) {
      if (communicated_.count(input) != 0) {
        return false;  // complete only after the loop's Waits, which follow it
      }
      auto produced = produced_.find(input);
      if (produced == produced_.end()) {
        continue;
      }
      if (mappedInput(expr, input, axis->logical_pos) != produced->second) {
        return false;
      }
    }
    return true;
  }

  void add(const Expr* expr) {
    if (const auto* communication = dynamic_cast<const Communication*>(expr)) {
      addRowsReduceScatter(communication);
      return;
    }
    if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
      deferred_waits_.push_back(chunked_communications_.at(wait->communication()));
      return;
    }
    StreamAxis axis = *streamAxisOf(expr);
    TensorView* out = tensorOutput(expr);
    std::vector<Val*> inputs;
    int64_t removed_input_dim = -1;
    for (Val* input : expr->inputs()) {
      auto* tv = dynamic_cast<TensorView*>(input);
      if (tv == nullptr) {
        inputs.push_back(input);
        continue;
      }
      int64_t pos = mappedInput(expr, tv, axis.logical_pos);
      if (pos >= 0) {
        removed_input_dim = logicalToShape(tv, pos);
        inputs.push_back(sliceOf(tv, pos));
      } else if (int64_t broadcast_pos = alignedBroadcast(expr, tv, axis.logical_pos);
                 broadcast_pos >= 0 && axis.chunk_size == nullptr) {
        inputs.push_back(selectFirst(tv, broadcast_pos));
      } else {
        inputs.push_back(tv);  // not split along the loop: every slice reads all of it
      }
    }
    TensorView* out_slice = sliceOf(out, axis.logical_pos);
    produced_[out] = axis.logical_pos;
    std::vector<Attribute> attributes = expr->attributes();
    if (axis.chunk_size == nullptr) {
      adjustAttributes(expr, axis.logical_pos, removed_input_dim, attributes);
    }
    loop_->body().push_back(
        expr->newObject(&container_, inputs, {out_slice}, attributes, expr->attributeVals()));
    outputs_.push_back(out);
  }

  ForLoop* finish() {
    return main_loop_.finish();
  }

  // The chunked reduce-scatters' Waits, after the main loop
  // (makeWaitsAfterLoop); nullptr without any.
  ForLoop* waitsAfter() const {
    return deferred_waits_.empty() ? nullptr
                                   : makeWaitsAfterLoop(container_, axis_.loop_id, deferred_waits_);
  }

  const std::vector<TensorView*>& outputs() const {
    return outputs_;
  }

  // Appends `allocation` (an Allocate, or another expr run before the loop)
  // to `exprs`, or for a tensor the loop pads, the padded buffer's
  // allocation and the view.
  void appendBeforeLoop(Expr* allocation, std::vector<Expr*>& exprs) const {
    const auto* allocate = dynamic_cast<const Allocate*>(allocation);
    auto padded = allocate == nullptr ? padded_allocations_.end()
                                      : padded_allocations_.find(allocate->buffer());
    if (padded == padded_allocations_.end()) {
      exprs.push_back(allocation);
      return;
    }
    exprs.insert(exprs.end(), padded->second.begin(), padded->second.end());
  }

  // What runs after the loop and its Waits: the uneven reduce-scatters'
  // last rows.
  const std::vector<Expr*>& afterLoop() const {
    return after_loop_;
  }

  // Whether the loop computes or writes `val` (an op's output, or a buffer
  // a chunked collective fills).
  bool writes(const Val* val) const {
    return std::find(outputs_.begin(), outputs_.end(), val) != outputs_.end() ||
           communicated_.count(val) != 0;
  }

 private:
  // A reduce-scatter of the rows this loop computes, chunk by chunk, onto
  // the team's rows (communication_lowering, lowerChunkedReduction): see
  // addRowsReduceScatter. Other collectives move data across the Stream
  // axis and stay whole, after the loop.
  bool canAddCommunication(const Communication* communication) const {
    auto produced = produced_.find(communication->in());
    return produced != produced_.end() &&
           communication->type() == CommunicationType::ReduceScatter &&
           axis_.chunk_size != nullptr && !findStreamAxis(communication->out()).has_value() &&
           communication->scatteredAxis() == 0 &&
           logicalToShape(communication->in(), produced->second) == 0;
  }

  // The loop walks the rows of the d members' outputs in order: member r's
  // rows are rows [r·c, r·c + its rows) of the input, c = ceilDiv(n, d) the
  // first member's rows (torch.chunk: the last members may hold fewer, or
  // none). Chunk j's rows of the last member, local rows [lo, hi), complete
  // the reduce-scatter of local rows [lo, hi) of every member, whose other
  // rows earlier iterations computed (on other worker streams: the
  // iterations holding rows r·c + lo and r·c + hi - 1 are synced with).
  // So iteration j reduce-scatters those rows right after computing them;
  // iterations before the last member's rows post an empty one (nothing
  // moves). On 2 members the first half of the loop computes and the
  // second half also reduces, each chunk's rows while the next computes.
  // With uneven shards the local rows the last member does not hold, [its
  // rows, c), are reduce-scattered after the loop (paddedReduceScatter).
  void addRowsReduceScatter(const Communication* communication) {
    TensorView* in = communication->in();
    TensorView* out = communication->out();
    const auto members = static_cast<int64_t>(communication->team().size());
    Val* zero = constant(0);
    Val* block_rows = largestLocalExtent(out, out->shapeDomain()[0]);
    const int64_t in_axis = produced_.at(in);
    Val* rows_in = in->getLogicalDomain()[static_cast<size_t>(in_axis)]->extent();
    auto [start, stop] = chunkBounds(index_, axis_.chunk_size, rows_in);
    Val* last_member_start = mul(constant(members - 1), block_rows);
    auto local = [&](Val* row) {
      return minimum(maximum(sub(row, last_member_start), zero), block_rows);
    };
    Val* lo = local(start);
    Val* hi = local(stop);
    PaddedReduceScatter padded = paddedReduceScatter(communication, members, block_rows);
    Scope& body = loop_->body();
    for (int64_t member = 0; member + 1 < members; ++member) {
      Val* offset = mul(constant(member), block_rows);
      for (Val* row : {lo, maximum(sub(hi, constant(1)), lo)}) {
        Val* iteration = div(hostir::add(offset, row), axis_.chunk_size);
        body.push_back(IrBuilder::createInContainer<Synchronize>(
            &container_, makeWorkerStream(container_, iteration)));
      }
    }
    std::vector<Expr*> exprs;
    Expr* chunked = postRows(communication, padded, lo, hi, exprs);
    for (Expr* expr : exprs) {
      body.push_back(expr);
    }
    chunked_communications_[communication] = chunked;
    communicated_.insert(out);
    // After the loop (every iteration synced with the caller): the rows the
    // last member lacks, [min(its rows, c), c); none when shards are even.
    Val* last_member_rows = minimum(maximum(sub(rows_in, last_member_start), zero), block_rows);
    Expr* tail = postRows(communication, padded, last_member_rows, block_rows, after_loop_);
    after_loop_.push_back(IrBuilder::createInContainer<Wait>(&container_, tail));
  }

  // A chunked reduce-scatter's input (n rows, unsharded) as the first n rows
  // of a [d·c, ...] buffer viewed [d, c, ...], and its output (this
  // member's rows) as the first rows of a [c, ...] buffer (the output
  // itself on the first member), allocated before the loop in place of
  // their Allocates (allocate): every member slices the same rows of both.
  struct PaddedReduceScatter {
    TensorView* in_blocks;
    TensorView* out_rows;
  };

  PaddedReduceScatter paddedReduceScatter(const Communication* communication, int64_t members,
                                          Val* block_rows) {
    TensorView* in = communication->in();
    TensorView* out = communication->out();
    std::vector<Val*> rest;
    std::vector<IterDomain*> out_shape = out->shapeDomain();
    for (size_t i = 1; i < out_shape.size(); ++i) {
      rest.push_back(localExtent(out, out_shape[i]));
    }
    auto tensor = [&](std::vector<Val*> extents, const TensorView* like) {
      extents.insert(extents.end(), rest.begin(), rest.end());
      return makeTensorOfExtents(&container_, extents, like->dtype());
    };
    std::vector<Expr*>& in_allocation = padded_allocations_[in];
    TensorView* in_buffer = tensor({mul(constant(members), block_rows)}, in);
    in_allocation.push_back(IrBuilder::createInContainer<Allocate>(&container_, in_buffer));
    in_allocation.push_back(firstRows(in_buffer, in));
    TensorView* in_blocks = tensor({constant(members), block_rows}, in);
    in_allocation.push_back(IrBuilder::createInContainer<ReshapeOp>(
        &container_, std::vector<Val*>{in_buffer}, std::vector<Val*>{in_blocks},
        std::vector<Attribute>{}));
    if (!mayHoldFewerRows(out, out_shape[0])) {
      return {in_blocks, out};
    }
    TensorView* out_buffer = tensor({block_rows}, out);
    padded_allocations_[out] = {IrBuilder::createInContainer<Allocate>(&container_, out_buffer),
                                firstRows(out_buffer, out)};
    return {in_blocks, out_buffer};
  }

  // `view` = the first rows of `buffer` (as many as `view` has).
  Expr* firstRows(TensorView* buffer, TensorView* view) {
    return IrBuilder::createInContainer<SliceOp>(
        &container_, std::vector<Val*>{buffer, constant(0), localShape(view).at(0)},
        std::vector<Val*>{view}, std::vector<Attribute>{int64_t{0}});
  }

  // Appends to `exprs` the reduce-scatter of local rows [lo, hi) of every
  // member; returns it.
  Expr* postRows(const Communication* communication, const PaddedReduceScatter& padded, Val* lo,
                 Val* hi, std::vector<Expr*>& exprs) {
    Val* rows = sub(hi, lo);
    auto rowsOf = [&](TensorView* tv, int64_t dim) {
      std::vector<Val*> extents = localShape(tv);
      extents.at(static_cast<size_t>(dim)) = rows;
      TensorView* slice = makeTensorOfExtents(&container_, extents, tv->dtype());
      exprs.push_back(IrBuilder::createInContainer<SliceOp>(
          &container_, std::vector<Val*>{tv, lo, hi}, std::vector<Val*>{slice},
          std::vector<Attribute>{dim}));
      return slice;
    };
    TensorView* in_rows = rowsOf(padded.in_blocks, 1);
    TensorView* out_rows = rowsOf(padded.out_rows, 0);
    Expr* posted =
        communication->newObject(&container_, {in_rows}, {out_rows}, communication->attributes(),
                                 communication->attributeVals());
    exprs.push_back(posted);
    return posted;
  }

  Val* constant(int64_t value) {
    return IrBuilder::createInContainer<Scalar>(&container_, value);
  }

  // The logical axis of `input` that feeds the output's axis, or -1.
  static int64_t mappedInput(const Expr* expr, const TensorView* input, int64_t out_pos) {
    return mappedProducerAxis(mapProducerToConsumer(expr, input), out_pos);
  }

  // For pointwise ops: the input's broadcast axis aligned with out_pos.
  static int64_t alignedBroadcast(const Expr* expr, const TensorView* input, int64_t out_pos) {
    if (!isPointwise(expr)) {
      return -1;
    }
    auto out_rank = static_cast<int64_t>(tensorOutput(expr)->getLogicalDomain().size());
    auto in_rank = static_cast<int64_t>(input->getLogicalDomain().size());
    int64_t pos = out_pos - (out_rank - in_rank);
    return pos >= 0 && input->getLogicalDomain()[static_cast<size_t>(pos)]->isBroadcast() ? pos
                                                                                          : -1;
  }

  TensorView* sliceOf(TensorView* tv, int64_t logical_pos) {
    auto it = slices_.find(tv);
    if (it != slices_.end()) {
      return it->second;
    }
    int64_t dim = logicalToShape(tv, logical_pos);
    TensorView* slice = nullptr;
    if (axis_.chunk_size == nullptr) {
      slice = localSliceTensor(tv, logical_pos, nullptr);
      loop_->body().push_back(
          IrBuilder::createInContainer<HirAliasSelect>(&container_, tv, slice, dim, index_));
    } else {
      Val* extent = tv->getLogicalDomain()[static_cast<size_t>(logical_pos)]->extent();
      auto [start, stop] = chunkBounds(index_, axis_.chunk_size, extent);
      slice = localSliceTensor(tv, logical_pos, sub(stop, start));
      loop_->body().push_back(IrBuilder::createInContainer<SliceOp>(
          &container_, std::vector<Val*>{tv, start, stop}, std::vector<Val*>{slice},
          std::vector<Attribute>{dim}));
    }
    slices_[tv] = slice;
    return slice;
  }

  TensorView* selectFirst(TensorView* tv, int64_t logical_pos) {
    TensorView* slice = localSliceTensor(tv, logical_pos, nullptr);
    loop_->body().push_back(IrBuilder::createInContainer<HirAliasSelect>(
        &container_, tv, slice, logicalToShape(tv, logical_pos),
        IrBuilder::createInContainer<Scalar>(&container_, int64_t{0})));
    return slice;
  }

  // Axis numbers in attributes refer to ranks that lose the looped axis.
  static void adjustAttributes(const Expr* expr, int64_t out_pos, int64_t removed_input_dim,
                               std::vector<Attribute>& attributes) {
    if (expr->isA<ReductionOp>() && removed_input_dim >= 0) {
      std::vector<int64_t> axes;
      for (int64_t axis : std::get<std::vector<int64_t>>(attributes[1])) {
        axes.push_back(axis > removed_input_dim ? axis - 1 : axis);
      }
      attributes[1] = axes;
    } else if (expr->isA<BroadcastOp>()) {
      auto flags = std::get<std::vector<int64_t>>(attributes[0]);
      flags.erase(flags.begin() + out_pos);
      attributes[0] = flags;
    }
  }

  HostIrContainer& container_;
  StreamAxis axis_;
  StreamMainLoop main_loop_;
  Val* index_;
  ForLoop* loop_;
  std::unordered_map<const TensorView*, TensorView*> slices_;
  std::unordered_map<const TensorView*, int64_t> produced_;
  std::vector<TensorView*> outputs_;
  std::unordered_map<const Expr*, Expr*> chunked_communications_;
  std::unordered_set<const Val*> communicated_;
  std::vector<Expr*> deferred_waits_;
  // Per tensor a chunked reduce-scatter reads or writes: the exprs that
  // allocate it as a view of a padded buffer (paddedReduceScatter).
  std::unordered_map<const Val*, std::vector<Expr*>> padded_allocations_;
  std::vector<Expr*> after_loop_;
};

// Whether `expr` can run before the loop `builder` is building: an op
// without a Stream axis that reads none of the loop's tensors, or an
// allocation. Other host IR nodes (communications, waits) keep their place.
bool canRunBefore(const Expr* expr, const StreamLoopBuilder& builder) {
  if (expr->isA<Allocate>()) {
    return !builder.writes(expr->as<Allocate>()->buffer());
  }
  if (!isFusionOp(expr) || streamAxisOf(expr).has_value()) {
    return false;
  }
  return std::none_of(expr->inputs().begin(), expr->inputs().end(),
                      [&](const Val* input) { return builder.writes(input); });
}

}  // namespace

void checkStreamAxes(const HostIrContainer& container) {
  for (Val* input : container.inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      HOSTIR_CHECK(!findStreamAxis(tv).has_value(), "program input ", tv->toInlineString(),
                   " has a Stream axis; inputs arrive whole, so stream-parallelize the tensors "
                   "computed from them instead");
    }
  }
  for (Expr* expr : container.topLevel()) {
    if (streamAxisOf(expr).has_value()) {
      checkContraction(expr);
    }
  }
}

void parallelizeStreams(HostIrContainer& container) {
  for (Val* input : container.inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      HOSTIR_CHECK(!findStreamAxis(tv).has_value(), "program input ", tv->toInlineString(),
                   " has a Stream axis; inputs arrive whole, so stream-parallelize the tensors "
                   "computed from them instead");
    }
  }
  Scope& top = container.topLevel();
  Stream* caller = nullptr;
  for (auto it = top.begin(); it != top.end();) {
    Expr* expr = *it;
    // A GEMM without a Stream axis of its own runs after the loops that
    // compute its operands, on whole tensors, whatever axis they were
    // chunked on (the backward's dV = Pᵀ·dO sums over the query chunks).
    std::optional<StreamAxis> axis = streamAxisOf(expr);
    if (!axis) {
      ++it;
      continue;
    }
    checkContraction(expr);
    if (caller == nullptr) {
      auto* get = IrBuilder::createInContainer<GetCurrentStream>(&container);
      caller = get->output(0)->as<Stream>();
      top.push_front(get);
    }
    StreamLoopBuilder builder(container, *axis, caller);
    builder.add(expr);
    // Ops without a Stream axis that read nothing the loop computes (the V
    // projection between softmax and P·V), and allocations, move before
    // the loop, so that the loop goes on past them.
    std::vector<Expr*> joined;
    std::vector<Expr*> hoisted;
    std::vector<Expr*> pending;
    for (auto next = std::next(it); next != top.end(); ++next) {
      if (builder.canAdd(*next)) {
        checkContraction(*next);
        builder.add(*next);
        joined.push_back(*next);
        hoisted.insert(hoisted.end(), pending.begin(), pending.end());
        pending.clear();
      } else if (canRunBefore(*next, builder)) {
        pending.push_back(*next);
      } else {
        break;
      }
    }
    std::vector<Expr*> replacement;
    for (Expr* done : hoisted) {
      builder.appendBeforeLoop(done, replacement);
    }
    for (TensorView* output : builder.outputs()) {
      builder.appendBeforeLoop(IrBuilder::createInContainer<Allocate>(&container, output),
                               replacement);
    }
    appendWorkerSync(container, axis->loop_id->extent(), caller, replacement);
    replacement.push_back(builder.finish());
    if (ForLoop* waits = builder.waitsAfter()) {
      replacement.push_back(waits);
    }
    replacement.insert(replacement.end(), builder.afterLoop().begin(), builder.afterLoop().end());
    // Drop the whole-tensor exprs the loop now computes slice by slice, and
    // the hoisted ones from where they were.
    for (Expr* done : joined) {
      top.erase(done);
    }
    for (Expr* done : hoisted) {
      top.erase(done);
    }
    it = top.replace(it, replacement);
    std::advance(it, static_cast<std::ptrdiff_t>(replacement.size()));
  }
}

}  // namespace hostir
