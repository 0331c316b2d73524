#pragma once

namespace hostir {

class Expr;
class HostIrContainer;

// Posts each top-level collective as early as its buffers allow and waits
// for it as late as its output allows, so that it overlaps the compute
// between (a backward's re-gather of the input under the dgrad GEMMs, the
// input-grad's reduce-scatter under the wgrad GEMMs, as Megatron-LM's async
// linear does by hand):
// - a Wait moves down to just before the first expr that reads or writes
//   the collective's input or output (or the end of the program), never past
//   a stream switch, a synchronization or a loop (whose workers synchronize
//   with the stream the Wait blocks); so does a top-level loop of nothing but
//   Waits (a pipeline's waits for its chunks' reduce-scatters: the last
//   chunk's then crosses the link under the wgrad GEMM after the loop);
//   when nothing after it touches those buffers, it moves past stream
//   switches and loops too, to the last place where the stream it blocks is
//   current (current_streams.h; the backward's Waits for dx then run after
//   both wgrad GEMMs, at the program's end);
// - a Communication, or a pipeline's prefetch loop (a loop of nothing but
//   posts, views and index arithmetic), with the allocations of the buffers
//   it writes, moves up to just after the last expr that writes what it
//   reads or touches what it writes (a Wait completes its collective's
//   output), never past another collective or a loop that posts
//   collectives: collectives keep their order, which every rank must share,
//   while the compute between them differs from rank to rank (work of other
//   devices is dropped). It stops at a stream switch or a synchronization,
//   unless every collective it posts reads program inputs alone and the
//   caller's stream is current both where it was and where it lands (the
//   inputs are ready there): a backward's gathers of dy's chunks and of x go to the
//   program's start, ahead of a segment computed before the pipeline
//   (gelu'(h)) and its stream fork, so the link does not wait for them.
// Collectives inside loops and coalescing groups, and point-to-point
// transfers, stay where they are.
void scheduleCollectives(HostIrContainer& container);

// Before the collectives are lowered (communication_lowering calls it
// first, on the program every rank shares, so every rank gets the same
// order): each top-level allgather of a program input (a resharding set
// that no Stream-split GEMM reads) moves up past the compute and the
// reduce-scatters lowered before it, up to the previous resharding expr that
// is not a reduce-scatter (another gather, a pipelined GEMM) or the program's
// start. Its input is ready from the start, a reduce-scatter's only once its
// GEMM is done: posted first, the gather crosses the link under that GEMM
// and the reduce-scatter under the GEMMs after it (the backward's re-gather
// of x under the dgrad of w1, dx's reduce-scatter under the wgrads, as
// Megatron-LM's async linear orders them).
void moveInputGathersAheadOfReduceScatters(HostIrContainer& container);

// A resharding set that allgathers a program input, read by no GEMM that
// would pipeline the gather (a matmul or linear with a Stream-split
// output): what moveInputGathersAheadOfReduceScatters moves. A pipelined
// GEMM with a reduce-scattered tail posts such a gather lowered right after
// it between its prefetch loop and its loop (communication_lowering).
bool isGatherOfProgramInput(const HostIrContainer& container, const Expr* expr);

}  // namespace hostir
