// LIBXSMM's JIT batch-reduce GEMM on a weight packed once into blocks,
// against ATen's at::linear (OpenBLAS), interleaved in one process on the
// same intra-op threads (issue 39, item 3: is there a GEMM faster than
// OpenBLAS's Haswell kernels for the main job's per-chunk GEMMs on AVX2?
// docs/performance.md, "Where the time goes on AVX2").
//
// out[M, N] = x[M, K] @ W[N, K]^T, optionally followed by GELU (erf, at::gelu_
// on the whole output on both sides). LIBXSMM is column-major: out^T = W @ x^T,
// so W is packed once into [N/bn][K/bk] column-major bn x bk blocks, x is read
// in place (a bk x bm block of x^T has leading dimension K) and each bn x bm
// block of out^T (leading dimension N) is one batch-reduce call over the K/bk
// blocks. LIBXSMM's target is AVX2 ("hsw") unless LIBXSMM_TARGET names
// another; the label says which ran. Args: M, K, N, GELU, bm, bn, bk.
// Each iteration runs both sides once (a, b, a, b, ...); the counters are the
// medians per side, their ratio (libxsmm / ATen: below 1 is faster) and each
// side's largest error against a float64 truth, relative to its largest value.
//
//   OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 DNNL_MAX_CPU_ISA=AVX2
//   build/benchmarks/bench_gemm_libxsmm [--threads N] [--benchmark_min_time=1]
// (the first line exported: OpenBLAS's and ATen's AVX2 code, as on cpu:avx2)
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <libxsmm.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "intra_op_threads.h"
#include "wall_time.h"

namespace {

using hostir::bench::median;
using hostir::bench::seconds;

// W [N, K] row-major as [N/bn][K/bk] blocks, each bn x bk column-major
// (element (n, k) of the block at k * bn + n): LIBXSMM's A operand.
std::vector<float> packWeight(const at::Tensor& w, int64_t bn, int64_t bk) {
  const int64_t n = w.size(0), k = w.size(1);
  const float* src = w.data_ptr<float>();
  std::vector<float> packed(static_cast<size_t>(n * k));
  size_t at = 0;
  for (int64_t nb = 0; nb < n / bn; ++nb) {
    for (int64_t kb = 0; kb < k / bk; ++kb) {
      for (int64_t kk = 0; kk < bk; ++kk) {
        for (int64_t nn = 0; nn < bn; ++nn) {
          packed[at++] = src[(nb * bn + nn) * k + kb * bk + kk];
        }
      }
    }
  }
  return packed;
}

void BM_LinearLibxsmm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const bool gelu = state.range(3) != 0;
  const int64_t bm = state.range(4), bn = state.range(5), bk = state.range(6);
  if (m % bm != 0 || n % bn != 0 || k % bk != 0) {
    state.SkipWithError("the blocks must divide M, N and K");
    return;
  }
  if (std::getenv("LIBXSMM_TARGET") == nullptr) {
    libxsmm_set_target_arch("hsw");
  }
  at::manual_seed(0);
  at::Tensor x = at::randn({m, k});
  at::Tensor w = at::randn({n, k}) / std::sqrt(static_cast<double>(k));
  at::Tensor out_aten = at::empty({m, n});
  at::Tensor out_xsmm = at::empty({m, n});
  const std::vector<float> packed = packWeight(w, bn, bk);

  const libxsmm_blasint lda = bn, ldb = k, ldc = n;
  const float alpha = 1.0f, beta = 0.0f;
  const auto kernel = libxsmm_smmdispatch_reducebatch_strd(
      bn, bm, bk, static_cast<libxsmm_blasint>(bn * bk * sizeof(float)),
      static_cast<libxsmm_blasint>(bk * sizeof(float)), &lda, &ldb, &ldc, &alpha, &beta, nullptr,
      nullptr);
  if (kernel == nullptr) {
    state.SkipWithError("LIBXSMM has no JIT kernel for this blocking on this target");
    return;
  }
  const unsigned long long blocks = static_cast<unsigned long long>(k / bk);
  const float* xp = x.data_ptr<float>();
  float* yp = out_xsmm.data_ptr<float>();
  auto aten_side = [&] {
    at::linear_out(out_aten, x, w);
    if (gelu)
      at::gelu_(out_aten);
  };
  auto xsmm_side = [&] {
    for (int64_t mb = 0; mb < m / bm; ++mb) {
      for (int64_t nb = 0; nb < n / bn; ++nb) {
        kernel(packed.data() + nb * k * bn, xp + mb * bm * k, yp + mb * bm * n + nb * bn, &blocks);
      }
    }
    if (gelu)
      at::gelu_(out_xsmm);
  };
  aten_side();
  xsmm_side();
  // Each side against a float64 truth, relative to its largest magnitude.
  at::Tensor truth = at::linear(x.to(at::kDouble), w.to(at::kDouble));
  if (gelu)
    at::gelu_(truth);
  auto relError = [&](const at::Tensor& out) {
    return ((out.to(at::kDouble) - truth).abs().max() / truth.abs().max()).item<double>();
  };
  const double aten_error = relError(out_aten), xsmm_error = relError(out_xsmm);
  std::vector<double> aten_s, xsmm_s;
  for (auto _ : state) {
    const double a = seconds(aten_side);
    const double b = seconds(xsmm_side);
    aten_s.push_back(a);
    xsmm_s.push_back(b);
    state.SetIterationTime(a + b);
  }
  const double flop = 2.0 * static_cast<double>(m * n * k);
  state.counters["aten_ms"] = median(aten_s) * 1e3;
  state.counters["xsmm_ms"] = median(xsmm_s) * 1e3;
  state.counters["xsmm/aten"] = median(xsmm_s) / median(aten_s);
  state.counters["aten_GF"] = flop / median(aten_s) * 1e-9;
  state.counters["xsmm_GF"] = flop / median(xsmm_s) * 1e-9;
  state.counters["aten_rel_err"] = aten_error;
  state.counters["xsmm_rel_err"] = xsmm_error;
  state.SetLabel(std::string(gelu ? "gelu" : "plain") + ", libxsmm " + libxsmm_get_target_arch() +
                 ", blocks " + std::to_string(bm) + "x" + std::to_string(bn) + "x" +
                 std::to_string(bk));
}

// The main job's per-chunk GEMMs (sp-mlp --tokens 4096 --hidden 1024 --ffn
// 4096 on 2 ranks, 8 chunks: M = 512; 16 chunks: M = 256), the first with
// its GELU, each under the blockings that did best in a first sweep
// (bn = 32: 4 ymm accumulators per column; bm x bk from 64 x K to 512 x 128).
void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t m : {512, 256}) {
    for (auto [k, n, gelu] : {std::array<int64_t, 3>{1024, 2048, 1}, {2048, 1024, 0}}) {
      for (auto [bm, bn, bk] :
           {std::array<int64_t, 3>{64, 32, k}, {m, 32, 128}, {256, 32, 256}, {64, 64, 64}}) {
        b->Args({m, k, n, gelu, bm, bn, bk});
      }
    }
  }
}

}  // namespace

BENCHMARK(BM_LinearLibxsmm)->Apply(Shapes)->Unit(benchmark::kMillisecond)->UseManualTime();

int main(int argc, char** argv) {
  libxsmm_init();
  const int rc = hostir::bench::runWithIntraOpThreads(argc, argv);
  libxsmm_finalize();
  return rc;
}
