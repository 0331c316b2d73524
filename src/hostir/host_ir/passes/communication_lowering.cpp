#include "hostir/host_ir/passes/communication_lowering.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/collective_scheduling.h"
#include "hostir/host_ir/passes/gather_pipeline.h"
#include "hostir/host_ir/passes/pipeline_tail.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// `like`'s logical axes, unsharded, on `mesh`: where a device keeps its
// partial result before the collective combines them.
TensorView* unshardedLike(const TensorView* like, const TensorView* mesh_of) {
  TensorView* tv = freshTensorLike(like);
  if (mesh_of->hasDeviceMesh()) {
    tv->setDeviceMesh(mesh_of->getDeviceMesh());
  }
  return tv;
}

// Posts `plan`'s collectives of `my_device` (without Waits); returns them.
std::vector<Expr*> postCollectives(HostIrContainer& container, const CommunicationPlan& plan,
                                   int64_t my_device, TensorView* in, TensorView* out,
                                   std::vector<Expr*>& emitted) {
  std::vector<Expr*> posted;
  for (const Collective& collective : plan.collectivesFor(my_device)) {
    posted.push_back(IrBuilder::createInContainer<Communication>(&container, in, out,
                                                                 paramsOf(plan, collective)));
    emitted.push_back(posted.back());
  }
  return posted;
}

// Posts them and waits for each.
void appendCollectives(HostIrContainer& container, const CommunicationPlan& plan, int64_t my_device,
                       TensorView* in, TensorView* out, std::vector<Expr*>& emitted) {
  for (Expr* communication : postCollectives(container, plan, my_device, in, out, emitted)) {
    emitted.push_back(IrBuilder::createInContainer<Wait>(&container, communication));
  }
}

bool isProgramOutput(const HostIrContainer& container, const Val* val) {
  const std::vector<Val*>& outputs = container.outputs();
  return std::find(outputs.begin(), outputs.end(), val) != outputs.end();
}

void checkPipelinable(const Expr* gemm, const CommunicationPlan& plan) {
  const auto* a = gemm->input(0)->as<TensorView>();
  HOSTIR_CHECK(a->rank() == 2 && plan.scattered_axis == 0 && plan.stream_axis == 0,
               "the pipelined allgather + GEMM of\n", gemm->toString(1),
               "needs a 2-D first operand sharded on axis 0 and the output's Stream axis on its "
               "rows (axis 0)");
  HOSTIR_CHECK(plan.collectives.size() == 1, "the pipelined allgather + GEMM of\n",
               gemm->toString(1), "needs a 1-D mesh");
}

