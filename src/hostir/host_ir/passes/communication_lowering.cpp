#include "hostir/host_ir/passes/communication_lowering.h"

#include <algorithm>
#include <optional>
#include <string>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

CommunicationParams paramsOf(const CommunicationPlan& plan, const Collective& collective) {
  CommunicationParams params{.type = collective.type, .team = collective.team};
  if (hasRoot(params.type)) {
    params.root = collective.root;
  }
  if (isReduction(params.type)) {
    HOSTIR_ASSERT(plan.reduce_op.has_value(), "a reducing plan without a reduce op");
    params.reduce_op = *plan.reduce_op;
  }
  if (params.type == CommunicationType::ReduceScatter) {
    params.scattered_axis = plan.scattered_axis;
  }
  return params;
}

// `like`'s logical axes, unsharded, on `mesh`: where a device keeps its
// partial result before the collective combines them.
TensorView* unshardedLike(const TensorView* like, const TensorView* mesh_of) {
  TensorView* tv = freshTensorLike(like);
  if (mesh_of->hasDeviceMesh()) {
    tv->setDeviceMesh(mesh_of->getDeviceMesh());
  }
  return tv;
}

// A view of `in` with other extents (the evaluator binds it without a copy
// when `in` is contiguous).
TensorView* reshapeView(HostIrContainer& container, TensorView* in,
                        const std::vector<Val*>& extents, std::vector<Expr*>& emitted) {
  TensorView* out = makeTensorOfExtents(&container, extents, in->dtype());
  emitted.push_back(IrBuilder::createInContainer<ReshapeOp>(
      &container, std::vector<Val*>{in}, std::vector<Val*>{out}, std::vector<Attribute>{}));
  return out;
}

void appendCollectives(HostIrContainer& container, const CommunicationPlan& plan, int64_t my_device,
                       TensorView* in, TensorView* out, std::vector<Expr*>& emitted) {
  for (const Collective& collective : plan.collectivesFor(my_device)) {
    auto* communication = IrBuilder::createInContainer<Communication>(&container, in, out,
                                                                      paramsOf(plan, collective));
    emitted.push_back(communication);
    emitted.push_back(IrBuilder::createInContainer<Wait>(&container, communication));
  }
}

// What follows a pipelined GEMM chunk by chunk in its loop: the Stream
// split of the GEMM's rows carries through ops that keep rows apart. A chain
// of unary pointwise ops (e.g. GELU), then a row-parallel contraction (its K
// is the sharded axis) whose partial sums are reduce-scattered onto the same
// rows: chunk j of every device's rows reduces into chunk j of each device's
// output rows, so chunk j's reduce-scatter overlaps chunk j+1's GEMMs.
struct PipelineTail {
  // Unary ops to repeat on each chunk, in order (from the program or from
  // a segment made of them alone).
  std::vector<const Expr*> pointwise;
  Expr* contraction = nullptr;
  CommunicationPlan plan;
  // Top-level exprs the loop replaces.
  std::vector<Expr*> absorbed;
};

bool isProgramOutput(const HostIrContainer& container, const Val* val) {
  const std::vector<Val*>& outputs = container.outputs();
  return std::find(outputs.begin(), outputs.end(), val) != outputs.end();
}

// The unary ops of a segment that is one chain of them from its single
// input to its single output, in order; empty otherwise.
std::vector<const Expr*> unaryChainOf(const PostOnStream* post) {
  const Fusion* segment = post->hostUnit()->fusion();
  if (post->inputs().size() != 1 || post->outputs().size() != 1 || segment->inputs().size() != 1 ||
      segment->outputs().size() != 1) {
    return {};
  }
  std::vector<const Expr*> chain;
  const Val* current = segment->inputs().front();
  while (current != segment->outputs().front()) {
    if (current->uses().size() != 1 || !current->uses().front()->isA<UnaryOp>()) {
      return {};
    }
    chain.push_back(current->uses().front());
    current = chain.back()->output(0);
  }
  return chain;
}

