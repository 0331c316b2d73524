// The transformer layer's compile (lowering, engines, kernels compiled
// ahead), first run and warm runs, per rank (issue 40: the first run within
// 1.5x a warm run). Run it under `hostir launch -n N` with a fresh
// HOSTIR_KERNEL_CACHE_DIR for a cold compile (docs/performance.md).
// Flags: --tokens T (256) --heads N (8) --head-dim D (32) --runs R (10)
// --aten-first 1: run the layer through plain ATen twice before, so that the
// process's own first-call costs (libtorch's symbols bound, its thread
// pools started, pages mapped) are not counted as hostir's first run.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "megatron_blocks.h"
#include "transformer_layer_reference.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int run(int argc, char** argv) {
  int64_t tokens = 256;
  int64_t heads = 8;
  int64_t head_dim = 32;
  int runs = 10;
  bool aten_first = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::stoll(argv[i + 1]);
    if (flag == "--tokens") {
      tokens = value;
    } else if (flag == "--heads") {
      heads = value;
    } else if (flag == "--head-dim") {
      head_dim = value;
    } else if (flag == "--runs") {
      runs = static_cast<int>(value);
    } else if (flag == "--aten-first") {
      aten_first = value != 0;
    } else {
      HOSTIR_THROW("unknown flag ", flag,
                   " (flags: --tokens --heads --head-dim --runs --aten-first)");
    }
  }
  hostir::Communicator& communicator = hostir::Communicator::getInstance();
  const int64_t devices = communicator.size();
  const int64_t hidden = heads * head_dim;
  const hostir::tools::TransformerLayerTensors tensors = hostir::tools::drawTransformerLayer(
      {.tokens = tokens, .hidden = hidden, .heads = heads, .ffn = 4 * hidden}, 0);
  const std::vector<at::Tensor> inputs =
      hostir::tools::transformerLayerLocalInputs(tensors, heads, devices, communicator.deviceId());
  for (int i = 0; aten_first && i < 2; ++i) {
    hostir::tools::transformerLayerReference(tensors, heads);
  }
  std::unique_ptr<hostir::Fusion> fusion =
      hostir::tools::buildTransformerLayer(devices, head_dim, /*chunks=*/1);

  auto start = Clock::now();
  hostir::MultiDeviceExecutor executor(*fusion, communicator);
  const double compile_ms = msSince(start);
  start = Clock::now();
  executor.run(inputs);
  const double first_ms = msSince(start);
  std::vector<double> warm;
  for (int i = 0; i < runs; ++i) {
    start = Clock::now();
    executor.run(inputs);
    warm.push_back(msSince(start));
  }
  std::sort(warm.begin(), warm.end());
  const double warm_ms = warm[warm.size() / 2];
  std::printf(
      "rank %ld: compile %.1f ms (%d kernels compiled, %d loaded from the kernel cache), "
      "first run %.2f ms, warm run %.2f ms (median of %d), first/warm %.2fx\n",
      static_cast<long>(communicator.deviceId()), compile_ms,
      hostir::KernelCache::global().compiled(), hostir::KernelCache::global().loadedFromDisk(),
      first_ms, warm_ms, runs, first_ms / warm_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const hostir::Error& error) {
    std::fprintf(stderr, "bench_first_run: %s\n", error.what());
    return 1;
  }
}
