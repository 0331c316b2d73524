#include "hostir/host_ir/passes/gather_pipeline.h"

#include <algorithm>
#include <unordered_set>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/pipeline_tail.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// With uneven shards a view of a padded buffer's first rows along an axis
// that is not the outermost is not contiguous (the attention's q, k, v
// [heads, tokens, hd]): the segments that read `whole` whole take it with
// its strides (a compiled kernel binds every stride but the innermost at
// run time; ATen takes any), so their inputs do not claim contiguity.
void acceptStridedReadsOf(HostIrContainer& container, const TensorView* whole) {
  for (Expr* expr : container.topLevel()) {
    auto* segment = dynamic_cast<PostOnStream*>(expr);
    if (segment == nullptr) {
      continue;
    }
    for (size_t i = 0; i < segment->inputs().size(); ++i) {
      if (segment->input(i) == whole) {
        TensorDomain* domain =
            segment->hostUnit()->fusion()->inputs().at(i)->as<TensorView>()->domain();
        domain->setContiguity(std::vector<bool>(domain->contiguity().size(), false));
      }
    }
  }
}

Val* zeroVal(HostIrContainer& container) {
  return IrBuilder::createInContainer<Scalar>(&container, int64_t{0});
}

// A whole operand of the tail's pointwise `op` whose blocks `op`'s output
// can be written into: read by `op` alone (so, per element, last read just
// before the element is written), not a program output, of the output's
// dtype and shape (no broadcast axis), and not already given to another
// output. A program input's blocks are a padded copy (blocksToRead), so
// writing over them leaves the caller's tensor as it was.
const TensorView* operandToWriteOver(const PipelineTail& tail, const GatherPipeline& pipeline,
                                     const Expr* op, const std::unordered_set<const Val*>& taken) {
  const auto* out = op->output(0)->as<TensorView>();
  auto no_broadcast = [](const TensorView* tv) {
    const std::vector<IterDomain*> shape = tv->shapeDomain();
    return std::none_of(shape.begin(), shape.end(),
                        [](const IterDomain* id) { return id->isBroadcast(); });
  };
  for (const TensorView* operand : tail.operands) {
    if (std::find(op->inputs().begin(), op->inputs().end(), operand) != op->inputs().end() &&
        operand->uses().size() == 1 && !pipeline.isProgramOutput(operand) &&
        taken.count(operand) == 0 && operand->dtype() == out->dtype() &&
        operand->rank() == out->rank() && no_broadcast(operand) && no_broadcast(out)) {
      return operand;
    }
  }
  return nullptr;
}

}  // namespace

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

TensorView* reshapeView(HostIrContainer& container, TensorView* in,
                        const std::vector<Val*>& extents, std::vector<Expr*>& emitted) {
  TensorView* out = makeTensorOfExtents(&container, extents, in->dtype());
  emitted.push_back(IrBuilder::createInContainer<ReshapeOp>(
      &container, std::vector<Val*>{in}, std::vector<Val*>{out}, std::vector<Attribute>{}));
  return out;
}

GatherPipeline::GatherPipeline(HostIrContainer& container, TensorView* a, int64_t devices,
                               IterDomain* loop_id)
    : container_(container),
      a_(a),
      loop_id_(loop_id),
      devices_(IrBuilder::createInContainer<Scalar>(&container, devices)),
      block_rows_(largestLocalExtent(a, a->shapeDomain()[0])),
      may_hold_fewer_rows_(hostir::mayHoldFewerRows(a, a->shapeDomain()[0])),
      chunk_rows_(ceilDiv(block_rows_, loop_id->extent())) {
  slots_extents_ = {loop_id->extent(), mul(devices_, chunk_rows_)};
  for (size_t i = 1; i < a->shapeDomain().size(); ++i) {
    slots_extents_.push_back(a->shapeDomain()[i]->extent());
  }
  slots_ = makeTensorOfExtents(&container, slots_extents_, a->dtype());
}