// The tail of `gemm` if its output feeds one, else nullopt (the loop then
// ends with the GEMM, and its consumers run after the loop on whole tensors).
std::optional<PipelineTail> findPipelineTail(const HostIrContainer& container, const Expr* gemm) {
  PipelineTail tail;
  Val* current = gemm->output(0);
  for (;;) {
    if (isProgramOutput(container, current) || current->uses().size() != 1) {
      return std::nullopt;
    }
    Expr* use = current->uses().front();
    if (use->isA<UnaryOp>() && !isResharding(use) &&
        !findStreamAxis(use->output(0)->as<TensorView>()).has_value()) {
      tail.pointwise.push_back(use);
      tail.absorbed.push_back(use);
      current = use->output(0);
      continue;
    }
    if (const auto* post = dynamic_cast<const PostOnStream*>(use)) {
      std::vector<const Expr*> chain = unaryChainOf(post);
      if (chain.empty() || findStreamAxis(post->output(0)->as<TensorView>()).has_value()) {
        return std::nullopt;
      }
      tail.pointwise.insert(tail.pointwise.end(), chain.begin(), chain.end());
      tail.absorbed.push_back(use);
      current = use->output(0);
      continue;
    }
    if ((use->isA<LinearOp>() || use->isA<MatmulOp>()) && use->input(0) == current &&
        isResharding(use) && !findStreamAxis(tensorOutput(use)).has_value()) {
      CommunicationPlan plan = classifyResharding(use);
      if (plan.pattern != ReshardingPattern::ShardedContraction ||
          plan.type != CollectiveType::ReduceScatter || plan.scattered_axis != 0 ||
          plan.collectives.size() != 1 || current->as<TensorView>()->rank() != 2) {
        return std::nullopt;
      }
      tail.contraction = use;
      tail.absorbed.push_back(use);
      tail.plan = std::move(plan);
      return tail;
    }
    return std::nullopt;
  }
}

