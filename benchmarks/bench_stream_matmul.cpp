// Stream-chunked matmul: [M,K]x[K,N] with the rows of the output split into
// S chunks (outer split of M, ParallelType::Stream), lowered to a host loop
// and run on 1, 2 or 4 streams, against one at::matmul of the whole
// problem. The ratio documents the per-chunk cost of the host loop (slices,
// stream switches, synchronizations, one matmul call per chunk).
//
// Arguments: M (K = N = 256), S chunks, streams.
#include <ATen/ATen.h>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/host_executor.h"
#include "ratio_reporter.h"

namespace {

constexpr int64_t kKN = 256;

std::unique_ptr<hostir::Fusion> makeChunkedMatmul(int64_t chunks) {
  auto fusion = std::make_unique<hostir::Fusion>();
  hostir::FusionGuard fg(fusion.get());
  hostir::TensorView* a = hostir::makeContigTensor(2);
  hostir::TensorView* b = hostir::makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  hostir::TensorView* out = hostir::matmul(a, b);
  out->split(0, chunks, /*inner_split=*/false);
  out->axis(0)->parallelize(hostir::ParallelType::Stream);
  fusion->addOutput(out);
  return fusion;
}

void Hostir(benchmark::State& state) {
  int64_t m = state.range(0);
  std::unique_ptr<hostir::Fusion> fusion = makeChunkedMatmul(state.range(1));
  hostir::HostExecutor executor(
      *fusion,
      hostir::HostIrEvaluatorParams{.number_of_streams = static_cast<int>(state.range(2))});
  std::vector<at::Tensor> inputs{at::randn({m, kKN}), at::randn({kKN, kKN})};
  std::vector<at::Tensor> out = executor.run(inputs);
  if (!at::allclose(out[0], at::matmul(inputs[0], inputs[1]), 1e-4, 1e-4)) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(executor.run(inputs));
  }
}

void Aten(benchmark::State& state) {
  at::Tensor a = at::randn({state.range(0), kKN});
  at::Tensor b = at::randn({kKN, kKN});
  for (auto _ : state) {
    benchmark::DoNotOptimize(at::matmul(a, b));
  }
}

void args(benchmark::internal::Benchmark* bench) {
  for (int64_t m : {64, 4096}) {
    for (int64_t chunks : {1, 2, 4, 8}) {
      for (int64_t streams : {1, 2, 4}) {
        bench->Args({m, chunks, streams});
      }
    }
  }
  bench->ArgNames({"M", "S", "streams"});
}

BENCHMARK(Hostir)->Apply(args)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Aten)->Apply(args)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return hostir::bench::runWithRatios(argc, argv, "Hostir", "Aten");
}
