// oneDNN's matmul on a weight reordered once into the layout oneDNN picks
// for this CPU, against ATen's at::linear (OpenBLAS), interleaved in one
// process with the same intra-op threads on both sides (issue 17, item 3;
// docs/performance.md, "Packed (encoded) linear vs plain"). Per shape
// out[M, N] = x[M, K] @ W[N, K]^T and four epilogues:
//   plain     at::linear_out                      vs  matmul
//   gelu      at::linear_out + at::gelu_out (erf) vs  matmul + eltwise_gelu_erf post-op
//   bias      at::linear_out(x, W, b) (addmm)     vs  matmul with bias
//   residual  at::linear_out + add_(r)            vs  matmul + binary_add(r) post-op
// Each iteration runs both sides once (a, b, a, b, ...); the counters are the
// medians per side and their ratio (oneDNN / ATen: below 1 is faster).
//
//   build/benchmarks/bench_gemm_engines [--threads N] [--benchmark_min_time=1.5]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "hostir/runtime/dnnl_matmul.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/reduced_precision_gemm.h"
#include "hostir/runtime/target_detection.h"
#include "intra_op_threads.h"
#include "wall_time.h"

namespace {

using hostir::MatmulEpilogue;

using hostir::bench::median;
using hostir::bench::seconds;

const char* epilogueName(int64_t epilogue) {
  switch (epilogue) {
    case 0: return "plain";
    case 1: return "gelu";
    case 2: return "bias";
    default: return "residual";
  }
}

// Times `aten_side` and `dnnl_side` alternately, once each per iteration
// (a, b, a, b, ...), after one warm-up call of each (it creates and caches
// oneDNN's primitive), and records both medians, their ratio and how far the
// two results are apart.
template <typename AtenSide, typename DnnlSide>
void timeAlternately(benchmark::State& state, AtenSide aten_side, DnnlSide dnnl_side,
                     const at::Tensor& out_aten, const at::Tensor& out_dnnl,
                     const std::string& other = "dnnl") {
  aten_side();
  dnnl_side();
  double max_diff = (out_aten - out_dnnl).abs().max().item<double>();
  std::vector<double> aten_s, dnnl_s;
  for (auto _ : state) {
    double a = seconds(aten_side);
    double d = seconds(dnnl_side);
    aten_s.push_back(a);
    dnnl_s.push_back(d);
    state.SetIterationTime(a + d);
  }
  state.counters["aten_ms"] = median(aten_s) * 1e3;
  state.counters[other + "_ms"] = median(dnnl_s) * 1e3;
  state.counters[other + "/aten"] = median(dnnl_s) / median(aten_s);
  state.counters["max_diff"] = max_diff;
}

void BM_Linear(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const int64_t epilogue = state.range(3);
  at::manual_seed(0);
  at::Tensor x = at::randn({m, k});
  at::Tensor w = at::randn({n, k});
  at::Tensor bias = at::randn({n});
  at::Tensor residual = at::randn({m, n});
  at::Tensor out_aten = at::empty({m, n});
  at::Tensor tmp_aten = at::empty({m, n});
  at::Tensor out_dnnl = at::empty({m, n});

  MatmulEpilogue post;
  post.bias = epilogue == 2 ? std::optional<at::Tensor>(bias) : std::nullopt;
  post.activation = epilogue == 1 ? hostir::MatmulActivation::Gelu : hostir::MatmulActivation::None;
  post.residual = epilogue == 3 ? std::optional<at::Tensor>(residual) : std::nullopt;
  const hostir::Layout layout = hostir::Layout::dnnlBlocked(64, /*n_axis=*/0);
  at::Tensor packed = hostir::packMatmulRhs(w, layout);

  auto aten_side = [&] {
    switch (epilogue) {
      case 0: at::linear_out(out_aten, x, w); break;
      case 1:
        at::linear_out(tmp_aten, x, w);
        at::gelu_out(out_aten, tmp_aten);
        break;
      case 2: at::linear_out(out_aten, x, w, bias); break;
      default: at::linear_out(out_aten, x, w); out_aten.add_(residual);
    }
  };
  auto dnnl_side = [&] { hostir::dnnlMatmulOut(out_dnnl, x, packed, layout, post); };
  timeAlternately(state, aten_side, dnnl_side, out_aten, out_dnnl);
  state.SetLabel(std::string(epilogueName(epilogue)) + ", weight " + layout.blockName() + " (" +
                 hostir::dnnlImplementationFor(layout, k, n) + "; oneDNN prefers " +
                 hostir::dnnlPreferredLayout(k, n) + " here)");
}

void Shapes(benchmark::internal::Benchmark* b) {
  // bench_packed_linear's shapes, then the main job's per-chunk GEMMs
  // (sp-mlp --tokens 4096 --hidden 1024 --ffn 4096 on 2 ranks, C chunks):
  // [4096/C, 1024] x W1 shard [2048, 1024]^T and [4096/C, 2048] x W2 shard
  // [1024, 2048]^T; C = 32 is also sp-layer's MLP at 16 chunks (2048 tokens).
  std::vector<std::array<int64_t, 3>> shapes = {
      {64, 512, 512}, {256, 1024, 1024}, {1024, 1024, 4096}};
  for (int64_t chunks : {32, 16, 8, 4, 1}) {
    shapes.push_back({4096 / chunks, 1024, 2048});
    shapes.push_back({4096 / chunks, 2048, 1024});
  }
  // sp-layer's Q, K and V projections per chunk (2048 tokens, hidden 1024,
  // 8 local heads of 64 on 2 ranks): one per projection, or the three as
  // one GEMM against their weights side by side.
  for (int64_t rows : {64, 256, 512}) {
    shapes.push_back({rows, 1024, 512});
    shapes.push_back({rows, 1024, 1536});
  }
  for (auto [m, k, n] : shapes) {
    for (int64_t epilogue : {0, 1, 2, 3}) {
      b->Args({m, k, n, epilogue});
    }
  }
}

// The one-off cost of reordering a weight into oneDNN's layout.
void BM_Pack(benchmark::State& state) {
  at::Tensor w = at::randn({state.range(0), state.range(1)});
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        hostir::packMatmulRhs(w, hostir::Layout::dnnlBlocked(64, /*n_axis=*/0)).data_ptr());
  }
}

