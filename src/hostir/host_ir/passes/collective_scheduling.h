#pragma once

namespace hostir {

class HostIrContainer;

// Posts each top-level collective as early as its buffers allow and waits
// for it as late as its output allows, so that it overlaps the compute
// between (a backward's re-gather of the input under the dgrad GEMMs, the
// input-grad's reduce-scatter under the wgrad GEMMs, as Megatron-LM's async
// linear does by hand):
// - a Wait moves down to just before the first expr that reads or writes
//   the collective's input or output (or the end of the program), never past
//   a stream switch, a synchronization or a loop (whose workers synchronize
//   with the stream the Wait blocks);
// - a Communication, with the allocation of its output, moves up to just
//   after the last expr that writes its input or touches its output (a Wait
//   completes its collective's output), never past a stream switch, a
//   synchronization or another collective: collectives keep their order,
//   which every rank must share, while the compute between them differs
//   from rank to rank (work of other devices is dropped).
// Collectives inside loops and coalescing groups, and point-to-point
// transfers, stay where they are.
void scheduleCollectives(HostIrContainer& container);

}  // namespace hostir
