// Executor overhead: a 100-op elementwise chain run through FusionExecutor
// against the same ATen ops called directly, on small and large tensors.
#include <ATen/ATen.h>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/fusion_executor.h"
#include "ratio_reporter.h"

namespace {

constexpr int kChainLength = 100;

// Alternates x * 0.999 and x + 0.001 so values stay finite.
std::unique_ptr<hostir::Fusion> makeChain() {
  auto fusion = std::make_unique<hostir::Fusion>();
  hostir::FusionGuard fg(fusion.get());
  hostir::TensorView* t = hostir::makeContigTensor(1);
  fusion->addInput(t);
  for (int i = 0; i < kChainLength; ++i) {
    t = i % 2 == 0 ? hostir::mul(t, 0.999) : hostir::add(t, 0.001);
  }
  fusion->addOutput(t);
  return fusion;
}

at::Tensor atenChain(at::Tensor t) {
  for (int i = 0; i < kChainLength; ++i) {
    t = i % 2 == 0 ? at::mul(t, 0.999) : at::add(t, 0.001);
  }
  return t;
}

void Hostir(benchmark::State& state) {
  hostir::FusionExecutor executor(makeChain());
  std::vector<at::Tensor> inputs{at::randn({state.range(0)})};
  for (auto _ : state) {
    benchmark::DoNotOptimize(executor.run(inputs));
  }
}

void Aten(benchmark::State& state) {
  at::Tensor input = at::randn({state.range(0)});
  for (auto _ : state) {
    benchmark::DoNotOptimize(atenChain(input));
  }
}

BENCHMARK(Hostir)->Arg(1 << 10)->Arg(1 << 24)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Aten)->Arg(1 << 10)->Arg(1 << 24)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return hostir::bench::runWithRatios(argc, argv, "Hostir", "Aten");
}
