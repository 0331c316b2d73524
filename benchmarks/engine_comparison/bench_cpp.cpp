// Context: the memory floor, one read + one write pass over 16M floats
// (y = x + 1, g++ -O3 -march=native, vectorized).
#include <cstring>
#include <string>

#include "common.h"

__attribute__((noinline)) void addOne(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] + 1.0f;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "run";
  if (mode != "run")
    return 0;  // nothing to compile at run time
  std::vector<float> x = bench::input(bench::kChainN, 0.5f, 1.5f, 1);
  std::vector<float> y(bench::kChainN);
  double t = bench::timeOnce([&] { addOne(x.data(), y.data(), bench::kChainN); });
  bench::printTime("floor", "memory", "-", t, 0);
  return 0;
}
