#pragma once

#include <Halide.h>

#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/kernels/kernel_signature.h"
#include "hostir/kernels/kernel_target.h"

namespace hostir {

// A segment as a Halide pipeline: one Func per tensor (pointwise ops and
// views inlined into their consumers), reductions computed per row of their
// consumer where they can be and at the root otherwise, every output
// vectorized for the target and parallel over its outer axes (the parallel
// loop runs on the caller's thread pool, runtime/compiled_segment.cpp).
struct HalideKernel {
  Halide::Pipeline pipeline;
  // Call order: tensor inputs, scalars (signature.scalars), then the
  // outputs, which Halide appends.
  std::vector<Halide::Argument> arguments;
};

// `signature` must be analyzeSegment(fusion) without `unsupported`.
HalideKernel lowerToHalide(const Fusion& fusion, const KernelSignature& signature,
                           const KernelTarget& target);

}  // namespace hostir