std::vector<Communication*> GatherPipeline::start(Stream* caller, const CommunicationPlan& plan,
                                                  int64_t my_device, std::vector<Expr*>& emitted) {
  if (gather_target_ == nullptr) {
    emitted.push_back(IrBuilder::createInContainer<Allocate>(&container_, slots_));
  }
  TensorView* a_rows = may_hold_fewer_rows_ ? paddedA(emitted) : a_;
  appendWorkerSync(container_, loop_id_->extent(), caller, emitted);
  return appendPrefetchLoop(a_rows, plan, my_device, emitted);
}

// [c, ...] zeros with A in its first rows: every chunk of c rows can be
// sliced from it, however few rows this device holds.
TensorView* GatherPipeline::paddedA(std::vector<Expr*>& emitted) const {
  std::vector<Val*> extents{block_rows_};
  for (size_t i = 1; i < a_->shapeDomain().size(); ++i) {
    extents.push_back(a_->shapeDomain()[i]->extent());
  }
  TensorView* padded = makeTensorOfExtents(&container_, extents, a_->dtype());
  emitted.push_back(
      IrBuilder::createInContainer<Allocate>(&container_, padded, /*zero_init=*/true));
  extents[0] = localExtent(a_, a_->shapeDomain()[0]);
  TensorView* real_rows = makeTensorOfExtents(&container_, extents, a_->dtype());
  emitted.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{padded, zeroVal(container_), extents[0]},
      std::vector<Val*>{real_rows}, std::vector<Attribute>{int64_t{0}}));
  emitted.push_back(IrBuilder::createInContainer<LoadStoreOp>(
      &container_, std::vector<Val*>{a_}, std::vector<Val*>{real_rows}, std::vector<Attribute>{}));
  return padded;
}

// A [devices * c, ...] buffer for `whole`'s rows (along `dim`).
TensorView* GatherPipeline::paddedBuffer(TensorView* whole, int64_t dim, bool zero_init,
                                         std::vector<Expr*>& emitted) const {
  std::vector<Val*> extents = localShape(whole);
  extents.at(static_cast<size_t>(dim)) = mul(devices_, block_rows_);
  TensorView* buffer = makeTensorOfExtents(&container_, extents, whole->dtype());
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container_, buffer, zero_init));
  return buffer;
}

TensorView* GatherPipeline::rowsToFill(TensorView* whole, int64_t dim,
                                       std::vector<Expr*>& emitted) const {
  TensorView* buffer = paddedBuffer(whole, dim, /*zero_init=*/false, emitted);
  if (dim > 0) {
    acceptStridedReadsOf(container_, whole);
  }
  Val* rows = localShape(whole).at(static_cast<size_t>(dim));
  emitted.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{buffer, zeroVal(container_), rows}, std::vector<Val*>{whole},
      std::vector<Attribute>{dim}));
  return buffer;
}

TensorView* GatherPipeline::blocksToFill(TensorView* whole, std::vector<Expr*>& emitted) const {
  TensorView* buffer = rowsToFill(whole, 0, emitted);
  std::vector<Val*> extents = localShape(whole);
  extents[0] = block_rows_;
  extents.insert(extents.begin(), devices_);
  return reshapeView(container_, buffer, extents, emitted);
}

TensorView* GatherPipeline::shardToFill(TensorView* shard, std::vector<Expr*>& emitted) const {
  if (!may_hold_fewer_rows_) {
    emitted.push_back(IrBuilder::createInContainer<Allocate>(&container_, shard));
    return shard;
  }
  std::vector<Val*> extents = localShape(shard);
  Val* rows = extents[0];
  extents[0] = block_rows_;
  TensorView* buffer = makeTensorOfExtents(&container_, extents, shard->dtype());
  emitted.push_back(IrBuilder::createInContainer<Allocate>(&container_, buffer));
  emitted.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{buffer, zeroVal(container_), rows}, std::vector<Val*>{shard},
      std::vector<Attribute>{int64_t{0}}));
  return buffer;
}

