#pragma once

namespace hostir {

class HostIrContainer;

// GEMM epilogues: a `linear` whose result only the next HostUnit reads, and
// that HostUnit a GELU and/or an add of one more tensor (GemmEpilogue), become
// one HostUnit, which the runtime runs as one oneDNN matmul with those ops
// as post-ops on each tile: the epilogue no longer costs a pass over memory
// of its own, nor a buffer for the linear's result.
//
//   T4 = linear(T2, T3)                   PostOnStream (HostUnit 5,
//   PostOnStream (HostUnit 1,      ->       inputs=(T2, T3), outputs=(T6))
//     inputs=(T4), outputs=(T6))            (HostUnit 5: T4 = linear, T6 = gelu(T4))
//
// At the top level and in loop bodies alike (the main job's per-chunk GELU);
// runs after loop_host_units, which makes the per-chunk HostUnits. A view or
// allocation of the linear's result that nothing reads any more is dropped.
void foldGemmEpilogues(HostIrContainer& container);

}  // namespace hostir