// The pipelined allgather + GEMM of a matmul/linear whose A is sharded on
// its rows and whose output rows are Stream-parallel, in chunks; with a
// `tail`, each chunk continues through it (see PipelineTail).
std::vector<Expr*> lowerPipelinedGemm(HostIrContainer& container, Expr* gemm,
                                      const CommunicationPlan& plan, int64_t my_device,
                                      const std::optional<PipelineTail>& tail,
                                      TensorView* shared_gather, Expr* input_gather) {
  auto* a = gemm->input(0)->as<TensorView>();
  TensorView* out = tensorOutput(gemm);
  std::optional<StreamAxis> stream = findStreamAxis(out);
  HOSTIR_ASSERT(stream.has_value(), "pipelined GEMM without a Stream axis");
  checkPipelinable(gemm, plan);
  std::vector<IterDomain*> out_shape = out->shapeDomain();

  std::vector<Expr*> emitted;
  // With a tail, the GEMM's output lives one chunk at a time (unless
  // read after the loop too); the tail's output is what the loop fills.
  const bool out_kept = !tail || tail->kept.count(out) != 0;
  const auto devices_count = static_cast<int64_t>(plan.collectives[0].team.size());
  GatherPipeline pipeline(container, a, devices_count, stream->loop_id);
  // The tail's output: this device's rows, each chunk's reduce-scattered
  // into tail_rows.
  TensorView* tail_rows =
      tail ? pipeline.shardToFill(tensorOutput(tail->contraction), emitted) : nullptr;
  auto* get_caller = IrBuilder::createInContainer<GetCurrentStream>(&container);
  auto* caller = get_caller->output(0)->as<Stream>();
  emitted.push_back(get_caller);
  // The output's chunk i of every device's rows lands in
  // out_blocks[:, chunk i rows].
  TensorView* out_blocks = out_kept ? pipeline.blocksToFill(out, emitted) : nullptr;
  std::unordered_map<const Val*, TensorView*> tail_blocks;
  if (tail) {
    tail_blocks = allocateTailBlocks(*tail, pipeline, emitted);
  }
  // The whole gathered A, for the later reader that would otherwise gather
  // A a second time: each chunk is gathered straight into its rows.
  if (shared_gather != nullptr) {
    pipeline.gatherInto(pipeline.blocksToFill(shared_gather, emitted));
  }
  std::vector<Communication*> allgathers = pipeline.start(caller, plan, my_device, emitted);
  // An allgather of a program input lowered right after this GEMM: posted
  // behind the prefetched chunks, ahead of the tail's reduce-scatters,
  // waited for after the loop.
  std::vector<Expr*> input_gathers;
  if (input_gather != nullptr) {
    TensorView* gathered = tensorOutput(input_gather);
    emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, gathered));
    input_gathers = postCollectives(container, classifyResharding(input_gather), my_device,
                                    input_gather->input(0)->as<TensorView>(), gathered, emitted);
  }

  StreamMainLoop main_loop(container, stream->loop_id, caller);
  Val* index = main_loop.index();
  std::vector<Expr*> body_exprs;
  std::vector<Expr*> reduce_scatters;  // the tail's, waited for after the loop
  auto [start, stop] = pipeline.bounds(index);
  Val* rows = sub(stop, start);
  TensorView* gathered_blocks = pipeline.arrivedBlocks(index, rows, allgathers, body_exprs);
  std::vector<Val*> out_chunk_extents{pipeline.devices(), rows};
  for (size_t i = 1; i < out_shape.size(); ++i) {
    out_chunk_extents.push_back(localExtent(out, out_shape[i]));
  }
  TensorView* out_chunk = makeTensorOfExtents(&container, out_chunk_extents, out->dtype());
  if (!out_kept) {
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
    TailChunk chunk =
        appendTailChunk(container, *tail, out_chunk, out_chunk_extents, pipeline.devices(),
                        {start, stop, rows}, tail_blocks, tail_rows, body_exprs);
    reduce_scatters =
        postCollectives(container, tail->plan, my_device, chunk.partial, chunk.rows, body_exprs);
  }
  for (Expr* expr : body_exprs) {
    main_loop.loop()->body().push_back(expr);
  }
  emitted.push_back(main_loop.finish());
  if (!reduce_scatters.empty()) {
    emitted.push_back(makeWaitsAfterLoop(container, stream->loop_id, reduce_scatters));
  }
  for (Expr* communication : input_gathers) {
    emitted.push_back(IrBuilder::createInContainer<Wait>(&container, communication));
  }
  if (tail) {
    dropStreamSplitsOfTail(*tail);
  }
  if (out_kept) {
    // A whole tensor now, the view of the loop's buffer: a Stream split
    // left on it would chunk its view again.
    stream->loop_id->parallelize(ParallelType::Serial);
  }
  return emitted;
}