// The pipelined allgather + GEMM of a matmul/linear whose A is sharded on
// its rows and whose output rows are Stream-parallel, in chunks; with a
// `tail`, each chunk continues through it (see PipelineTail).
std::vector<Expr*> lowerPipelinedGemm(HostIrContainer& container, Expr* gemm,
                                      const CommunicationPlan& plan, int64_t my_device,
                                      const std::optional<PipelineTail>& tail) {
  auto* a = gemm->input(0)->as<TensorView>();
  TensorView* out = tensorOutput(gemm);
  std::optional<StreamAxis> stream = findStreamAxis(out);
  HOSTIR_ASSERT(stream.has_value(), "pipelined GEMM without a Stream axis");
  HOSTIR_CHECK(a->rank() == 2 && plan.scattered_axis == 0 && plan.stream_axis == 0,
               "the pipelined allgather + GEMM of\n", gemm->toString(1),
               "needs a 2-D first operand sharded on axis 0 and the output's Stream axis on its "
               "rows (axis 0)");
  HOSTIR_CHECK(plan.collectives.size() == 1, "the pipelined allgather + GEMM of\n",
               gemm->toString(1), "needs a 1-D mesh");
  const std::vector<int64_t>& team = plan.collectives[0].team;
  Val* devices =
      IrBuilder::createInContainer<Scalar>(&container, static_cast<int64_t>(team.size()));
  IterDomain* a_rows = a->shapeDomain()[0];
  Val* local_rows = localExtent(a, a_rows);
  Val* chunks = stream->loop_id->extent();
  Val* chunk_rows = ceilDiv(local_rows, chunks);
  std::vector<IterDomain*> out_shape = out->shapeDomain();

  std::vector<Expr*> emitted;
  // With a tail, the GEMM's output lives one chunk at a time; the tail's
  // output is what the loop fills.
  TensorView* filled = tail ? tensorOutput(tail->contraction) : out;
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, filled));
  auto* get_caller = IrBuilder::createInContainer<GetCurrentStream>(&container);
  auto* caller = get_caller->output(0)->as<Stream>();
  emitted.push_back(get_caller);
  // The output seen as [devices, local rows, ...]: chunk i of every device's
  // rows lands in out_blocks[:, chunk i rows].
  TensorView* out_blocks = nullptr;
  if (!tail) {
    std::vector<Val*> block_extents{devices, local_rows};
    for (size_t i = 1; i < out_shape.size(); ++i) {
      block_extents.push_back(localExtent(out, out_shape[i]));
    }
    out_blocks = reshapeView(container, out, block_extents, emitted);
  }
  // Every chunk's gathered rows, [chunks, devices * chunk rows, ...]: the
  // prefetch loop fills slot i, the compute loop reads it.
  std::vector<Val*> slots_extents{chunks, mul(devices, chunk_rows)};
  for (size_t i = 1; i < a->shapeDomain().size(); ++i) {
    slots_extents.push_back(a->shapeDomain()[i]->extent());
  }
  TensorView* gathered_slots = makeTensorOfExtents(&container, slots_extents, a->dtype());
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, gathered_slots));
  appendWorkerSync(container, chunks, caller, emitted);

  // Where this iteration's rows of the chunk are gathered.
  auto gathered_slot = [&](Val* index, Val* rows, std::vector<Expr*>& exprs) {
    std::vector<Val*> slot_extents(slots_extents.begin() + 1, slots_extents.end());
    TensorView* slot = makeTensorOfExtents(&container, slot_extents, a->dtype());
    exprs.push_back(
        IrBuilder::createInContainer<HirAliasSelect>(&container, gathered_slots, slot, 0, index));
    std::vector<Val*> gathered_extents = slot_extents;
    gathered_extents[0] = mul(devices, rows);
    TensorView* gathered = makeTensorOfExtents(&container, gathered_extents, a->dtype());
    Val* zero = IrBuilder::createInContainer<Scalar>(&container, int64_t{0});
    exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container, std::vector<Val*>{slot, zero, gathered_extents[0]}, std::vector<Val*>{gathered},
        std::vector<Attribute>{int64_t{0}}));
    return gathered;
  };

  // Prefetch loop: every chunk's allgather is posted up front, in chunk
  // order, from the stream that holds A. The team's channel puts them on the
  // link one after another, ahead of the tail's reduce-scatters, so chunk
  // i+1's rows arrive while chunk i computes. Every rank posts in this one
  // order: it is the program's.
  std::vector<Communication*> allgathers;
  {
    ForLoop* prefetch = makeStreamIndexLoop(container, stream->loop_id);
    Val* index = prefetch->index();
    std::vector<Expr*> exprs;
    auto [start, stop] = chunkBounds(index, chunk_rows, local_rows);
    Val* rows = sub(stop, start);
    TensorView* a_chunk =
        makeTensorOfExtents(&container, {rows, a->shapeDomain()[1]->extent()}, a->dtype());
    exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container, std::vector<Val*>{a, start, stop}, std::vector<Val*>{a_chunk},
        std::vector<Attribute>{int64_t{0}}));
    TensorView* gathered = gathered_slot(index, rows, exprs);
    for (const Collective& collective : plan.collectivesFor(my_device)) {
      auto* communication = IrBuilder::createInContainer<Communication>(
          &container, a_chunk, gathered, paramsOf(plan, collective));
      exprs.push_back(communication);
      allgathers.push_back(communication);
    }
    for (Expr* expr : exprs) {
      prefetch->body().push_back(expr);
    }
    emitted.push_back(prefetch);
  }

  StreamMainLoop main_loop(container, stream->loop_id, caller);
  Val* index = main_loop.index();
  std::vector<Expr*> body_exprs;
  auto [start, stop] = chunkBounds(index, chunk_rows, local_rows);
  Val* rows = sub(stop, start);
  // The Waits match the prefetch loop's posts in order: iteration i waits
  // for chunk i only, on the stream that computes it.
  TensorView* gathered = gathered_slot(index, rows, body_exprs);
  for (Communication* communication : allgathers) {
    body_exprs.push_back(IrBuilder::createInContainer<Wait>(&container, communication));
  }
  TensorView* gathered_blocks =
      reshapeView(container, gathered, {devices, rows, a->shapeDomain()[1]->extent()}, body_exprs);
  std::vector<Val*> out_chunk_extents{devices, rows};
  for (size_t i = 1; i < out_shape.size(); ++i) {
    out_chunk_extents.push_back(localExtent(out, out_shape[i]));
  }
  TensorView* out_chunk = makeTensorOfExtents(&container, out_chunk_extents, out->dtype());
  if (tail) {
    body_exprs.push_back(IrBuilder::createInContainer<Allocate>(&container, out_chunk));
  } else {
    body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container, std::vector<Val*>{out_blocks, start, stop}, std::vector<Val*>{out_chunk},
        std::vector<Attribute>{int64_t{1}}));
  }
  std::vector<Val*> gemm_inputs = gemm->inputs();
  gemm_inputs[0] = gathered_blocks;
  body_exprs.push_back(gemm->newObject(&container, gemm_inputs, {out_chunk}, gemm->attributes(),
                                       gemm->attributeVals()));
  if (tail) {
    // Pointwise ops on the chunk, then its partial product, reduce-scattered
    // into this device's rows [start, stop) of the tail's output.
    TensorView* chunk = out_chunk;
    for (const Expr* op : tail->pointwise) {
      TensorView* next =
          makeTensorOfExtents(&container, out_chunk_extents, tensorOutput(op)->dtype());
      std::vector<Val*> inputs = op->inputs();
      inputs[0] = chunk;
      body_exprs.push_back(
          op->newObject(&container, inputs, {next}, op->attributes(), op->attributeVals()));
      chunk = next;
    }
    Expr* contraction = tail->contraction;
    TensorView* y = tensorOutput(contraction);
    std::vector<IterDomain*> y_shape = y->shapeDomain();
    std::vector<Val*> partial_extents{devices, rows};
    for (size_t i = 1; i < y_shape.size(); ++i) {
      partial_extents.push_back(localExtent(y, y_shape[i]));
    }
    TensorView* partial = makeTensorOfExtents(&container, partial_extents, y->dtype());
    std::vector<Val*> contraction_inputs = contraction->inputs();
    contraction_inputs[0] = chunk;
    body_exprs.push_back(contraction->newObject(&container, contraction_inputs, {partial},
                                                contraction->attributes(),
                                                contraction->attributeVals()));
    std::vector<Val*> y_chunk_extents{rows};
    for (size_t i = 1; i < y_shape.size(); ++i) {
      y_chunk_extents.push_back(localExtent(y, y_shape[i]));
    }
    TensorView* y_chunk = makeTensorOfExtents(&container, y_chunk_extents, y->dtype());
    body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container, std::vector<Val*>{y, start, stop}, std::vector<Val*>{y_chunk},
        std::vector<Attribute>{int64_t{0}}));
    appendCollectives(container, tail->plan, my_device, partial, y_chunk, body_exprs);
  }
  for (Expr* expr : body_exprs) {
    main_loop.loop()->body().push_back(expr);
  }
  emitted.push_back(main_loop.finish());
  return emitted;
}