// The top-level segment that computes `whole` (its one writer), or nullptr.
PostOnStream* GatherPipeline::topLevelSegmentWriting(const TensorView* whole) const {
  PostOnStream* writer = nullptr;
  for (Expr* expr : container_.topLevel()) {
    if (std::find(expr->outputs().begin(), expr->outputs().end(), whole) == expr->outputs().end()) {
      continue;
    }
    auto* segment = dynamic_cast<PostOnStream*>(expr);
    if (segment == nullptr || writer != nullptr) {
      return nullptr;
    }
    writer = segment;
  }
  return writer;
}

TensorView* GatherPipeline::blocksToRead(TensorView* whole, std::vector<Expr*>& emitted) const {
  std::vector<Val*> extents = localShape(whole);
  PostOnStream* writer = topLevelSegmentWriting(whole);
  // The segment that computes `whole` writes it straight into the blocks'
  // first rows (a view bound before it runs): no copy, no second buffer.
  std::vector<Expr*> ahead;
  TensorView* buffer = paddedBuffer(whole, 0, /*zero_init=*/true, writer ? ahead : emitted);
  TensorView* real_rows =
      writer ? whole : makeTensorOfExtents(&container_, extents, whole->dtype());
  (writer ? ahead : emitted)
      .push_back(IrBuilder::createInContainer<SliceOp>(
          &container_, std::vector<Val*>{buffer, zeroVal(container_), extents[0]},
          std::vector<Val*>{real_rows}, std::vector<Attribute>{int64_t{0}}));
  for (Expr* expr : ahead) {
    container_.topLevel().insertBefore(writer, expr);
  }
  if (writer == nullptr) {
    emitted.push_back(IrBuilder::createInContainer<LoadStoreOp>(
        &container_, std::vector<Val*>{whole}, std::vector<Val*>{real_rows},
        std::vector<Attribute>{}));
  }
  extents[0] = block_rows_;
  extents.insert(extents.begin(), devices_);
  return reshapeView(container_, buffer, extents, emitted);
}

void GatherPipeline::fillInto(TensorView* whole, TensorView* blocks,
                              std::vector<Expr*>& emitted) const {
  std::vector<Val*> extents = localShape(whole);
  Val* rows = extents[0];
  extents[0] = mul(devices_, block_rows_);
  TensorView* buffer = reshapeView(container_, blocks, extents, emitted);
  emitted.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{buffer, zeroVal(container_), rows}, std::vector<Val*>{whole},
      std::vector<Attribute>{int64_t{0}}));
}

bool GatherPipeline::isProgramOutput(const Val* val) const {
  const std::vector<Val*>& outputs = container_.outputs();
  return std::find(outputs.begin(), outputs.end(), val) != outputs.end();
}

std::pair<Val*, Val*> GatherPipeline::bounds(Val* index) const {
  return chunkBounds(index, chunk_rows_, block_rows_);
}

TensorView* GatherPipeline::arrivedBlocks(Val* index, Val* rows,
                                          const std::vector<Communication*>& allgathers,
                                          std::vector<Expr*>& exprs) const {
  TensorView* slot = gathered(index, rows, exprs);
  for (Communication* communication : allgathers) {
    exprs.push_back(IrBuilder::createInContainer<Wait>(&container_, communication));
  }
  if (gather_target_ != nullptr) {
    return slot;
  }
  return reshapeView(container_, slot, {devices_, rows, a_->shapeDomain()[1]->extent()}, exprs);
}