// The GEMMs that read an allgathered tensor's rows, when the tensor is
// read by nothing else and each GEMM's output is Stream-parallel, in
// chunks, along the gathered rows, all alike (the attention's Q, K and V
// projections of the gathered tokens): the allgather can then be
// pipelined with them. Empty otherwise.
std::vector<Expr*> gemmsOfGatheredRows(HostIrContainer& container, const Expr* set,
                                       const CommunicationPlan& plan) {
  auto* in = set->input(0)->as<TensorView>();
  TensorView* gathered = tensorOutput(set);
  if (plan.pattern != ReshardingPattern::Set || plan.type != CollectiveType::Allgather ||
      plan.collectives.size() != 1 || plan.scattered_axis != 0 || in->rank() != 2 ||
      findStreamAxis(gathered).has_value() || isProgramOutput(container, gathered)) {
    return {};
  }
  // What exists where the set is: the pipeline replaces the set there, so
  // every other operand of the GEMMs must be computed before it.
  std::unordered_set<const Val*> available(container.inputs().begin(), container.inputs().end());
  for (const Expr* before : container.topLevel()) {
    if (before == set) {
      break;
    }
    available.insert(before->outputs().begin(), before->outputs().end());
  }
  std::vector<Expr*> gemms;
  std::optional<StreamAxis> first;
  for (const auto& [scope, expr] : allExprs(container)) {
    if (std::find(expr->inputs().begin(), expr->inputs().end(), gathered) == expr->inputs().end()) {
      continue;
    }
    if (scope != &container.topLevel() || (!expr->isA<MatmulOp>() && !expr->isA<LinearOp>()) ||
        expr->input(0) != gathered ||
        std::count(expr->inputs().begin(), expr->inputs().end(), gathered) != 1 ||
        isResharding(expr) ||
        !std::all_of(expr->inputs().begin() + 1, expr->inputs().end(), [&](const Val* operand) {
          return available.count(operand) != 0 || operand->isA<Scalar>();
        })) {
      return {};
    }
    TensorView* out = tensorOutput(expr);
    std::optional<StreamAxis> axis = findStreamAxis(out);
    if (!axis || axis->chunk_size == nullptr ||
        mappedConsumerAxis(mapProducerToConsumer(expr, gathered), 0) != axis->logical_pos ||
        (first && !sameIteration(*first, *axis))) {
      return {};
    }
    first = first ? first : axis;
    gemms.push_back(expr);
  }
  return gemms;
}

