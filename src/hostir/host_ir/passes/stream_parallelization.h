#pragma once

namespace hostir {

class HostIrContainer;

// The stream parallelization pass. Every top-level expr whose output has a
// Stream axis becomes the body of a host loop over that axis:
//
//   callerStream = GetCurrentStream                  (once, at the top)
//   T_out = ALLOCATE(...)                             (full outputs, before)
//   FOR StreamIdx in [0, min(extent, numberOfStreams)):   (sync loop)
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     Synchronize callerStream
//   SetCurrentStream to callerStream
//   FOR StreamIdx in <stream axis>:                   (main loop)
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     <slices of inputs and outputs: HirAliasSelect at StreamIdx, or a
//      SliceOp chunk for a split stream axis>
//     <the op on the slices, writing into the output slice>
//     SetCurrentStream to callerStream
//     Synchronize Stream ( StreamIdx % numberOfStreams )
//
// The sync loop and the main loop's stream switches are built by
// stream_loop.h, which says why the sync loop comes first.
// Consecutive exprs whose Stream axes iterate alike (same extent and
// chunking) and whose in-loop producers are read slice by slice share one
// loop; an expr without a Stream axis runs between loops on the caller's
// stream. Errors name the tensor: a program input with a Stream axis, a
// Stream axis on the contraction axis of a matmul/linear, and the forms
// findStreamAxis rejects.
void parallelizeStreams(HostIrContainer& container);

// The checks of parallelizeStreams alone (program inputs, contraction axes,
// ops it cannot lower), on every top-level expr. The multi-device pipeline
// runs it before dropping other devices' work, so every rank rejects what
// any rank would (a rank that rejected alone left the others waiting).
void checkStreamAxes(const HostIrContainer& container);

}  // namespace hostir
