#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace hostir::bench {

// Wall-clock seconds one call of `body` takes.
inline double seconds(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The median of samples (the upper one of an even count).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace hostir::bench