// The attention's batched products per query chunk, as sp-layer runs them
// (8 local heads of 64, a chunk of 128 queries against `keys` keys):
// scores = q [8, 128, 64] @ kT [8, 64, keys] and out = p [8, 128, keys] @
// v [8, keys, 64], with kT and v views into the whole sequence's buffers
// ([8, 64, 2048] and [8, 2048, 64]), oneDNN on their strides
// (dnnlBatchedMatmulOut) against ATen's at::matmul_out.
void BM_AttentionBatchedMatmul(benchmark::State& state) {
  const int64_t keys = state.range(0);
  const bool pv = state.range(1) != 0;
  constexpr int64_t kHeads = 8, kQueries = 128, kHeadDim = 64, kSequence = 2048;
  at::manual_seed(0);
  at::Tensor lhs, rhs;
  if (pv) {
    lhs = at::softmax(at::randn({kHeads, kQueries, keys}), -1);
    rhs = at::randn({kHeads, kSequence, kHeadDim}).narrow(1, 0, keys);
  } else {
    lhs = at::randn({kHeads, kQueries, kHeadDim});
    rhs = at::randn({kHeads, kHeadDim, kSequence}).narrow(2, 0, keys);
  }
  at::Tensor out_aten = at::empty({kHeads, kQueries, rhs.size(2)});
  at::Tensor out_dnnl = at::empty_like(out_aten);
  auto aten_side = [&] { at::matmul_out(out_aten, lhs, rhs); };
  if (!hostir::dnnlBatchedMatmulOut(out_dnnl, lhs, rhs)) {
    state.SkipWithError("oneDNN has no implementation for these strides");
    return;
  }
  auto dnnl_side = [&] { hostir::dnnlBatchedMatmulOut(out_dnnl, lhs, rhs); };
  timeAlternately(state, aten_side, dnnl_side, out_aten, out_dnnl);
  state.SetLabel(pv ? "p @ v" : "q @ kT");
}

