// A second process for the disk-cache tests (tests/cpp/kernels/
// kernel_cache_test.cpp): runs one fixed segment compiled, checks it against
// ATen and prints how the kernel was obtained:
//   compiled=<kernels compiled> loaded=<kernels loaded from disk> ok=<0|1>
// and, with --runtime, runtime_copied=<engine runtimes copied from the
// build's prebuilt ones>.
#include <ATen/ATen.h>

#include <iostream>
#include <string>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/fusion_executor.h"

int main(int argc, char** argv) {
  using namespace hostir;
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);
    fusion->addInput(x);
    fusion->addOutput(sum(mul(sigmoid(x), 3.0), {1}));
  }
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({33, 70});
  at::Tensor out = executor.run({input}).at(0);
  bool ok = at::allclose(out, (at::sigmoid(input) * 3.0).sum(1), 1e-5, 1e-5) &&
            executor.execution().rfind("compiled kernel", 0) == 0;
  std::cout << "compiled=" << KernelCache::global().compiled()
            << " loaded=" << KernelCache::global().loadedFromDisk() << " ok=" << ok;
  if (argc > 1 && std::string(argv[1]) == "--runtime") {
    std::cout << " runtime_copied=" << KernelCache::global().runtimesCopiedFromBuild();
  }
  std::cout << std::endl;
  return ok ? 0 : 1;
}
