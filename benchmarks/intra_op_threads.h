#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

namespace hostir::bench {

// main() of a benchmark whose ATen and oneDNN run on `--threads N` intra-op
// threads (default 1: at::set_num_threads, which in this OpenMP build is
// also the count oneDNN's OpenMP runtime uses); the other arguments go to
// Google Benchmark.
inline int runWithIntraOpThreads(int argc, char** argv) {
  int threads = 1;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  at::set_num_threads(threads);
  std::cout << "intra-op threads (ATen and oneDNN): " << at::get_num_threads() << "\n";
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace hostir::bench
