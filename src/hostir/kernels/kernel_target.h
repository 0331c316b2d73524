#pragma once

#include <string>

#include "hostir/multidevice/target.h"

namespace hostir {

// What a kernel is compiled for: one hostir target (an ISA tier) mapped onto
// the compiler engine's target description, plus the floating-point mode.
// Two devices whose targets map to the same KernelTarget run the same
// executable (a translation-compatible set).
struct KernelTarget {
  // The engine's target string, e.g. "x86-64-linux-avx-avx2-f16c-fma-sse41".
  std::string engine_target;
  // Lanes of the widest vector register, in bits (256 for avx2).
  int vector_bits = 128;
  // Strict IEEE semantics per op, as ATen computes (default), or the
  // engine's fast math (reassociation, contraction into FMAs).
  bool fast_math = false;

  bool operator==(const KernelTarget& other) const = default;
  std::string toString() const;
};

// The kernel target of a hostir target, for this machine's OS and
// architecture family: a target the machine lacks (avx512 on an avx2 host)
// still maps, so it cross-compiles.
KernelTarget kernelTargetFor(const Target& target);

// The kernel target of this machine's CPU as the engine detects it.
KernelTarget hostKernelTarget();

// The target kernels for a device with `target` are compiled for when they
// run in this process: its own, unless this machine lacks its ISA (a
// heterogeneous mesh emulated with HOSTIR_TARGET on one machine), then the
// machine's.
KernelTarget runnableKernelTarget(const Target& target);

// Whether kernels compiled for `target` run on this machine (its engine
// target is one the host's CPU supports).
bool runsOnThisMachine(const KernelTarget& target);

// HOSTIR_KERNEL_MATH: "strict" (default) or "fast"; anything else is an
// error listing both.
bool fastMathRequested();

}  // namespace hostir
