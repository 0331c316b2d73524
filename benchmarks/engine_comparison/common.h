// Shared by the engine benchmarks: inputs, the plain C++ reference, timing,
// and the protocol the driver (run.sh) reads. Each engine is its own
// program: Halide 14 links LLVM 14, the LLVM benchmark links LLVM 15.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

constexpr int64_t kChainN = int64_t(1) << 24;  // 16M floats
constexpr int kChainOps = 100;                 // x*0.999, x+0.001 alternating
constexpr int64_t kRows = 4096, kCols = 1024;  // softmax [4096, 1024]

inline double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::vector<float> input(int64_t n, float lo, float hi, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * float(s >> 8) / float(1u << 24);
  }
  return v;
}

// The reference: one op at a time, rounded per op (built with
// -ffp-contract=off, so no FMA), std::exp.
inline void refChain(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    for (int k = 0; k < kChainOps; ++k)
      v = (k % 2 == 0) ? v * 0.999f : v + 0.001f;
    y[i] = v;
  }
}

inline void refSoftmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c)
      m = std::max(m, in[c]);
    float s = 0.f;
    for (int64_t c = 0; c < cols; ++c)
      s += (out[c] = std::exp(in[c] - m));
    for (int64_t c = 0; c < cols; ++c)
      out[c] = out[c] / s;
  }
}

inline double maxRelDiff(const std::vector<float>& a, const std::vector<float>& ref) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d =
        std::fabs(double(a[i]) - double(ref[i])) / std::max(std::fabs(double(ref[i])), 1e-30);
    if (!(d <= worst))
      worst = d;  // NaN propagates as the worst
  }
  return worst;
}

// The chain run again on n - 5 elements (not a multiple of any vector
// width): the prefix must match the reference and the rest stay untouched.
template <typename F>
double tailCheck(const std::vector<float>& ref, F&& run) {
  int64_t n = int64_t(ref.size()) - 5;
  std::vector<float> y(ref.size(), -1.0f);
  run(y.data(), n);
  for (size_t i = size_t(n); i < y.size(); ++i)
    if (y[i] != -1.0f)
      return INFINITY;
  std::copy(ref.begin() + n, ref.end(), y.begin() + n);
  return maxRelDiff(y, ref);
}

// Inputs and references, computed once per process.
struct Data {
  std::vector<float> chain_x = input(kChainN, 0.5f, 1.5f, 1);
  std::vector<float> chain_ref = std::vector<float>(kChainN);
  std::vector<float> soft_x = input(kRows * kCols, -4.f, 4.f, 2);
  std::vector<float> soft_ref = std::vector<float>(kRows * kCols);
  Data() {
    refChain(chain_x.data(), chain_ref.data(), kChainN);
    refSoftmax(soft_x.data(), soft_ref.data(), kRows, kCols);
  }
};

// Protocol lines read by run.sh:
//   compile ENGINE KERNEL MODE MS            (one line per fresh compile)
//   time    ENGINE KERNEL MODE MS MAXRELDIFF (one line per timed run)
inline void printCompile(const char* engine, const char* kernel, const char* mode, double ms) {
  std::printf("compile %s %s %s %.3f\n", engine, kernel, mode, ms);
  std::fflush(stdout);
}
inline void printTime(const char* engine, const char* kernel, const char* mode, double ms,
                      double rel) {
  std::printf("time %s %s %s %.3f %.3g\n", engine, kernel, mode, ms, rel);
  std::fflush(stdout);
}

// One warm-up call, then one timed call (the driver takes the median over
// rounds, which it interleaves between engines).
template <typename F>
double timeOnce(F&& f) {
  f();
  double t0 = nowMs();
  f();
  return nowMs() - t0;
}

}  // namespace bench
