#include "timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace hostir::tools {

double medianMilliseconds(int runs, const std::function<void()>& body,
                          const std::function<void()>& before) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    if (before) {
      before();
    }
    auto start = std::chrono::steady_clock::now();
    body();
    auto stop = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace hostir::tools
