#include "hostir/multidevice/sharding.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/row_chunks.h"

namespace hostir {

namespace {

int64_t positionIn(const std::vector<IterDomain*>& ids, const IterDomain* id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  return it == ids.end() ? -1 : it - ids.begin();
}

const Split* definingSplit(const IterDomain* id) {
  return id->definition() == nullptr ? nullptr : dynamic_cast<const Split*>(id->definition());
}

const Scalar* constIntOf(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConstInt() ? scalar : nullptr;
}

}  // namespace

int64_t TensorSharding::axisOf(ParallelType parallel_type) const {
  auto it = logical_axes.find(parallel_type);
  return it == logical_axes.end() ? -1 : it->second;
}

std::string TensorSharding::toString() const {
  if (!mesh.has_value()) {
    return "no mesh";
  }
  std::stringstream ss;
  ss << mesh->toString();
  if (logical_axes.empty()) {
    ss << " unsharded";
  }
  bool first = true;
  for (const auto& [parallel_type, pos] : logical_axes) {
    ss << (first ? " with " : " and ") << "logical axis " << pos << " on "
       << hostir::toString(parallel_type);
    first = false;
  }
  return ss.str();
}

IterDomain* logicalIdOf(const TensorView* tv, const IterDomain* loop_id) {
  const auto& logical = tv->getLogicalDomain();
  const IterDomain* id = loop_id;
  while (positionIn(logical, id) < 0) {
    const Split* split = definingSplit(id);
    if (split == nullptr) {
      return nullptr;
    }
    id = split->in();
  }
  return const_cast<IterDomain*>(id);
}

TensorSharding shardingOf(const TensorView* tv) {
  TensorSharding sharding;
  if (tv->hasDeviceMesh()) {
    sharding.mesh = tv->getDeviceMesh();
  }
  const auto& logical = tv->getLogicalDomain();
  for (IterDomain* loop_id : tv->getLoopDomain()) {
    if (!loop_id->isDeviceDim() || loop_id->isReduction()) {
      continue;
    }
    ParallelType parallel_type = loop_id->getParallelType();
    const std::string ptype = hostir::toString(parallel_type);
    HOSTIR_CHECK(sharding.mesh.has_value(), tv->toInlineString(), " parallelizes ",
                 loop_id->toInlineString(), " with ", ptype,
                 " but has no device mesh; call setDeviceMesh on it");
    HOSTIR_CHECK(parallel_type != ParallelType::DIDy || sharding.mesh->shape().size() == 2,
                 tv->toInlineString(), " parallelizes ", loop_id->toInlineString(),
                 " with deviceIdx.y but its mesh ", sharding.mesh->toString(),
                 " is 1-D; use DIDx or a 2-D mesh");
    HOSTIR_CHECK(sharding.logical_axes.count(parallel_type) == 0, tv->toInlineString(),
                 " has two axes parallelized with ", ptype, "; at most one axis per parallel type");
    int64_t pos = positionIn(logical, loop_id);
    bool via_split = pos < 0;
    if (via_split) {
      const Split* split = definingSplit(loop_id);
      bool valid =
          split != nullptr && split->outer() == loop_id && positionIn(logical, split->in()) >= 0;
      HOSTIR_CHECK(valid, tv->toInlineString(), ": ", loop_id->toInlineString(),
                   " is parallelized with ", ptype,
                   " but is not a logical axis nor the outer part of a Split of one; shard a "
                   "logical axis or the outer part of tv->split(axis, devices, "
                   "/*inner_split=*/false)");
      pos = positionIn(logical, split->in());
      const Scalar* devices = constIntOf(loop_id->extent());
      int64_t mesh_devices = sharding.mesh->size(parallel_type);
      HOSTIR_CHECK(devices == nullptr || devices->constInt() == mesh_devices, tv->toInlineString(),
                   ": ", loop_id->toInlineString(), " is parallelized with ", ptype,
                   " but has extent ", devices ? devices->constInt() : 0, " while ",
                   sharding.mesh->toString(), " has ", mesh_devices,
                   " devices along it; split by the number of devices");
    }
    sharding.logical_axes[parallel_type] = pos;
    sharding.via_split[parallel_type] = via_split;
  }
  return sharding;
}

void validateSharding(const TensorView* tv) {
  (void)shardingOf(tv);
}

bool isSharded(const TensorView* tv) {
  return shardingOf(tv).isSharded();
}

IterDomain* getShardedIterDomain(const TensorView* tv, ParallelType parallel_type) {
  int64_t pos = shardingOf(tv).axisOf(parallel_type);
  return pos < 0 ? nullptr : tv->getLogicalDomain()[static_cast<size_t>(pos)];
}

int64_t getShardedLogicalAxis(const TensorView* tv, ParallelType parallel_type) {
  int64_t pos = shardingOf(tv).axisOf(parallel_type);
  return pos < 0 ? -1 : logicalToShape(tv, pos);
}

ParallelType shardingParallelType(const TensorView* tv, const IterDomain* logical_id) {
  int64_t pos = positionIn(tv->getLogicalDomain(), logical_id);
  for (const auto& [parallel_type, sharded_pos] : shardingOf(tv).logical_axes) {
    if (sharded_pos == pos) {
      return parallel_type;
    }
  }
  return ParallelType::Serial;
}

int64_t numDevices(const TensorView* tv, ParallelType parallel_type) {
  TensorSharding sharding = shardingOf(tv);
  return sharding.axisOf(parallel_type) < 0 ? 1 : sharding.mesh->size(parallel_type);
}

namespace {
thread_local int64_t lowering_device = -1;

// The rows the device at `index` along the mesh dimension holds when
// `extent` rows are cut in `devices` pieces of `rows` = ceilDiv(extent,
// devices) as torch.chunk cuts them: min(rows, max(extent - index * rows,
// 0)). The first device always holds `rows` (so its program reads as
// before); a constant extent gives a constant.
Val* rowsAtIndex(Fusion* container, Val* extent, Val* rows, int64_t devices, int64_t index) {
  if (index == 0) {
    return rows;
  }
  if (const Scalar* constant = constIntOf(extent)) {
    return IrBuilder::createInContainer<Scalar>(
        container, rowChunk(constant->constInt(), devices, index).rows);
  }
  Val* index_val = IrBuilder::createInContainer<Scalar>(container, index);
  Val* zero = IrBuilder::createInContainer<Scalar>(container, int64_t{0});
  return minimum(rows, maximum(sub(extent, mul(index_val, rows)), zero));
}
}  // namespace

LoweringDeviceScope::LoweringDeviceScope(int64_t device) : previous_(lowering_device) {
  lowering_device = device;
}

LoweringDeviceScope::~LoweringDeviceScope() {
  lowering_device = previous_;
}

int64_t loweringDevice() {
  return lowering_device;
}

Val* localExtent(const TensorView* tv, const IterDomain* logical_id) {
  HOSTIR_ASSERT(positionIn(tv->getLogicalDomain(), logical_id) >= 0, logical_id->toInlineString(),
                " is not a logical axis of ", tv->toInlineString());
  ParallelType parallel_type = shardingParallelType(tv, logical_id);
  if (parallel_type == ParallelType::Serial) {
    return logical_id->extent();
  }
  Fusion* container = tv->container();
  const DeviceMesh& mesh = tv->getDeviceMesh();
  const int64_t devices = mesh.size(parallel_type);
  Val* rows = nullptr;
  for (IterDomain* loop_id : tv->getLoopDomain()) {
    if (loop_id->getParallelType() == parallel_type && loop_id != logical_id) {
      // Sharded through a Split: the other half is the first device's rows.
      rows = definingSplit(loop_id)->inner()->extent();
      break;
    }
  }
  if (rows == nullptr) {
    rows = ceilDiv(logical_id->extent(), IrBuilder::createInContainer<Scalar>(container, devices));
  }
  const int64_t device = loweringDevice();
  if (device < 0 || !mesh.has(device)) {
    return rows;
  }
  return rowsAtIndex(container, logical_id->extent(), rows, devices,
                     mesh.idxOf(device, parallel_type));
}

Val* largestLocalExtent(const TensorView* tv, const IterDomain* logical_id) {
  LoweringDeviceScope no_device(-1);
  return localExtent(tv, logical_id);
}

bool mayHoldFewerRows(const TensorView* tv, const IterDomain* logical_id) {
  const int64_t device = loweringDevice();
  if (device < 0 || !tv->hasDeviceMesh() || !tv->getDeviceMesh().has(device)) {
    return false;
  }
  ParallelType parallel_type = shardingParallelType(tv, logical_id);
  return parallel_type != ParallelType::Serial &&
         tv->getDeviceMesh().idxOf(device, parallel_type) > 0;
}

std::vector<Val*> localShape(const TensorView* tv) {
  std::vector<Val*> shape;
  for (IterDomain* id : tv->shapeDomain()) {
    shape.push_back(localExtent(tv, id));
  }
  return shape;
}

void shardLogicalAxis(TensorView* tv, int64_t logical_pos, ParallelType parallel_type,
                      bool via_outer_split) {
  IterDomain* logical_id = tv->getLogicalDomain().at(static_cast<size_t>(logical_pos));
  auto& loop = tv->getLoopDomain();
  int64_t loop_pos = positionIn(loop, logical_id);
  HOSTIR_ASSERT(loop_pos >= 0, logical_id->toInlineString(), " of ", tv->toInlineString(),
                " is no longer a loop axis; it cannot be sharded");
  if (via_outer_split) {
    tv->split(loop_pos, tv->getDeviceMesh().size(parallel_type), /*inner_split=*/false);
  }
  tv->axis(loop_pos)->parallelize(parallel_type);
}

bool haveDifferentShardingsAlong(const TensorSharding& producer, const TensorSharding& consumer,
                                 const AxisMap& map, ParallelType parallel_type) {
  int64_t p = producer.axisOf(parallel_type);
  int64_t c = consumer.axisOf(parallel_type);
  if (p >= 0) {
    // Unmapped (reduced away, contracted, selected): the shards must combine.
    int64_t mapped = mappedConsumerAxis(map, p);
    return mapped < 0 || mapped != c;
  }
  return c >= 0 && mappedProducerAxis(map, c) >= 0;
}

bool haveDifferentShardings(const TensorSharding& producer, const TensorSharding& consumer,
                            const AxisMap& map) {
  if (!producer.mesh.has_value() || !consumer.mesh.has_value()) {
    return false;
  }
  if (*producer.mesh != *consumer.mesh) {
    return true;
  }
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    if (haveDifferentShardingsAlong(producer, consumer, map, parallel_type)) {
      return true;
    }
  }
  return false;
}

