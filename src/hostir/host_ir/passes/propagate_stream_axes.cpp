#include "hostir/host_ir/passes/propagate_stream_axes.h"

#include <algorithm>
#include <optional>

#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/op_traits.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// Where a consumer takes a Stream axis: its logical axis and the split
// (nullptr: the logical axis itself is Stream) that the source used.
struct StreamTarget {
  int64_t logical_pos = -1;
  Val* chunks = nullptr;
};

std::optional<StreamTarget> targetFrom(const Expr* expr, const TensorView* in,
                                       const TensorView* out, bool from_resharding) {
  if (!from_resharding && in->definition() != nullptr && isResharding(in->definition())) {
    return std::nullopt;
  }
  std::optional<StreamAxis> axis = findStreamAxis(in);
  if (!axis) {
    return std::nullopt;
  }
  int64_t pos = mappedConsumerAxis(mapProducerToConsumer(expr, in), axis->logical_pos);
  if (pos < 0) {
    return std::nullopt;
  }
  IterDomain* id = out->getLogicalDomain()[static_cast<size_t>(pos)];
  const std::vector<IterDomain*>& loop = out->getLoopDomain();
  if (id->isReduction() || id->isBroadcast() || id->getParallelType() != ParallelType::Serial ||
      std::find(loop.begin(), loop.end(), id) == loop.end()) {
    return std::nullopt;
  }
  return StreamTarget{pos, axis->chunk_size == nullptr ? nullptr : axis->loop_id->extent()};
}

void applyTarget(TensorView* out, const StreamTarget& target) {
  IterDomain* id = out->getLogicalDomain()[static_cast<size_t>(target.logical_pos)];
  const std::vector<IterDomain*>& loop = out->getLoopDomain();
  auto loop_pos = static_cast<int64_t>(std::find(loop.begin(), loop.end(), id) - loop.begin());
  if (target.chunks != nullptr) {
    out->split(loop_pos, target.chunks, /*inner_split=*/false);
  }
  out->axis(loop_pos)->parallelize(ParallelType::Stream);
}

void propagate(Fusion* fusion, bool from_resharding) {
  for (Expr* expr : fusion->exprs()) {
    TensorView* out = tensorOutput(expr);
    if (out == nullptr || expr->outputs().size() != 1 ||
        !hasTrait(expr, OpTrait::StreamParallelizable) || isResharding(expr) ||
        findStreamAxis(out).has_value()) {
      continue;
    }
    std::optional<StreamTarget> target;
    bool agree = true;
    for (TensorView* in : tensorInputs(expr)) {
      std::optional<StreamTarget> from = targetFrom(expr, in, out, from_resharding);
      if (!from) {
        continue;
      }
      if (target && (target->logical_pos != from->logical_pos ||
                     (target->chunks == nullptr) != (from->chunks == nullptr) ||
                     (target->chunks != nullptr && !target->chunks->sameAs(from->chunks)))) {
        agree = false;
        break;
      }
      target = from;
    }
    if (target && agree) {
      applyTarget(out, *target);
    }
  }
}

}  // namespace

void propagateStreamAxes(Fusion* fusion) {
  propagate(fusion, /*from_resharding=*/false);
}

void propagateStreamAxesThroughPipelinedTails(Fusion* fusion) {
  propagate(fusion, /*from_resharding=*/true);
}

}  // namespace hostir
