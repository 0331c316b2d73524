// Build an MLP block as a fusion, print it, run it with FusionExecutor and
// compare with the same computation in plain ATen.
//   build/examples/example_single_device_mlp
#include <ATen/ATen.h>

#include <iostream>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/fusion_executor.h"

int main() {
  using namespace hostir;
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard fg(fusion.get());
    TensorView* x = makeContigTensor(2);   // [tokens, model]
    TensorView* w1 = makeContigTensor(2);  // [hidden, model]
    TensorView* w2 = makeContigTensor(2);  // [model, hidden]
    fusion->addInput(x);
    fusion->addInput(w1);
    fusion->addInput(w2);
    TensorView* y = linear(relu(linear(x, w1)), w2);
    fusion->addOutput(y);
  }
  fusion->print();

  at::manual_seed(0);
  at::Tensor x = at::randn({64, 128});
  at::Tensor w1 = at::randn({256, 128});
  at::Tensor w2 = at::randn({128, 256});
  FusionExecutor executor(std::move(fusion));
  at::Tensor y = executor.run({x, w1, w2}).at(0);
  at::Tensor expected = at::linear(at::relu(at::linear(x, w1)), w2);
  bool ok = at::allclose(y, expected, 1e-4, 1e-3);
  std::cout << "matches ATen: " << (ok ? "yes" : "NO") << "\n";
  return ok ? 0 : 1;
}
