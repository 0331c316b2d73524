// Packed (matmul_rhs panels, docs/targets.md) vs plain linear, one thread
// budget as ATen's default: out[M, N] = x[M, K] @ W[N, K]^T.
// Args: M, K, N, tile (0 = plain at::linear_out on the row-major weight).
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include "hostir/runtime/packed_gemm.h"

namespace {

void BM_Linear(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t tile = state.range(3);
  at::manual_seed(0);
  at::Tensor x = at::randn({m, k});
  at::Tensor w = at::randn({n, k});
  at::Tensor out = at::empty({m, n});
  at::Tensor packed = tile > 0 ? hostir::packMatmulRhs(w, tile, 0) : at::Tensor();
  for (auto _ : state) {
    if (tile > 0) {
      hostir::packedMatmulOut(out, x, packed);
    } else {
      at::linear_out(out, x, w);
    }
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * static_cast<double>(m * k * n),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
  state.SetLabel(tile > 0 ? "packed, panels of " + std::to_string(tile) : "plain");
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (auto [m, k, n] :
       {std::tuple{64, 512, 512}, std::tuple{256, 1024, 1024}, std::tuple{1024, 1024, 4096}}) {
    for (int64_t tile : {0, 8, 16}) {
      b->Args({m, k, n, tile});
    }
  }
}

// The one-off cost of packing a weight (done once per weight version).
void BM_Pack(benchmark::State& state) {
  at::Tensor w = at::randn({state.range(0), state.range(1)});
  for (auto _ : state) {
    benchmark::DoNotOptimize(hostir::packMatmulRhs(w, 16, 0).data_ptr());
  }
}

}  // namespace

BENCHMARK(BM_Linear)->Apply(Sizes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Pack)->Args({1024, 1024})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
