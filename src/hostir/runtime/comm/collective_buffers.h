#pragma once

#include <ATen/ATen.h>

#include <utility>
#include <vector>

#include "hostir/host_ir/communication.h"

// The buffers collectives read and write: how a buffer is viewed, reduced
// locally and filled, and the scratch a composed reduce-scatter receives
// into. Shared by the posted collectives and their local stand-ins.

namespace hostir {

// A buffer c10d can write: the tensor itself when contiguous, otherwise a
// contiguous stand-in copied back once the work completes.
struct WritableBuffer {
  at::Tensor target;
  at::Tensor buffer;

  explicit WritableBuffer(const at::Tensor& tensor)
      : target(tensor),
        buffer(tensor.is_contiguous() ? tensor : at::empty(tensor.sizes(), tensor.options())) {}
  bool staged() const {
    return !buffer.is_same(target);
  }
  void copyBack() const {
    if (staged()) {
      target.copy_(buffer);
    }
  }
};

// The value that leaves a reduction unchanged: what a root that does not
// contribute puts in.
void fillWithIdentity(at::Tensor& tensor, ReduceOp op);

// A send or receive buffer of a composed collective (reduce-scatters,
// uneven allgathers): contiguous, of `sizes` and the dtype of `options`, a
// lease of the process's buffer pool (buffer_pool.h), so that a transfer
// writes memory already faulted in (a fresh buffer per op measured 1.7x at
// 16-64 MiB), and memory of sizes no recent run asked for (a sequence
// length that changed) is freed by the pool's rules. The block goes back to
// the pool when its last reference goes: the op's work (its epilogue holds
// the buffers), once the program lets it go after its Wait.
at::Tensor collectiveScratch(at::IntArrayRef sizes, const at::TensorOptions& options);

// [begin, end) of piece `index` of `count` near-equal pieces of `extent`
// (the stripes of a striped collective).
inline std::pair<int64_t, int64_t> pieceBounds(int64_t extent, int64_t index, int64_t count) {
  return {extent * index / count, extent * (index + 1) / count};
}

// Reduces [n, k] blocks over the first axis into `out` ([k] elements),
// writing in place when `out` is contiguous (no temporary, no extra pass).
void reduceAlongFirstAxisInto(const at::Tensor& blocks, ReduceOp op, const at::Tensor& out);

// `into` = op(`into`, `other`) elementwise, in place (the two of one shape,
// or `into` contiguous and `other` of its element count).
void combineInto(const at::Tensor& into, const at::Tensor& other, ReduceOp op);

// Allgather, gather and scatter split axis 0 of their buffers into blocks.
// The lowering puts the sharded axis first, but leaves it behind size-1
// broadcast axes (they do not change the memory layout: [1, 6] sharded on
// axis 1 is two contiguous blocks of 3): view such buffers without their
// leading size-1 axes. Blocks are then taken along the sharded axis (the
// whole's first axis larger than 1); a piece's shape only matters by its
// element count.
at::Tensor withoutLeadingUnitAxes(CommunicationType type, const at::Tensor& tensor);

// A whole and a piece of unequal pieces (torch.chunk's): a leading axis of
// one row may be the sharded one (a whole of one row), so a size-1 axis is
// dropped from both only while both lead with it and differ after it (the
// sharded axis comes later). Returns the views {whole, piece}.
std::pair<at::Tensor, at::Tensor> withoutSharedLeadingUnitAxes(at::Tensor whole, at::Tensor piece);

// torch.chunk's pieces of `whole` cut along axis 0 over `members` (in
// their order; the first ceilDiv(rows, members) rows each, the last fewer
// or none; equal blocks when the rows divide), keyed by device.
std::map<int64_t, at::Tensor> torchChunkPieces(const at::Tensor& whole,
                                               const std::vector<int64_t>& members);

// The pieces in device order, which is the order of a team's process group
// ranks (Communicator::rankInTeam: ranks follow the sorted team).
std::vector<at::Tensor> piecesInDeviceOrder(const std::map<int64_t, at::Tensor>& pieces);

}  // namespace hostir
