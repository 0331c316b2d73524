// Builds the kernel engine's runtime for each CPU target into a kernel
// cache folder, at build time (tools/CMakeLists.txt): a user's first
// compiled kernel then copies its target's runtime from there instead of
// building it (docs/kernels.md, "The cache").
//   hostir_prebuild_kernel_runtimes DIR
#include <cstdlib>
#include <exception>
#include <iostream>

#include "hostir/kernels/kernel_cache.h"
#include "hostir/kernels/kernel_target.h"
#include "hostir/multidevice/target.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: hostir_prebuild_kernel_runtimes DIR\n";
    return 2;
  }
  ::setenv("HOSTIR_KERNEL_CACHE_DIR", argv[1], /*overwrite=*/1);
  using hostir::Isa;
  for (Isa isa : {Isa::Generic, Isa::Avx2, Isa::Avx512}) {
    try {
      hostir::KernelCache::global().prebuildRuntime(
          hostir::kernelTargetFor(hostir::targetForIsa(isa)));
    } catch (const std::exception& e) {
      // Not fatal: a kernel then builds its runtime itself, as without this.
      std::cerr << "hostir: warning: no prebuilt kernel runtime for "
                << hostir::targetForIsa(isa).toString() << ": " << e.what() << "\n";
    }
  }
  return 0;
}
