#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/device_mesh.h"
#include "hostir/multidevice/axis_mapping.h"

namespace hostir {

class IterDomain;
class TensorView;

// The parallel types that shard a tensor across devices, outer mesh
// dimension last.
inline constexpr std::array<ParallelType, 2> kDeviceParallelTypes = {ParallelType::DIDx,
                                                                     ParallelType::DIDy};

// A tensor's sharding as plain data: its mesh (none: the tensor is outside
// multi-device handling and every device may read it whole) and, per DID
// parallel type, the position in the logical domain that it shards.
//
// A loop axis shards a logical axis when it is that axis, or the outer
// output of a Split of it (`tv->split(0, d, /*inner_split=*/false)`):
// either way each device owns one contiguous block. Reduction axes carry no
// data and are never reported as sharded.
struct TensorSharding {
  std::optional<DeviceMesh> mesh;
  std::map<ParallelType, int64_t> logical_axes;
  // Per sharded logical axis, whether a Split made the DID loop axis.
  std::map<ParallelType, bool> via_split;

  bool isSharded() const {
    return !logical_axes.empty();
  }
  // Logical position sharded by `parallel_type`, or -1.
  int64_t axisOf(ParallelType parallel_type) const;
  // e.g. "DeviceMesh{0 1} with logical axis 0 on deviceIdx.x", "no mesh".
  std::string toString() const;
};

// Reads and validates a tensor's sharding. Throws hostir::Error naming the
// tensor when a DID axis has no mesh, the mesh lacks that dimension, two
// axes share one parallel type, the split's outer extent is not the number
// of devices, or the DID axis does not come from a logical axis by at most
// one outer part of a Split.
TensorSharding shardingOf(const TensorView* tv);
void validateSharding(const TensorView* tv);

// The logical axis a loop axis derives from through Splits; nullptr when a
// Merge is involved or it is not derived from the logical domain.
IterDomain* logicalIdOf(const TensorView* tv, const IterDomain* loop_id);

bool isSharded(const TensorView* tv);
// The dim of the tensor's shape (its logical axes without reductions, as
// the runtime indexes the tensor) sharded by `parallel_type`, or -1.
int64_t getShardedLogicalAxis(const TensorView* tv, ParallelType parallel_type);
// The logical IterDomain sharded by `parallel_type`, or nullptr.
IterDomain* getShardedIterDomain(const TensorView* tv, ParallelType parallel_type);
// The DID parallel type sharding `logical_id`, or Serial.
ParallelType shardingParallelType(const TensorView* tv, const IterDomain* logical_id);
// Devices along `parallel_type` that the tensor is split across (1 if it is
// not sharded by it).
int64_t numDevices(const TensorView* tv, ParallelType parallel_type);

// While alive, the device whose program is being lowered (every rank lowers
// its own, MultiDeviceLowering::my_device): localExtent gives a sharded axis
// that device's rows. Scopes nest; the thread's previous device comes back.
class LoweringDeviceScope {
 public:
  explicit LoweringDeviceScope(int64_t device);
  ~LoweringDeviceScope();
  LoweringDeviceScope(const LoweringDeviceScope&) = delete;
  LoweringDeviceScope& operator=(const LoweringDeviceScope&) = delete;

 private:
  int64_t previous_;
};
// The innermost LoweringDeviceScope's device, or -1.
int64_t loweringDevice();

// Per-device extent of a logical axis: its extent when unsharded; for a
// sharded axis of extent n over d devices, torch.chunk's rows of the device
// being lowered (loweringDevice(), at index p along the mesh dimension):
// rowChunk(n, d, p).rows, i.e. min(c, max(n - p*c, 0)) with c = ceilDiv(n,
// d) (the inner extent of the sharding Split when a Split made it); c
// itself outside a lowering, for a device off the mesh, and for p = 0.
// Scalar arithmetic lives in tv's container.
Val* localExtent(const TensorView* tv, const IterDomain* logical_id);
// c = ceilDiv(n, d), the rows of the first (largest) shard of a sharded
// logical axis, the same on every device (localExtent outside a lowering);
// the extent when unsharded. Buffers padded to it line up across ranks.
Val* largestLocalExtent(const TensorView* tv, const IterDomain* logical_id);
// Whether the device being lowered may hold fewer than largestLocalExtent
// rows of `logical_id`: the axis is sharded, and the device is on the mesh
// but not first along the mesh dimension.
bool mayHoldFewerRows(const TensorView* tv, const IterDomain* logical_id);
// The local extents of the tensor's shape (reduction axes skipped): what a
// device allocates for its shard.
std::vector<Val*> localShape(const TensorView* tv);

// Per axis of the tensor's shape: how many devices it is split across (1 when
// not sharded); a shard's size times this is the logical extent.
std::vector<int64_t> shardDivisors(const TensorView* tv);

// Shards the logical axis at `logical_pos` over `parallel_type` of the
// tensor's mesh (which must be set): parallelizes the axis itself, or, with
// `via_outer_split`, the outer part of an outer split by the device count.
void shardLogicalAxis(TensorView* tv, int64_t logical_pos, ParallelType parallel_type,
                      bool via_outer_split);

// Puts `tv` on `mesh` and, unless `logical_axis` is -1 (replicated), shards
// that logical axis over `parallel_type` (shardLogicalAxis). Returns `tv`,
// so it composes: `shard(linear(x, w), mesh, 1)`.
TensorView* shard(TensorView* tv, const DeviceMesh& mesh, int64_t logical_axis = -1,
                  ParallelType parallel_type = ParallelType::DIDx, bool via_outer_split = false);

// Whether data must move between devices for a consumer with sharding
// `consumer` to read a producer with sharding `producer`, the two related by
// `map`: the meshes differ, a sharded producer axis is not sharded the same
// way on its consumer axis (or has none: reduced, contracted), or a sharded
// consumer axis reads an unsharded producer axis. Tensors without a mesh
// never reshard.
bool haveDifferentShardings(const TensorSharding& producer, const TensorSharding& consumer,
                            const AxisMap& map);
// The same along one DID parallel type, meshes aside.
bool haveDifferentShardingsAlong(const TensorSharding& producer, const TensorSharding& consumer,
                                 const AxisMap& map, ParallelType parallel_type);

// Whether `expr` moves data between devices: some tensor input and its
// tensor output have different shardings or meshes.
bool isResharding(const Expr* expr);

// The devices holding an operand of `expr`, sorted; empty when no operand
// has a mesh (the expr runs everywhere).
std::vector<int64_t> involvedDevices(const Expr* expr);

// "T0_g_float[...] (DeviceMesh{0 1} with ...), T1_g_float[...] (...)": the
// operands of `expr` and their shardings, for error messages.
std::string describeShardings(const Expr* expr);

}  // namespace hostir
