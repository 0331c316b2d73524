#pragma once

namespace hostir {

class HostIrContainer;

// A value a program computes from its inputs alone and one expr reads — a
// backward's recompute of a forward value from the tensors the forward saved,
// such as gelu(h) for the wgrad GEMM of the MLP block's second linear — is
// alive only while that reader needs it: when the reader's results are read
// by nothing after it in the program (grads the program returns), the
// recompute, the reader and the reader's other operands that only it reads
// (a transposed view) move together to just after the last expr the reader
// depends on (the Wait of the gather of its other operand). The recompute
// was alive from where it was computed to its reader, across the dgrad GEMMs
// and their results; now it is made and let go within one GEMM, before the
// dgrad chain allocates (issue 35: the MLP step's peak memory).
//
// Moves compute only: collectives and Waits keep their places (every rank
// posts collectives in one order). Never across a stream switch, a
// synchronization or a coalescing group; a member moved down past an expr
// that touches its buffers stops the move. The collective posted after the
// dgrad chain (the input-grad's reduce-scatter) is then posted one GEMM
// later and hidden behind the GEMMs after it.
void scheduleRecomputes(HostIrContainer& container);

}  // namespace hostir