namespace {
// A reshape's consumer axes past the leading ones it keeps (mapReshape)
// split or merge producer axes: no producer axis maps to them, yet their
// elements are the producer's. Sharding one of them by a parallel type that
// does not shard the producer cuts what the whole producer gives, a slice
// each device takes after reshaping (a broadcast's or a factory's new axis,
// also unmapped, is made on each device instead).
bool shardsAReshapedAxis(const Expr* expr, const TensorSharding& producer,
                         const TensorSharding& consumer, const AxisMap& map) {
  if (!expr->isA<ReshapeOp>() || !producer.mesh.has_value() || !consumer.mesh.has_value()) {
    return false;
  }
  return std::any_of(
      kDeviceParallelTypes.begin(), kDeviceParallelTypes.end(), [&](ParallelType parallel_type) {
        const int64_t c = consumer.axisOf(parallel_type);
        return c >= 0 && producer.axisOf(parallel_type) < 0 && mappedProducerAxis(map, c) < 0;
      });
}
}  // namespace

bool isResharding(const Expr* expr) {
  TensorView* out = tensorOutput(expr);
  if (out == nullptr) {
    return false;
  }
  TensorSharding out_sharding = shardingOf(out);
  for (TensorView* in : tensorInputs(expr)) {
    const TensorSharding in_sharding = shardingOf(in);
    const AxisMap map = mapProducerToConsumer(expr, in);
    if (haveDifferentShardings(in_sharding, out_sharding, map) ||
        shardsAReshapedAxis(expr, in_sharding, out_sharding, map)) {
      return true;
    }
  }
  return false;
}

