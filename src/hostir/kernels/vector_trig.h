#pragma once

#include <Halide.h>

namespace hostir {

// sin and cos of a float32 `x`, as float32, in Halide arithmetic that
// vectorizes (Halide's own call the C library once per lane). For
// |x| < kTrigKernelBound, within 0.51 ulp of the true value (checked on every
// float32 below the bound, docs/kernels.md): x / pi is split as k + t,
// |t| <= 1/2, exactly enough (Cody-Waite: 1/pi in three parts, the first two
// short enough that x times them is exact), and sin(pi t) is a minimax
// polynomial, all in double. NaN and +-inf give NaN; sin keeps the sign of a
// zero. A finite |x| >= kTrigKernelBound fails the kernel with a Halide
// requirement error naming the op, which the runtime answers by running the
// segment through ATen (CompiledSegment::run).
inline constexpr double kTrigKernelBound = 1073741824.0;  // 2^30
Halide::Expr vectorSinFloat32(const Halide::Expr& x);
Halide::Expr vectorCosFloat32(const Halide::Expr& x);

}  // namespace hostir
