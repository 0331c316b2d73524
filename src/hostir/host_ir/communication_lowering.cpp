#include "hostir/host_ir/communication_lowering.h"

#include <algorithm>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/stream_axis.h"
#include "hostir/host_ir/stream_parallelization.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

ReduceOp toReduceOp(ReductionOpType type) {
  switch (type) {
    case ReductionOpType::Sum: return ReduceOp::Sum;
    case ReductionOpType::Max: return ReduceOp::Max;
    case ReductionOpType::Min: return ReduceOp::Min;
  }
  HOSTIR_ASSERT(false, "unknown ReductionOpType");
}

CommunicationParams paramsOf(const CommunicationPlan& plan, const Collective& collective) {
  CommunicationParams params{.type = collective.type, .team = collective.team};
  if (hasRoot(params.type)) {
    params.root = collective.root;
  }
  if (isReduction(params.type)) {
    HOSTIR_ASSERT(plan.reduce_op.has_value(), "a reducing plan without a reduce op");
    params.reduce_op = toReduceOp(*plan.reduce_op);
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

// The pipelined allgather + GEMM of a matmul/linear whose A is sharded on
// its rows and whose output rows are Stream-parallel, in chunks.
std::vector<Expr*> lowerPipelinedGemm(HostIrContainer& container, Expr* gemm,
                                      const CommunicationPlan& plan, int64_t my_device) {
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
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
  auto* get_caller = IrBuilder::createInContainer<GetCurrentStream>(&container);
  auto* caller = get_caller->output(0)->as<Stream>();
  emitted.push_back(get_caller);
  // The output seen as [devices, local rows, ...]: chunk i of every device's
  // rows lands in out_blocks[:, chunk i rows].
  std::vector<Val*> block_extents{devices, local_rows};
  for (size_t i = 1; i < out_shape.size(); ++i) {
    block_extents.push_back(localExtent(out, out_shape[i]));
  }
  TensorView* out_blocks = reshapeView(container, out, block_extents, emitted);
  emitted.push_back(makeStreamSyncLoop(container, chunks, caller));
  emitted.push_back(IrBuilder::createInContainer<SetCurrentStream>(&container, caller));

  auto* index = IrBuilder::createInContainer<Scalar>(&container, kStreamIdx, DataType::Int64);
  auto* loop = IrBuilder::createInContainer<ForLoop>(&container, index, stream->loop_id);
  Stream* worker = makeWorkerStream(container, index);
  Scope& body = loop->body();
  std::vector<Expr*> body_exprs;
  body_exprs.push_back(IrBuilder::createInContainer<SetCurrentStream>(&container, worker));
  Val* start = mul(index, chunk_rows);
  Val* stop = minimum(add(start, chunk_rows), local_rows);
  Val* rows = sub(stop, start);
  // This device's rows of the chunk: a view of its shard of A.
  TensorView* a_chunk =
      makeTensorOfExtents(&container, {rows, a->shapeDomain()[1]->extent()}, a->dtype());
  body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
      &container, std::vector<Val*>{a, start, stop}, std::vector<Val*>{a_chunk},
      std::vector<Attribute>{int64_t{0}}));
  TensorView* gathered = makeTensorOfExtents(
      &container, {mul(devices, rows), a->shapeDomain()[1]->extent()}, a->dtype());
  body_exprs.push_back(IrBuilder::createInContainer<Allocate>(&container, gathered));
  appendCollectives(container, plan, my_device, a_chunk, gathered, body_exprs);
  TensorView* gathered_blocks =
      reshapeView(container, gathered, {devices, rows, a->shapeDomain()[1]->extent()}, body_exprs);
  std::vector<Val*> out_chunk_extents{devices, rows};
  for (size_t i = 1; i < out_shape.size(); ++i) {
    out_chunk_extents.push_back(localExtent(out, out_shape[i]));
  }
  TensorView* out_chunk = makeTensorOfExtents(&container, out_chunk_extents, out->dtype());
  body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
      &container, std::vector<Val*>{out_blocks, start, stop}, std::vector<Val*>{out_chunk},
      std::vector<Attribute>{int64_t{1}}));
  std::vector<Val*> gemm_inputs = gemm->inputs();
  gemm_inputs[0] = gathered_blocks;
  body_exprs.push_back(gemm->newObject(&container, gemm_inputs, {out_chunk}, gemm->attributes(),
                                       gemm->attributeVals()));
  body_exprs.push_back(IrBuilder::createInContainer<SetCurrentStream>(&container, caller));
  body_exprs.push_back(IrBuilder::createInContainer<Synchronize>(&container, worker));
  for (Expr* expr : body_exprs) {
    body.push_back(expr);
  }
  emitted.push_back(loop);
  return emitted;
}

std::vector<Expr*> lowerResharding(HostIrContainer& container, Expr* expr, int64_t my_device) {
  CommunicationPlan plan = classifyResharding(expr);
  TensorView* out = tensorOutput(expr);
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
      return lowerPipelinedGemm(container, expr, plan, my_device);
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
    bool fusion_op = tensorOutput(expr) != nullptr && !expr->isA<PostOnStream>() &&
                     !expr->isA<Communication>() && !expr->isA<Allocate>();
    if (!fusion_op || !isResharding(expr)) {
      ++it;
      continue;
    }
    std::vector<Expr*> replacement = lowerResharding(container, expr, my_device);
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
