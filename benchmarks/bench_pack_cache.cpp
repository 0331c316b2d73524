// What keeping the packed-weight cache honest costs (issue 38, item 1;
// docs/performance.md, "The packed-weight cache's content check"): per
// weight shape, interleaved in one process on 1 intra-op thread,
//   repack   packMatmulRhs: what no cache costs on every GEMM call
//   panels   an exact bit comparison of the plain weight with its packed
//            copy, panel by panel (no second copy, but a transpose: the
//            alternative not taken)
//   memcmp   std::memcmp of the weight against a plain copy: the check a
//            cache hit runs (pack_cache.h), once per run
//   hash     std::hash of the weight's bytes (not exact: for the record)
//   gemm     oneDNN's matmul of [M, K] rows on the packed weight, M the
//            main job's rows per chunk (4096 tokens in 16 and 4 chunks)
// Each iteration runs every side once (a, b, c, ...); the counters are the
// medians per side.
//
//   build/benchmarks/bench_pack_cache [--threads N] [--benchmark_min_time=1]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

#include "hostir/runtime/dnnl_matmul.h"
#include "hostir/runtime/packed_gemm.h"
#include "intra_op_threads.h"
#include "wall_time.h"

namespace {

using hostir::bench::median;

// Whether every element of B (the [K, N] view of the plain weight) has the
// bits of its slot in `packed` ([ceilDiv(N, nb), K rounded up to 16, nb]),
// in tiles of 16 Ks by one panel so both sides' cache lines are read whole.
bool panelsHold(const at::Tensor& b, const at::Tensor& packed, int64_t n_block) {
  const int64_t k_size = b.size(0);
  const int64_t n_size = b.size(1);
  const int64_t k_stride = b.stride(0);
  const int64_t n_stride = b.stride(1);
  const int64_t padded_k = packed.size(1);
  const auto* plain_bits = static_cast<const uint32_t*>(b.data_ptr());
  const auto* packed_bits = static_cast<const uint32_t*>(packed.data_ptr());
  constexpr int64_t kTile = 16;
  for (int64_t panel = 0; panel < packed.size(0); ++panel) {
    const int64_t n0 = panel * n_block;
    const int64_t width = std::min(n_block, n_size - n0);
    const uint32_t* panel_bits = packed_bits + panel * padded_k * n_block;
    for (int64_t k0 = 0; k0 < k_size; k0 += kTile) {
      const int64_t k_end = std::min(k0 + kTile, k_size);
      uint32_t differ = 0;
      for (int64_t j = 0; j < width; ++j) {
        const uint32_t* column = plain_bits + (n0 + j) * n_stride;
        for (int64_t k = k0; k < k_end; ++k) {
          differ |= column[k * k_stride] ^ panel_bits[k * n_block + j];
        }
      }
      if (differ != 0) {
        return false;
      }
    }
  }
  return true;
}
using hostir::bench::seconds;

void BM_PackCacheCheck(benchmark::State& state) {
  const int64_t n = state.range(0), k = state.range(1), rows = state.range(2);
  at::manual_seed(0);
  at::Tensor w = at::randn({n, k});
  at::Tensor copy = w.clone();
  at::Tensor x = at::randn({rows, k});
  at::Tensor out = at::empty({rows, n});
  const hostir::Layout layout = hostir::Layout::dnnlBlocked(64, /*n_axis=*/0);
  at::Tensor packed = hostir::packMatmulRhs(w, layout);
  bool holds = true;
  const std::string_view bytes(static_cast<const char*>(w.data_ptr()), w.nbytes());
  const size_t hash = std::hash<std::string_view>{}(bytes);
  std::vector<double> repack_s, panels_s, memcmp_s, hash_s, gemm_s;
  for (auto _ : state) {
    repack_s.push_back(
        seconds([&] { benchmark::DoNotOptimize(hostir::packMatmulRhs(w, layout).data_ptr()); }));
    panels_s.push_back(seconds([&] { holds = holds && panelsHold(w.t(), packed, 64); }));
    memcmp_s.push_back(seconds(
        [&] { holds = holds && std::memcmp(w.data_ptr(), copy.data_ptr(), w.nbytes()) == 0; }));
    hash_s.push_back(
        seconds([&] { holds = holds && std::hash<std::string_view>{}(bytes) == hash; }));
    gemm_s.push_back(seconds([&] { hostir::dnnlMatmulOut(out, x, packed, layout, {}); }));
    state.SetIterationTime(repack_s.back() + panels_s.back() + memcmp_s.back() + hash_s.back() +
                           gemm_s.back());
  }
  if (!holds) {
    state.SkipWithError("the check found a difference in an unchanged weight");
  }
  state.counters["repack_ms"] = median(repack_s) * 1e3;
  state.counters["panels_ms"] = median(panels_s) * 1e3;
  state.counters["memcmp_ms"] = median(memcmp_s) * 1e3;
  state.counters["hash_ms"] = median(hash_s) * 1e3;
  state.counters["gemm_ms"] = median(gemm_s) * 1e3;
  state.counters["memcmp/gemm"] = median(memcmp_s) / median(gemm_s);
  state.counters["repack/gemm"] = median(repack_s) / median(gemm_s);
}

}  // namespace

// W1 and W2 shards of the main job (sp-mlp --hidden 1024 --ffn 4096 on 2
// ranks) at 256 and 1024 rows per chunk, sp-layer's fused QKV weight, and a
// small layer (a training step of 64 tokens).
BENCHMARK(BM_PackCacheCheck)
    ->ArgsProduct({{2048}, {1024}, {256, 1024}})
    ->ArgsProduct({{1024}, {2048}, {256, 1024}})
    ->ArgsProduct({{1536}, {1024}, {256}})
    ->ArgsProduct({{512}, {512}, {64}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

int main(int argc, char** argv) {
  return hostir::bench::runWithIntraOpThreads(argc, argv);
}
