#include <algorithm>
#include <numeric>

#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/mutation.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding_propagation.h"

namespace hostir {

namespace {

// The shape dim that a resharding set shards or unshards (the first one
// along which the two sides differ), or -1.
int64_t reshardedDim(const LoadStoreOp* set) {
  auto* in = set->in()->as<TensorView>();
  auto* out = set->out()->as<TensorView>();
  TensorSharding p = shardingOf(in);
  TensorSharding c = shardingOf(out);
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    int64_t p_pos = p.axisOf(parallel_type);
    int64_t c_pos = c.axisOf(parallel_type);
    int64_t p_dim = p_pos < 0 ? -1 : logicalToShape(in, p_pos);
    int64_t c_dim = c_pos < 0 ? -1 : logicalToShape(out, c_pos);
    if (p_dim != c_dim) {
      return p_dim >= 0 ? p_dim : c_dim;
    }
  }
  return -1;
}

// Whether the shape dim `dim` comes first in tv's allocation order, when
// size-1 broadcast axes (which do not affect the memory layout) are skipped.
bool isOutermost(const TensorView* tv, int64_t dim) {
  IterDomain* id = tv->shapeDomain()[static_cast<size_t>(dim)];
  for (IterDomain* alloc_id : tv->getAllocationDomain()) {
    if (alloc_id->isReduction() || alloc_id->isBroadcast()) {
      continue;
    }
    return alloc_id == id;
  }
  return true;
}

// in -> permute(in, dim to the front) -> set -> permute back -> out.
void moveDimToFront(LoadStoreOp* set_op, int64_t dim) {
  auto* in = set_op->in()->as<TensorView>();
  auto* out = set_op->out()->as<TensorView>();
  std::vector<int64_t> to_front{dim};
  for (int64_t i = 0; i < in->rank(); ++i) {
    if (i != dim) {
      to_front.push_back(i);
    }
  }
  std::vector<int64_t> back(to_front.size());
  for (size_t i = 0; i < to_front.size(); ++i) {
    back[static_cast<size_t>(to_front[i])] = static_cast<int64_t>(i);
  }

  TensorView* in_front = permute(in, to_front);
  applySharding(in_front, shardingFromProducers(in_front->definition(), in_front,
                                                /*respect_consumer_loop=*/true));
  detachExpr(set_op);
  TensorView* out_front = set(in_front);
  // out_front's dim i is out's dim to_front[i].
  TensorSharding out_sharding = shardingOf(out);
  TensorSharding front_sharding;
  front_sharding.mesh = out_sharding.mesh;
  for (const auto& [parallel_type, pos] : out_sharding.logical_axes) {
    int64_t out_dim = logicalToShape(out, pos);
    auto it = std::find(to_front.begin(), to_front.end(), out_dim);
    front_sharding.logical_axes[parallel_type] = it - to_front.begin();
    front_sharding.via_split[parallel_type] = out_sharding.via_split.at(parallel_type);
  }
  applySharding(out_front, front_sharding);
  IrBuilder::createInContainer<PermuteOp>(out->container(), std::vector<Val*>{out_front},
                                          std::vector<Val*>{out}, std::vector<Attribute>{back});
}

}  // namespace

void reorderShardedAxis(Fusion* fusion) {
  for (Expr* expr : fusion->exprs()) {
    auto* set_op = dynamic_cast<LoadStoreOp*>(expr);
    if (set_op == nullptr || !set_op->in()->isA<TensorView>() || !isResharding(set_op)) {
      continue;
    }
    int64_t dim = reshardedDim(set_op);
    if (dim <= 0) {
      continue;
    }
    if (isOutermost(set_op->in()->as<TensorView>(), dim) &&
        isOutermost(set_op->out()->as<TensorView>(), dim)) {
      continue;
    }
    moveDimToFront(set_op, dim);
  }
}

}  // namespace hostir
