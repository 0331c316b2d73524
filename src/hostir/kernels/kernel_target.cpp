#include "hostir/kernels/kernel_target.h"

#include <Halide.h>

#include <cstdlib>

#include "hostir/ir/error.h"

namespace hostir {

std::string KernelTarget::toString() const {
  return engine_target + (fast_math ? " (fast math)" : "");
}

bool fastMathRequested() {
  const char* value = std::getenv("HOSTIR_KERNEL_MATH");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "strict") {
    return false;
  }
  HOSTIR_CHECK(std::string(value) == "fast", "HOSTIR_KERNEL_MATH=", value,
               " is not a floating-point mode; valid values are strict (the default: each op "
               "rounds as ATen does) and fast (the engine may reassociate and contract)");
  return true;
}

KernelTarget kernelTargetFor(const Target& target) {
  Halide::Target host = Halide::get_host_target();
  Halide::Target engine(host.os, host.arch, host.bits);
  int vector_bits = 128;
  if (host.arch == Halide::Target::X86) {
    engine = engine.with_feature(Halide::Target::SSE41);
    switch (target.isa) {
      case Isa::Avx512:
        engine = engine.with_feature(Halide::Target::AVX)
                     .with_feature(Halide::Target::AVX2)
                     .with_feature(Halide::Target::FMA)
                     .with_feature(Halide::Target::F16C)
                     .with_feature(Halide::Target::AVX512)
                     .with_feature(Halide::Target::AVX512_Skylake);
        vector_bits = 512;
        break;
      case Isa::Avx2:
        engine = engine.with_feature(Halide::Target::AVX)
                     .with_feature(Halide::Target::AVX2)
                     .with_feature(Halide::Target::FMA)
                     .with_feature(Halide::Target::F16C);
        vector_bits = 256;
        break;
      default: break;
    }
  }
  KernelTarget result;
  result.engine_target = engine.to_string();
  result.vector_bits = vector_bits;
  result.fast_math = fastMathRequested();
  return result;
}

KernelTarget hostKernelTarget() {
  Halide::Target host = Halide::get_host_target();
  Target detected;
  if (host.has_feature(Halide::Target::AVX512_Skylake)) {
    detected = targetForIsa(Isa::Avx512);
  } else if (host.has_feature(Halide::Target::AVX2) && host.has_feature(Halide::Target::FMA)) {
    detected = targetForIsa(Isa::Avx2);
  } else {
    detected = targetForIsa(Isa::Generic);
  }
  return kernelTargetFor(detected);
}

KernelTarget runnableKernelTarget(const Target& target) {
  KernelTarget wanted = kernelTargetFor(target);
  return runsOnThisMachine(wanted) ? wanted : hostKernelTarget();
}

bool runsOnThisMachine(const KernelTarget& target) {
  Halide::Target host = Halide::get_host_target();
  Halide::Target wanted(target.engine_target);
  for (int f = 0; f < Halide::Target::FeatureEnd; ++f) {
    auto feature = static_cast<Halide::Target::Feature>(f);
    if (wanted.has_feature(feature) && !host.has_feature(feature)) {
      return false;
    }
  }
  return wanted.arch == host.arch && wanted.os == host.os && wanted.bits == host.bits;
}

}  // namespace hostir
