#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/encoding.h"

namespace hostir {

class TensorView;

// ISA tier of a CPU target.
enum class Isa { Generic, Avx2, Avx512, Neon };

// What a device is, as far as layout decisions go (docs/targets.md). Plain
// data: detected at start-up by the runtime (runtime/target_detection.h),
// exchanged between ranks at rendezvous, read by the compiler's passes.
struct Target {
  std::string backend = "cpu";
  Isa isa = Isa::Generic;
  // Bits of one vector register (0 for generic: no vector assumption).
  int64_t vector_bits = 0;
  // Column block of the layout oneDNN 2.6's matmul reads its weights in on
  // this ISA, BA16a<n>b (docs/targets.md): 64 on avx512 (its brgemm
  // kernels); 0 where oneDNN keeps the plain layout (avx2, neon, generic:
  // its gemm packs per call, as OpenBLAS does).
  int64_t matmul_rhs_n_block = 0;

  bool operator==(const Target& other) const = default;
  // "cpu:avx512": what HOSTIR_TARGET takes, and what ranks exchange.
  std::string toString() const;
  // "cpu:avx512 (512-bit vectors, matmul_rhs BA16a64b)".
  std::string describe() const;
};

// The target of an ISA tier with its properties filled in.
Target targetForIsa(Isa isa);
// The valid spellings, for error messages: "cpu:generic, cpu:avx2, ...".
std::string validTargetNames();
// Parses "cpu:avx2" (also "avx2"); an error listing the valid names otherwise.
Target parseTarget(const std::string& text);
// The best tier a /proc/cpuinfo "flags" (x86) or "Features" (Arm) list
// supports: avx512f → avx512, avx2 and fma → avx2, asimd → neon, else generic.
Target targetFromCpuFlags(const std::string& flags);

// Every device's target, by device id.
using DeviceTargets = std::map<int64_t, Target>;
// "0=cpu:avx512 1=cpu:avx2".
std::string toString(const DeviceTargets& targets);
// The target of `device`; an error naming the device and the known ones.
const Target& targetOf(const DeviceTargets& targets, int64_t device);

// The layout `target` gives `tv`'s encoding: identity without an encoding or
// when the target has no resolver for it; an already-resolved encoding is
// returned as it is. matmul_rhs resolves to oneDNN's blocked layout on
// avx512 (N is axis 0 when a linear reads `tv` as its weight, else axis 1)
// and to identity elsewhere; a tensor that layout cannot hold (not 2-D, not
// float) is an error naming the tensor and the target. `n_axis`, when
// given, overrides the axis found from `tv`'s uses.
Layout resolveLayout(const TensorView* tv, const Target& target,
                     std::optional<int64_t> n_axis = std::nullopt);

// Which axis of `tv` is a GEMM's N, from its uses: 0 when a linear reads it
// as its weight, 1 when a matmul reads it as its right operand; none when no
// matmul/linear reads it.
std::optional<int64_t> gemmNAxis(const TensorView* tv);

}  // namespace hostir