std::vector<int64_t> involvedDevices(const Expr* expr) {
  std::set<int64_t> devices;
  auto add = [&](const Val* val) {
    const auto* tv = dynamic_cast<const TensorView*>(val);
    if (tv != nullptr && tv->hasDeviceMesh()) {
      const auto& ids = tv->getDeviceMesh().vector();
      devices.insert(ids.begin(), ids.end());
    }
  };
  std::for_each(expr->inputs().begin(), expr->inputs().end(), add);
  std::for_each(expr->outputs().begin(), expr->outputs().end(), add);
  return {devices.begin(), devices.end()};
}

std::string describeShardings(const Expr* expr) {
  std::stringstream ss;
  bool first = true;
  auto add = [&](const Val* val) {
    if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
      ss << (first ? "" : ", ") << tv->toInlineString() << " (" << shardingOf(tv).toString() << ")";
      first = false;
    }
  };
  std::for_each(expr->inputs().begin(), expr->inputs().end(), add);
  std::for_each(expr->outputs().begin(), expr->outputs().end(), add);
  return ss.str();
}

TensorView* shard(TensorView* tv, const DeviceMesh& mesh, int64_t logical_axis,
                  ParallelType parallel_type, bool via_outer_split) {
  HOSTIR_CHECK(tv != nullptr, "shard: the tensor is null");
  tv->setDeviceMesh(mesh);
  if (logical_axis != -1) {
    shardLogicalAxis(tv, logical_axis, parallel_type, via_outer_split);
  }
  return tv;
}

std::vector<int64_t> shardDivisors(const TensorView* tv) {
  std::vector<IterDomain*> shape = tv->shapeDomain();
  std::vector<int64_t> divisors(shape.size(), 1);
  if (!tv->hasDeviceMesh()) {
    return divisors;
  }
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    ParallelType parallel_type = shardingParallelType(tv, shape[axis]);
    if (isDeviceDim(parallel_type)) {
      divisors[axis] = numDevices(tv, parallel_type);
    }
  }
  return divisors;
}

}  // namespace hostir
