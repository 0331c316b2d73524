#pragma once

namespace hostir {

class HostIrContainer;

// Loop host units: in every loop body, each run of consecutive ops that one
// compiled kernel can compute (unary, binary, where, broadcast and reduction ops:
// a chunk's bias, GELU, residual add or row statistics) becomes a HostUnit
// posted on the loop's current stream:
//
//   FOR StreamIdx in ...:
//     T4 = HirAliasSelect(T1, StreamIdx)          T4 = HirAliasSelect(T1, StreamIdx)
//     T5 = add(T3, T2)                     ->      PostOnStream (HostUnit 3,
//     T4 = gelu(T5)                                  inputs=(T3, T2), outputs=(T4))
//
// so that per-chunk compute runs as kernels, as the segments outside loops
// do. The segment's inputs are fresh tensors (any strides; an extent shared
// by two inputs stays shared) and its outputs are the values the rest of the
// program reads or that alias a buffer (a slice written in place). Runs after
// the stream pass and buffer shrinking, which create the loop bodies.
void groupLoopOpsIntoHostUnits(HostIrContainer& container);

}  // namespace hostir