// A collective moves whole tensors; only a matmul/linear's gathered input
// is pipelined (PipelinedAllgatherGemm, docs/multidevice.md). A Stream axis
// on another collective's output would be dropped unseen, so it is an
// error. Checked against every collective of the plan, not only those this
// device joins: a device outside their teams must reject the program too
// (a Broadcast onto device 1 alone was rejected by device 1 only, and
// device 0 ran on to the cross-rank check with the next program).
void checkCollectiveOutputHasNoStreamAxis(const Expr* expr, const CommunicationPlan& plan,
                                          const TensorView* out) {
  if (plan.collectives.empty() || !findStreamAxis(out).has_value()) {
    return;
  }
  std::string collectives;
  for (const Collective& collective : plan.collectives) {
    collectives += (collectives.empty() ? "" : ", ") + std::string("(type=") +
                   toString(collective.type) + ", team=" + teamToString(collective.team) + ")";
  }
  HOSTIR_THROW("a Stream axis on a collective's output is not pipelined: ", out->toInlineString(),
               " is the output of\n", expr->toString(1), "which becomes the collectives ",
               collectives,
               ", moving it whole; remove the Stream split from it and stream-parallelize the "
               "tensors computed from it (a matmul or linear reading the gathered rows pipelines "
               "the allgather itself)");
}

