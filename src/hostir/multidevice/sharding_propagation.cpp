#include "hostir/multidevice/sharding_propagation.h"

#include <algorithm>

#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

bool isAvailableLoopAxis(const TensorView* tv, int64_t logical_pos) {
  IterDomain* id = tv->getLogicalDomain()[static_cast<size_t>(logical_pos)];
  const auto& loop = tv->getLoopDomain();
  return std::find(loop.begin(), loop.end(), id) != loop.end() &&
         id->getParallelType() == ParallelType::Serial;
}

bool isTaken(const TensorSharding& sharding, int64_t logical_pos) {
  return std::any_of(sharding.logical_axes.begin(), sharding.logical_axes.end(),
                     [&](const auto& entry) { return entry.second == logical_pos; });
}

}  // namespace

TensorSharding shardingFromProducers(const Expr* expr, const TensorView* consumer,
                                     bool respect_consumer_loop) {
  TensorSharding result;
  std::vector<TensorView*> inputs = tensorInputs(expr);
  const TensorView* reference = nullptr;
  size_t most_sharded = 0;
  for (TensorView* in : inputs) {
    if (!in->hasDeviceMesh()) {
      continue;
    }
    size_t sharded = shardingOf(in).logical_axes.size();
    if (reference == nullptr || sharded > most_sharded) {
      reference = in;
      most_sharded = sharded;
    }
  }
  if (reference == nullptr) {
    return result;
  }
  result.mesh = reference->getDeviceMesh();
  // The reference first, then the other inputs on its mesh.
  std::stable_partition(inputs.begin(), inputs.end(),
                        [&](const TensorView* in) { return in == reference; });
  for (TensorView* in : inputs) {
    if (!in->hasDeviceMesh() || in->getDeviceMesh() != *result.mesh) {
      continue;
    }
    TensorSharding in_sharding = shardingOf(in);
    AxisMap map = mapProducerToConsumer(expr, in);
    for (const auto& [parallel_type, pos] : in_sharding.logical_axes) {
      int64_t c = mappedConsumerAxis(map, pos);
      if (c < 0 || result.logical_axes.count(parallel_type) || isTaken(result, c) ||
          consumer->getLogicalDomain()[static_cast<size_t>(c)]->isReduction() ||
          (respect_consumer_loop && !isAvailableLoopAxis(consumer, c))) {
        continue;
      }
      result.logical_axes[parallel_type] = c;
      result.via_split[parallel_type] = in_sharding.via_split.at(parallel_type);
    }
  }
  return result;
}

TensorSharding shardingFromConsumer(const Expr* expr, const TensorView* producer) {
  TensorSharding result;
  TensorView* consumer = tensorOutput(expr);
  if (consumer == nullptr || !consumer->hasDeviceMesh()) {
    return result;
  }
  TensorSharding out = shardingOf(consumer);
  result.mesh = out.mesh;
  AxisMap map = mapProducerToConsumer(expr, producer);
  for (const auto& [parallel_type, pos] : out.logical_axes) {
    int64_t p = mappedProducerAxis(map, pos);
    if (p < 0 || producer->getLogicalDomain()[static_cast<size_t>(p)]->isReduction() ||
        !isAvailableLoopAxis(producer, p)) {
      continue;
    }
    result.logical_axes[parallel_type] = p;
    result.via_split[parallel_type] = out.via_split.at(parallel_type);
  }
  return result;
}

void applySharding(TensorView* tv, const TensorSharding& sharding) {
  if (!sharding.mesh.has_value()) {
    return;
  }
  tv->setDeviceMesh(*sharding.mesh);
  for (const auto& [parallel_type, pos] : sharding.logical_axes) {
    auto it = sharding.via_split.find(parallel_type);
    shardLogicalAxis(tv, pos, parallel_type, it != sharding.via_split.end() && it->second);
  }
}

}  // namespace hostir
