#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/multidevice/communication_plan.h"

namespace hostir {

class Expr;
class HostIrContainer;
class TensorView;
class Val;

// What follows a pipelined GEMM chunk by chunk in its loop: the Stream
// split of the GEMM's rows carries through ops that keep rows apart. A chain
// of unary pointwise ops (e.g. GELU), then a row-parallel contraction (its K
// is the sharded axis) whose partial sums are reduce-scattered onto the same
// rows: chunk j of every device's rows reduces into chunk j of each device's
// output rows, so chunk j's reduce-scatter overlaps chunk j+1's GEMMs.
//
// A tensor of the tail that something else reads too (a program output:
// the forward's h, saved for the backward; the backward's GELU grad, read
// by the wgrad of w1) is also written chunk by chunk into the whole tensor.
// A pointwise op's other operands are whole tensors of the GEMM's rows
// (the backward's gelu'(h) for dy * gelu'(h)), sliced per chunk; one that
// a top-level expr computes from the program's inputs alone is computed
// before the loop.
struct PipelineTail {
  // Pointwise ops to repeat on each chunk, in order (from the program or
  // from a segment of unary ops alone), and the input of each that the
  // chunk stands for.
  std::vector<const Expr*> pointwise;
  std::vector<const Val*> chunk_inputs;
  Expr* contraction = nullptr;
  CommunicationPlan plan;
  // Top-level exprs the loop replaces.
  std::vector<Expr*> absorbed;
  // Tail tensors read after the loop too (the GEMM's output included).
  std::unordered_set<const Val*> kept;
  // Whole operands of the pointwise ops other than the chunk.
  std::vector<TensorView*> operands;
  // Top-level exprs computing operands, moved before the loop.
  std::vector<Expr*> hoisted;
};

// The tail of `gemm` if its output feeds one, else nullopt (the loop then
// ends with the GEMM, and its consumers run after the loop on whole tensors).
std::optional<PipelineTail> findPipelineTail(const HostIrContainer& container, const Expr* gemm);

// Rows [start, stop) of a chunk; rows = stop - start.
struct ChunkRows {
  Val* start;
  Val* stop;
  Val* rows;
};

// What one chunk of a tail leaves to reduce-scatter: the chunk's partial
// product [devices, rows, ...] and this device's rows of the tail's output.
struct TailChunk {
  TensorView* partial;
  TensorView* rows;
};

// One chunk of a pipelined GEMM's tail, appended to `body_exprs`: the
// pointwise ops on the GEMM's chunk (`chunk_extents`: [devices, rows, ...]),
// then its partial product. `blocks` holds the [devices, local rows, ...]
// views of the tail's kept tensors and whole operands; the returned rows are
// chunk `chunk_rows` of `output_rows` (the tail's output, or a buffer of at
// least as many rows whose first ones it is). The caller posts the
// reduce-scatter of the returned partial into the returned rows.
TailChunk appendTailChunk(HostIrContainer& container, const PipelineTail& tail,
                          TensorView* gemm_chunk, const std::vector<Val*>& chunk_extents,
                          Val* devices, const ChunkRows& chunk_rows,
                          const std::unordered_map<const Val*, TensorView*>& blocks,
                          TensorView* output_rows, std::vector<Expr*>& body_exprs);

// The tail's tensors are whole once its loop computes them: a Stream split
// carried onto them (the backward's) would chunk them again. Drops it.
void dropStreamSplitsOfTail(const PipelineTail& tail);

}  // namespace hostir