// A batched product out[8, M, N] = lhs[8, M, K] @ rhs[8, K, N] of every
// shape the attention's forward and backward take (M, K, N each a head's 64
// or a chunk's 256 or a sequence's 2048), oneDNN on the operands' strides
// (dnnlBatchedMatmulOut) against ATen's at::matmul_out; `lhs_transposed`
// reads lhs as the transpose of a [8, K, M] tensor (Q^T @ dS, P^T @ dO).
// What decides batchedMatmulThroughDnnlOut's choice on each target
// (docs/performance.md, "The attention's batched products on AVX2").
// Args: M, K, N, lhs_transposed.
void BM_BatchedMatmulShapes(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const bool lhs_transposed = state.range(3) != 0;
  constexpr int64_t kBatch = 8;
  at::manual_seed(0);
  const at::Tensor lhs =
      lhs_transposed ? at::randn({kBatch, k, m}).transpose(1, 2) : at::randn({kBatch, m, k});
  const at::Tensor rhs = at::randn({kBatch, k, n});
  at::Tensor out_aten = at::empty({kBatch, m, n});
  at::Tensor out_dnnl = at::empty_like(out_aten);
  if (!hostir::dnnlBatchedMatmulOut(out_dnnl, lhs, rhs)) {
    state.SkipWithError("oneDNN has no implementation for these strides");
    return;
  }
  auto aten_side = [&] { at::matmul_out(out_aten, lhs, rhs); };
  auto dnnl_side = [&] { hostir::dnnlBatchedMatmulOut(out_dnnl, lhs, rhs); };
  timeAlternately(state, aten_side, dnnl_side, out_aten, out_dnnl);
  state.SetLabel(lhs_transposed ? "lhs transposed" : "lhs plain");
}

// The main job's per-chunk GEMMs where oneDNN keeps weights plain (AVX2:
// DNNL_MAX_CPU_ISA=AVX2 on an AVX-512 machine, issue 39): ATen's linear
// (OpenBLAS; OPENBLAS_CORETYPE picks its kernels) against oneDNN's matmul
// on the plain W^T, as dnnlBatchedMatmulOut runs it (one batch, W^T's
// strides; oneDNN then runs its own jit sgemm, "gemm:jit", packing B per
// call as OpenBLAS does). Args: M, K, N.
void BM_LinearPlainWeights(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  at::manual_seed(0);
  at::Tensor x = at::randn({1, m, k});
  at::Tensor w = at::randn({n, k}) / std::sqrt(static_cast<double>(k));
  at::Tensor out_aten = at::empty({1, m, n});
  at::Tensor out_dnnl = at::empty({1, m, n});
  const at::Tensor w_t = w.t().unsqueeze(0);  // [1, K, N], strides (., 1, K)
  if (!hostir::dnnlBatchedMatmulOut(out_dnnl, x, w_t)) {
    state.SkipWithError("oneDNN has no implementation for W^T's strides");
    return;
  }
  auto aten_side = [&] { at::linear_out(out_aten, x, w); };
  auto dnnl_side = [&] { hostir::dnnlBatchedMatmulOut(out_dnnl, x, w_t); };
  timeAlternately(state, aten_side, dnnl_side, out_aten, out_dnnl);
  state.SetLabel("plain W^T (oneDNN prefers " + hostir::dnnlPreferredLayout(k, n) + " here)");
}