// Where chunk `index`'s `rows` rows of every device are gathered:
// [devices * rows, ...], device-major, in the chunk's slot; with
// gatherInto, [devices, rows, ...], the chunk's rows of the blocks (each
// device's rows contiguous: the allgather writes them in place).
TensorView* GatherPipeline::gathered(Val* index, Val* rows, std::vector<Expr*>& exprs) const {
  if (gather_target_ != nullptr) {
    auto [start, stop] = bounds(index);
    std::vector<Val*> extents{devices_, rows};
    for (size_t i = 1; i < a_->shapeDomain().size(); ++i) {
      extents.push_back(a_->shapeDomain()[i]->extent());
    }
    TensorView* chunk = makeTensorOfExtents(&container_, extents, a_->dtype());
    exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container_, std::vector<Val*>{gather_target_, start, stop}, std::vector<Val*>{chunk},
        std::vector<Attribute>{int64_t{1}}));
    return chunk;
  }
  std::vector<Val*> slot_extents(slots_extents_.begin() + 1, slots_extents_.end());
  TensorView* slot = makeTensorOfExtents(&container_, slot_extents, a_->dtype());
  exprs.push_back(
      IrBuilder::createInContainer<HirAliasSelect>(&container_, slots_, slot, 0, index));
  std::vector<Val*> gathered_extents = slot_extents;
  gathered_extents[0] = mul(devices_, rows);
  TensorView* gathered = makeTensorOfExtents(&container_, gathered_extents, a_->dtype());
  exprs.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{slot, zeroVal(container_), gathered_extents[0]},
      std::vector<Val*>{gathered}, std::vector<Attribute>{int64_t{0}}));
  return gathered;
}

// The prefetch loop: every chunk's allgather posted up front, in chunk
// order, from the stream that holds A. The team's channel puts them on
// the link one after another, ahead of later collectives, so chunk i+1's
// rows arrive while chunk i computes. Every rank posts in this one order,
// with chunks of the same size: it is the program's.
std::vector<Communication*> GatherPipeline::appendPrefetchLoop(TensorView* a_rows,
                                                               const CommunicationPlan& plan,
                                                               int64_t my_device,
                                                               std::vector<Expr*>& emitted) const {
  std::vector<Communication*> allgathers;
  ForLoop* prefetch = makeStreamIndexLoop(container_, loop_id_);
  Val* index = prefetch->index();
  std::vector<Expr*> exprs;
  auto [start, stop] = bounds(index);
  Val* rows = sub(stop, start);
  TensorView* a_chunk =
      makeTensorOfExtents(&container_, {rows, a_->shapeDomain()[1]->extent()}, a_->dtype());
  exprs.push_back(IrBuilder::createInContainer<SliceOp>(
      &container_, std::vector<Val*>{a_rows, start, stop}, std::vector<Val*>{a_chunk},
      std::vector<Attribute>{int64_t{0}}));
  TensorView* slot = gathered(index, rows, exprs);
  for (const Collective& collective : plan.collectivesFor(my_device)) {
    auto* communication = IrBuilder::createInContainer<Communication>(&container_, a_chunk, slot,
                                                                      paramsOf(plan, collective));
    exprs.push_back(communication);
    allgathers.push_back(communication);
  }
  for (Expr* expr : exprs) {
    prefetch->body().push_back(expr);
  }
  emitted.push_back(prefetch);
  return allgathers;
}

std::unordered_map<const Val*, TensorView*> allocateTailBlocks(const PipelineTail& tail,
                                                               const GatherPipeline& pipeline,
                                                               std::vector<Expr*>& emitted) {
  std::unordered_map<const Val*, TensorView*> blocks;
  for (TensorView* operand : tail.operands) {
    if (blocks.count(operand) == 0) {
      blocks[operand] = pipeline.blocksToRead(operand, emitted);
    }
  }
  std::unordered_set<const Val*> taken;
  for (const Expr* op : tail.pointwise) {
    auto* whole = op->output(0)->as<TensorView>();
    if (tail.kept.count(whole) == 0) {
      continue;
    }
    const TensorView* host = operandToWriteOver(tail, pipeline, op, taken);
    if (host == nullptr) {
      blocks[whole] = pipeline.blocksToFill(whole, emitted);
      continue;
    }
    taken.insert(host);
    pipeline.fillInto(whole, blocks.at(host), emitted);
    blocks[whole] = blocks.at(host);
  }
  return blocks;
}

}  // namespace hostir