std::vector<Expr*> lowerResharding(HostIrContainer& container, Expr* expr, int64_t my_device,
                                   const std::optional<PipelineTail>& tail) {
  CommunicationPlan plan = classifyResharding(expr);
  TensorView* out = tensorOutput(expr);
  if (plan.pattern != ReshardingPattern::PipelinedAllgatherGemm) {
    checkCollectiveOutputHasNoStreamAxis(expr, plan, out);
  }
  std::vector<Expr*> emitted;
  switch (plan.pattern) {
    case ReshardingPattern::Set: {
      emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
      appendCollectives(container, plan, my_device, expr->input(0)->as<TensorView>(), out, emitted);
      return emitted;
    }
    case ReshardingPattern::ReductionOverShardedAxis:
    case ReshardingPattern::ShardedContraction: {
      auto* first_input = expr->input(0)->as<TensorView>();
      TensorView* partial = unshardedLike(out, first_input);
      emitted.push_back(expr->newObject(&container, expr->inputs(), {partial}, expr->attributes(),
                                        expr->attributeVals()));
      emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
      appendCollectives(container, plan, my_device, partial, out, emitted);
      return emitted;
    }
    case ReshardingPattern::PipelinedAllgatherGemm:
      return lowerPipelinedGemm(container, expr, plan, my_device, tail);
  }
  HOSTIR_ASSERT(false, "unknown ReshardingPattern");
}

bool livesElsewhere(const Val* val, int64_t my_device) {
  const auto* tv = dynamic_cast<const TensorView*>(val);
  return tv != nullptr && tv->hasDeviceMesh() && !tv->getDeviceMesh().has(my_device);
}

}  // namespace

void lowerReshardingToCommunication(HostIrContainer& container, int64_t my_device) {
  Scope& top = container.topLevel();
  for (auto it = top.begin(); it != top.end();) {
    Expr* expr = *it;
    bool fusion_op = hasTrait(expr, OpTrait::AtenEvaluable);
    if (!fusion_op || !isResharding(expr)) {
      ++it;
      continue;
    }
    std::optional<PipelineTail> tail;
    if (classifyResharding(expr).pattern == ReshardingPattern::PipelinedAllgatherGemm) {
      tail = findPipelineTail(container, expr);
    }
    std::vector<Expr*> replacement = lowerResharding(container, expr, my_device, tail);
    if (tail) {
      // The tail now runs chunk by chunk inside the loop: drop its
      // whole-tensor exprs.
      for (Expr* done : tail->absorbed) {
        auto position = std::find(std::next(it), top.end(), done);
        HOSTIR_ASSERT(position != top.end(),
                      "a pipelined GEMM's tail is not in the top-level scope");
        top.erase(position);
      }
    }
    it = top.replace(it, replacement);
    std::advance(it, static_cast<std::ptrdiff_t>(replacement.size()));
  }
}

void removeOtherDevicesWork(HostIrContainer& container, int64_t my_device) {
  Scope& top = container.topLevel();
  for (auto it = top.begin(); it != top.end();) {
    Expr* expr = *it;
    bool elsewhere = false;
    if (const auto* allocate = dynamic_cast<const Allocate*>(expr)) {
      elsewhere = livesElsewhere(allocate->buffer(), my_device);
    } else if (!expr->isA<Communication>() && !expr->isA<Wait>() && !expr->outputs().empty()) {
      elsewhere = std::all_of(expr->outputs().begin(), expr->outputs().end(),
                              [&](const Val* out) { return livesElsewhere(out, my_device); });
    }
    it = elsewhere ? top.erase(it) : std::next(it);
  }
}

}  // namespace hostir