// A weight gradient's GEMM, dW[M, N] = Aᵀ @ B with A[K, M] read
// transposed and B[K, N] an activation new every step (the MLP training
// step's dW1 = dhᵀ @ x and dW2 = dyᵀ @ gelu(h), K the 4096 tokens): packing
// B into oneDNN's blocked layout then its matmul, as matmulThroughDnnlOut
// ran it before 94a683d, against oneDNN on the plain B (dnnlPlainMatmulOut,
// gemm:jit), as it runs a program buffer's first read now. Args: M, N.
void BM_WeightGradient(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = 4096;
  at::manual_seed(0);
  const at::Tensor lhs = at::randn({k, m}).t();
  const at::Tensor rhs = at::randn({k, n});
  at::Tensor out_packed = at::empty({m, n});
  at::Tensor out_plain = at::empty({m, n});
  const int64_t n_block = hostir::dnnlPreferredNBlock(k, n);
  if (n_block == 0) {
    state.SkipWithError("oneDNN keeps B plain on this target: nothing is packed");
    return;
  }
  const hostir::Layout layout = hostir::Layout::dnnlBlocked(n_block, /*n_axis=*/1);
  auto packed_side = [&] {
    hostir::packedMatmulOut(out_packed, lhs, hostir::packMatmulRhs(rhs, layout), layout);
  };
  auto plain_side = [&] { hostir::dnnlPlainMatmulOut(out_plain, lhs, rhs); };
  packed_side();
  if (!hostir::dnnlPlainMatmulOut(out_plain, lhs, rhs)) {
    state.SkipWithError("oneDNN has no fast kernel for the plain operands");
    return;
  }
  std::vector<double> packed_s, plain_s;
  for (auto _ : state) {
    packed_s.push_back(seconds(packed_side));
    plain_s.push_back(seconds(plain_side));
    state.SetIterationTime(packed_s.back() + plain_s.back());
  }
  state.counters["packed_ms"] = median(packed_s) * 1e3;
  state.counters["plain_ms"] = median(plain_s) * 1e3;
  state.counters["plain/packed"] = median(plain_s) / median(packed_s);
  state.counters["max_diff"] = (out_packed - out_plain).abs().max().item<double>();
}

// A bfloat16 linear where ATen has no fast bfloat16 GEMM (below AVX-512:
// its scalar reference loop): ATen's at::linear_out against hostir's
// linearInFloatOut (the product in float32 through BLAS, rounded once;
// runtime/reduced_precision_gemm.h). Args: M, K, N.
void BM_Bfloat16Linear(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  if (!hostir::reducedPrecisionGemmRunsInFloat(at::kBFloat16, hostir::localTarget())) {
    state.SkipWithError("ATen runs bfloat16 GEMMs through oneDNN on this target");
    return;
  }
  at::manual_seed(0);
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const at::Tensor x = at::randn({m, k}).to(bf16);
  const at::Tensor w = (at::randn({n, k}) / std::sqrt(static_cast<double>(k))).to(bf16);
  at::Tensor out_aten = at::empty({m, n}, bf16);
  at::Tensor out_float = at::empty({m, n}, bf16);
  auto aten_side = [&] { at::linear_out(out_aten, x, w); };
  auto float_side = [&] { hostir::linearInFloatOut(out_float, x, w, c10::nullopt); };
  timeAlternately(state, aten_side, float_side, out_aten, out_float, "float");
}

}  // namespace

BENCHMARK(BM_Bfloat16Linear)
    ->Args({64, 512, 512})
    ->Args({256, 1024, 1024})
    ->Args({512, 1024, 2048})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_WeightGradient)
    ->Args({2048, 1024})
    ->Args({1024, 2048})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_LinearPlainWeights)
    ->Args({512, 1024, 2048})
    ->Args({512, 2048, 1024})
    ->Args({256, 1024, 2048})
    ->Args({256, 2048, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_Linear)->Apply(Shapes)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_AttentionBatchedMatmul)
    ->ArgsProduct({{512, 1024, 2048}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_BatchedMatmulShapes)
    ->ArgsProduct({{64, 256, 2048}, {64, 256, 2048}, {64, 256, 2048}, {0, 1}})
    ->ArgsProduct({{128, 512, 1024}, {64, 256}, {512, 1024, 2048}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_Pack)->Args({2048, 1024})->Args({4096, 1024})->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  return hostir::bench::runWithIntraOpThreads(argc, argv);
}