// The allgather of A's rows pipelined with the GEMMs that read them
// (gemmsOfGatheredRows): the prefetch loop posts every chunk's allgather
// up front; iteration i waits for chunk i and runs every GEMM on each
// device's rows of it, writing those rows of the GEMM's whole output. The
// gathered tensor itself is never formed. The GEMMs' outputs lose their
// Stream split: they are whole tensors now, which later loops read as they
// need (the attention's query loop reads Q chunk by chunk, K and V whole).
std::vector<Expr*> lowerPipelinedGatheredGemms(HostIrContainer& container, Expr* set,
                                               const CommunicationPlan& plan, int64_t my_device,
                                               const std::vector<Expr*>& gemms) {
  auto* a = set->input(0)->as<TensorView>();
  StreamAxis stream = *findStreamAxis(tensorOutput(gemms.front()));
  const auto devices = static_cast<int64_t>(plan.collectives[0].team.size());
  std::vector<Expr*> emitted;
  GatherPipeline pipeline(container, a, devices, stream.loop_id);
  // Each GEMM's output, a view of the first rows of a buffer of every
  // device's c rows (device p's at p * c).
  std::unordered_map<const Expr*, TensorView*> buffers;
  for (Expr* gemm : gemms) {
    TensorView* out = tensorOutput(gemm);
    buffers[gemm] =
        pipeline.rowsToFill(out, logicalToShape(out, findStreamAxis(out)->logical_pos), emitted);
  }
  auto* get_caller = IrBuilder::createInContainer<GetCurrentStream>(&container);
  auto* caller = get_caller->output(0)->as<Stream>();
  emitted.push_back(get_caller);
  std::vector<Communication*> allgathers = pipeline.start(caller, plan, my_device, emitted);

  StreamMainLoop main_loop(container, stream.loop_id, caller);
  Val* index = main_loop.index();
  std::vector<Expr*> body;
  auto [start, stop] = pipeline.bounds(index);
  Val* rows = sub(stop, start);
  TensorView* blocks = pipeline.arrivedBlocks(index, rows, allgathers, body);
  Val* width = a->shapeDomain()[1]->extent();
  for (int64_t device = 0; device < devices; ++device) {
    // Device `device`'s rows of the chunk are rows [offset + start, offset
    // + stop) of the gathered tensor.
    TensorView* block = makeTensorOfExtents(&container, {rows, width}, a->dtype());
    Val* position = IrBuilder::createInContainer<Scalar>(&container, device);
    body.push_back(
        IrBuilder::createInContainer<HirAliasSelect>(&container, blocks, block, 0, position));
    Val* offset = mul(position, pipeline.blockRows());
    for (Expr* gemm : gemms) {
      TensorView* out = tensorOutput(gemm);
      const int64_t dim = logicalToShape(out, findStreamAxis(out)->logical_pos);
      std::vector<Val*> extents;
      const std::vector<IterDomain*> shape = out->shapeDomain();
      for (size_t i = 0; i < shape.size(); ++i) {
        extents.push_back(static_cast<int64_t>(i) == dim ? rows : localExtent(out, shape[i]));
      }
      TensorView* rows_out = makeTensorOfExtents(&container, extents, out->dtype());
      body.push_back(IrBuilder::createInContainer<SliceOp>(
          &container, std::vector<Val*>{buffers.at(gemm), add(offset, start), add(offset, stop)},
          std::vector<Val*>{rows_out}, std::vector<Attribute>{dim}));
      std::vector<Val*> inputs = gemm->inputs();
      inputs[0] = block;
      body.push_back(gemm->newObject(&container, inputs, {rows_out}, gemm->attributes(),
                                     gemm->attributeVals()));
    }
  }
  for (Expr* expr : body) {
    main_loop.loop()->body().push_back(expr);
  }
  emitted.push_back(main_loop.finish());
  for (Expr* gemm : gemms) {
    findStreamAxis(tensorOutput(gemm))->loop_id->parallelize(ParallelType::Serial);
  }
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

// A reduction over the sharded axis whose input is Stream-parallel along
// the axis the result is scattered on (the attention's per-head outputs,
// chunked by query rows in token order): the partial sum gets the input's
// Stream split, so stream_parallelization computes it chunk by chunk in the
// input's loop, and the ReduceScatter joins that loop too: each chunk's
// rows of the last device are reduce-scattered, with the same rows of every
// other device (computed by earlier iterations), as soon as that chunk is
// computed (stream_parallelization, addRowsReduceScatter). nullopt: not
// this case, lowered whole.
std::optional<std::vector<Expr*>> lowerChunkedReduction(HostIrContainer& container, Expr* expr,
                                                        const CommunicationPlan& plan,
                                                        int64_t my_device) {
  auto* in = expr->input(0)->as<TensorView>();
  TensorView* out = tensorOutput(expr);
  std::optional<StreamAxis> stream = findStreamAxis(in);
  if (!stream || stream->chunk_size == nullptr || plan.type != CollectiveType::ReduceScatter ||
      plan.collectives.size() != 1 || plan.scattered_axis != 0) {
    return std::nullopt;
  }
  const int64_t pos = mappedConsumerAxis(mapProducerToConsumer(expr, in), stream->logical_pos);
  if (pos < 0 || logicalToShape(out, pos) != plan.scattered_axis) {
    return std::nullopt;
  }
  TensorView* partial = unshardedLike(out, in);  // unsharded: its loop axes are its logical ones
  partial->split(pos, stream->loop_id->extent(), /*inner_split=*/false);
  partial->axis(pos)->parallelize(ParallelType::Stream);
  std::vector<Expr*> emitted;
  emitted.push_back(expr->newObject(&container, expr->inputs(), {partial}, expr->attributes(),
                                    expr->attributeVals()));
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
  appendCollectives(container, plan, my_device, partial, out, emitted);
  return emitted;
}

std::vector<Expr*> lowerResharding(HostIrContainer& container, Expr* expr, int64_t my_device,
                                   const std::optional<PipelineTail>& tail,
                                   TensorView* shared_gather, Expr* input_gather) {
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
      if (std::optional<std::vector<Expr*>> chunked =
              lowerChunkedReduction(container, expr, plan, my_device)) {
        return *chunked;
      }
      [[fallthrough]];
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
      return lowerPipelinedGemm(container, expr, plan, my_device, tail, shared_gather,
                                input_gather);
  }
  HOSTIR_ASSERT(false, "unknown ReshardingPattern");
}

