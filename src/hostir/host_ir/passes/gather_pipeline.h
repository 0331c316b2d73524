#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "hostir/host_ir/communication.h"
#include "hostir/multidevice/communication_plan.h"

namespace hostir {

class Expr;
class HostIrContainer;
class IterDomain;
class PostOnStream;
class Stream;
class TensorView;
class Val;
struct PipelineTail;

// The Communication parameters of one of `plan`'s collectives.
CommunicationParams paramsOf(const CommunicationPlan& plan, const Collective& collective);

// A view of `in` with other extents (the evaluator binds it without a copy
// when `in` is contiguous).
TensorView* reshapeView(HostIrContainer& container, TensorView* in,
                        const std::vector<Val*>& extents, std::vector<Expr*>& emitted);

// The allgather half of a pipelined allgather + GEMM: A's rows in chunks,
// every chunk's rows of every device gathered into a slot of its own, all
// posted up front.
//
// Shards may be uneven (torch.chunk: the first devices hold c =
// ceilDiv(n, devices) rows, the last fewer, possibly none). Every rank
// cuts its chunks from c, so every chunk's allgather has the same size on
// every rank: a device holding fewer rows sends them from a zero-padded
// [c, ...] copy of A. The rows of every device land as a [devices, c, ...]
// block whose first n rows are the real ones (torch.chunk fills devices in
// order), so a whole tensor the loop fills is a view of the first n rows
// of a [devices * c, ...] buffer. Padded rows stay in padded rows: a GEMM
// or pointwise row reads its own row only. The user never sees the padding.
class GatherPipeline {
 public:
  GatherPipeline(HostIrContainer& container, TensorView* a, int64_t devices, IterDomain* loop_id);

  // Every chunk gathered straight into `blocks` ([devices, c, ...], from
  // blocksToFill: the whole gathered A a later reader takes whole), chunk
  // i into blocks[:, chunk i rows], instead of into slots of its own: no
  // slots, no copy of each chunk into the whole. Before start().
  void gatherInto(TensorView* blocks) {
    gather_target_ = blocks;
  }

  // Everything before the compute loop: the slots every chunk is gathered
  // into ([chunks, devices * chunk rows, ...]: the prefetch loop fills slot
  // i, the compute loop reads it; none with gatherInto), A's padded copy on
  // a device that may hold fewer rows, the workers' sync with `caller`, and
  // the prefetch loop. Returns the allgathers, for the compute loop's Waits.
  std::vector<Communication*> start(Stream* caller, const CommunicationPlan& plan,
                                    int64_t my_device, std::vector<Expr*>& emitted);

  Val* devices() const {
    return devices_;
  }
  // c = ceilDiv(n, devices): the rows of the largest shard, the same on
  // every rank; device p's rows sit at [p * c, p * c + its rows).
  Val* blockRows() const {
    return block_rows_;
  }
  // Whether this device's shard of A may hold fewer than c rows (it is not
  // the first along the mesh dimension).
  bool mayHoldFewerRows() const {
    return may_hold_fewer_rows_;
  }

  // A [devices * c, ...] buffer (along `dim`, `whole`'s rows) whose first
  // n rows `whole` becomes a view of (no Allocate of `whole` is needed).
  TensorView* rowsToFill(TensorView* whole, int64_t dim, std::vector<Expr*>& emitted) const;
  // `whole` (n rows in token order, device-major), which the loop writes,
  // as [devices, c, ...] blocks: chunk i of every device's rows is
  // blocks[:, chunk i rows]. `whole` becomes a view of the blocks' first
  // n rows (allocated here: no Allocate of `whole` is needed).
  TensorView* blocksToFill(TensorView* whole, std::vector<Expr*>& emitted) const;
  // This device's rows of `shard` (sharded like A), which the loop writes
  // chunk by chunk: `shard` itself, or on a device that may hold fewer
  // than c rows a [c, ...] buffer whose first rows `shard` is a view of.
  TensorView* shardToFill(TensorView* shard, std::vector<Expr*>& emitted) const;
  // `whole`, computed before the loop and read chunk by chunk, as
  // zero-padded [devices, c, ...] blocks: the top-level segment computing
  // it writes into them (their first n rows are `whole`), else a copy.
  TensorView* blocksToRead(TensorView* whole, std::vector<Expr*>& emitted) const;
  PostOnStream* topLevelSegmentWriting(const TensorView* whole) const;
  // `whole`, which the loop writes, in `blocks` (another tensor's, from
  // blocksToRead, that the loop reads for the last time in the same
  // elements as it writes them): `whole` becomes a view of their first n
  // rows, and no buffer of its own is allocated.
  void fillInto(TensorView* whole, TensorView* blocks, std::vector<Expr*>& emitted) const;
  bool isProgramOutput(const Val* val) const;

  // [start, stop) of chunk `index` of a device's c rows.
  std::pair<Val*, Val*> bounds(Val* index) const;

  // In the compute loop: chunk `index`'s gathered rows once they are here
  // (the Waits match the prefetch loop's posts in order: iteration i waits
  // for chunk i only, on the stream that computes it), seen as [devices,
  // rows, ...].
  TensorView* arrivedBlocks(Val* index, Val* rows, const std::vector<Communication*>& allgathers,
                            std::vector<Expr*>& exprs) const;

 private:
  TensorView* paddedBuffer(TensorView* whole, int64_t dim, bool zero_init,
                           std::vector<Expr*>& emitted) const;
  TensorView* gathered(Val* index, Val* rows, std::vector<Expr*>& exprs) const;
  TensorView* paddedA(std::vector<Expr*>& emitted) const;
  std::vector<Communication*> appendPrefetchLoop(TensorView* a_rows, const CommunicationPlan& plan,
                                                 int64_t my_device,
                                                 std::vector<Expr*>& emitted) const;

  HostIrContainer& container_;
  TensorView* a_;
  IterDomain* loop_id_;
  Val* devices_;
  Val* block_rows_;
  bool may_hold_fewer_rows_;
  Val* chunk_rows_;
  std::vector<Val*> slots_extents_;
  TensorView* slots_ = nullptr;
  TensorView* gather_target_ = nullptr;
};

// The [devices, c, ...] blocks of the whole tensors `tail` writes (its
// kept tensors) or reads (its whole operands) chunk by chunk. A kept tensor
// written by a pointwise op whose whole operand nothing else reads (the
// backward's dh = dy·w2 * gelu'(h)) is written into that operand's blocks,
// each chunk over the rows it has just read: one buffer, not two.
std::unordered_map<const Val*, TensorView*> allocateTailBlocks(const PipelineTail& tail,
                                                               const GatherPipeline& pipeline,
                                                               std::vector<Expr*>& emitted);

}  // namespace hostir