// A later top-level allgather of the pipelined GEMM's A onto the same
// team (the backward's wgrad reads dy gathered whole, the dgrad reads it
// through the pipeline; a forward under save="gathered" returns x gathered
// whole, its linear reads it through the pipeline): the pipeline's chunks already bring every row
// of A, so the loop fills that set's output too and the set is dropped: A crosses the link once.
// nullptr when there is none.
Expr* laterGatherOfPipelinedInput(HostIrContainer& container, Scope::Iterator gemm_position,
                                  const CommunicationPlan& gemm_plan) {
  const Val* a = (*gemm_position)->input(0);
  for (auto it = std::next(gemm_position); it != container.topLevel().end(); ++it) {
    Expr* expr = *it;
    if (!expr->isA<LoadStoreOp>() || expr->input(0) != a || !isResharding(expr)) {
      continue;
    }
    TensorView* gathered = tensorOutput(expr);
    CommunicationPlan plan = classifyResharding(expr);
    if (plan.pattern == ReshardingPattern::Set && plan.type == CollectiveType::Allgather &&
        plan.scattered_axis == 0 && plan.collectives.size() == 1 &&
        plan.collectives[0].team == gemm_plan.collectives[0].team && gathered->rank() == 2 &&
        !findStreamAxis(gathered).has_value()) {
      return expr;
    }
  }
  return nullptr;
}

bool livesElsewhere(const Val* val, int64_t my_device) {
  const auto* tv = dynamic_cast<const TensorView*>(val);
  return tv != nullptr && tv->hasDeviceMesh() && !tv->getDeviceMesh().has(my_device);
}

}  // namespace

void lowerReshardingToCommunication(HostIrContainer& container, int64_t my_device) {
  moveInputGathersAheadOfReduceScatters(container);
  Scope& top = container.topLevel();
  for (auto it = top.begin(); it != top.end();) {
    Expr* expr = *it;
    bool fusion_op = hasTrait(expr, OpTrait::AtenEvaluable);
    if (!fusion_op || !isResharding(expr)) {
      ++it;
      continue;
    }
    const CommunicationPlan plan = classifyResharding(expr);
    if (std::vector<Expr*> gemms = gemmsOfGatheredRows(container, expr, plan); !gemms.empty()) {
      std::vector<Expr*> replacement =
          lowerPipelinedGatheredGemms(container, expr, plan, my_device, gemms);
      for (Expr* gemm : gemms) {
        top.erase(gemm);
      }
      it = top.replace(it, replacement);
      std::advance(it, static_cast<std::ptrdiff_t>(replacement.size()));
      continue;
    }
    std::optional<PipelineTail> tail;
    Expr* shared_set = nullptr;
    if (plan.pattern == ReshardingPattern::PipelinedAllgatherGemm) {
      tail = findPipelineTail(container, expr);
      shared_set = laterGatherOfPipelinedInput(container, it, plan);
    }
    // moveInputGathersAheadOfReduceScatters stopped an input's gather right
    // after this GEMM: with a tail (reduce-scatters in the loop) it is
    // posted between the prefetch loop and the loop.
    Expr* input_gather = nullptr;
    if (tail && std::next(it) != top.end() && *std::next(it) != shared_set &&
        isGatherOfProgramInput(container, *std::next(it)) &&
        gemmsOfGatheredRows(container, *std::next(it), classifyResharding(*std::next(it)))
            .empty()) {
      input_gather = *std::next(it);
    }
    if (tail) {
      // The operands its pointwise ops read whole are computed first (before
      // the lowering, which may bind what they write to padded blocks ahead
      // of them: GatherPipeline::blocksToRead).
      for (Expr* hoisted : tail->hoisted) {
        top.erase(std::find(std::next(it), top.end(), hoisted));
        top.insert(it, hoisted);
      }
    }
    std::vector<Expr*> replacement =
        lowerResharding(container, expr, my_device, tail,
                        shared_set == nullptr ? nullptr : tensorOutput(shared_set), input_gather);
    if (shared_set != nullptr) {
      top.erase(std::find(std::next(it), top.end(), shared_set));
    }
    if (input_gather != nullptr) {
      top.erase(input_gather);
    }
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
