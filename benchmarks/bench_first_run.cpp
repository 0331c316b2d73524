// Compile (lowering, engines, kernels compiled ahead), first run and warm
// runs of a program, per rank (issue 40: the first run within 1.5x a warm
// run, a cold compile within 0.5 s a segment). Run it under `hostir launch
// -n N` with a fresh HOSTIR_KERNEL_CACHE_DIR for a cold compile
// (docs/performance.md, "Compile stage and first run").
// Flags: --program layer|train|pointwise (layer: the transformer layer's
// forward; train: its training step, the forward that saves and the
// backward; pointwise: one segment of 20 ops, 10 of them tanh, unsharded)
// --tokens T (256) --heads N (8) --head-dim D (32) --runs R (10)
// --executors E (1): E executors of the same program made and first-run one
// after another: the second's first run has the process's one-time costs
// (libraries' first calls, thread pools) paid by the first, so first runs
// that differ split one-time process costs from the executor's own.
// --window 1: print each first run's interval on CLOCK_MONOTONIC, the clock
// of `perf record -k CLOCK_MONOTONIC`, to profile the first run alone.
// --aten-first 1: run the layer through plain ATen twice before, so that the
// process's own first-call costs (libtorch's symbols bound, its thread
// pools started, pages mapped) are not counted as hostir's first run.
#include <ATen/ATen.h>

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hostir/autodiff/differentiate.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/tensor_factories.h"
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

double monotonicSeconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// CPU time of every thread of the process so far (user + system).
double processCpuMs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec * 1e-3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

struct Options {
  std::string program = "layer";
  int64_t tokens = 256;
  int64_t heads = 8;
  int64_t head_dim = 32;
  int runs = 10;
  int executors = 1;
  bool aten_first = false;
  bool window = false;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--program") {
      HOSTIR_CHECK(value == "layer" || value == "train" || value == "pointwise", "--program ",
                   value, " is not a program; valid: layer, train, pointwise");
      options.program = value;
    } else if (flag == "--tokens") {
      options.tokens = std::stoll(value);
    } else if (flag == "--heads") {
      options.heads = std::stoll(value);
    } else if (flag == "--head-dim") {
      options.head_dim = std::stoll(value);
    } else if (flag == "--runs") {
      options.runs = std::max(1, std::stoi(value));
    } else if (flag == "--executors") {
      options.executors = std::max(1, std::stoi(value));
    } else if (flag == "--window") {
      options.window = std::stoll(value) != 0;
    } else if (flag == "--aten-first") {
      options.aten_first = std::stoll(value) != 0;
    } else {
      HOSTIR_THROW("unknown flag ", flag,
                   " (flags: --program --tokens --heads --head-dim --runs --executors --window "
                   "--aten-first)");
    }
  }
  return options;
}

// 20 pointwise ops on one tensor, 10 of them tanh (a new user's first try,
// issue 40): one segment, one kernel.
std::unique_ptr<hostir::Fusion> pointwiseChain() {
  using namespace hostir;
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* y = x;
  for (int i = 0; i < 10; ++i) {
    y = tanh(i % 2 == 0 ? mul(y, 1.0 + 0.125 * i) : add(y, 0.25 * i));
  }
  fusion->addOutput(y);
  return fusion;
}

// One program to time: its executors (the forward and, for train, the
// backward) and a run of both.
struct Program {
  std::vector<std::unique_ptr<hostir::MultiDeviceExecutor>> executors;
  std::function<void()> run;
};

// Builds (and, through the executors' constructors, compiles) `fusions`
// and the run of them on `inputs`.
class Bench {
 public:
  Bench(const Options& options, hostir::Communicator& communicator)
      : options_(options), communicator_(communicator) {
    const int64_t devices = communicator.size();
    if (options.program == "pointwise") {
      inputs_ = {at::randn({options.tokens, 1024})};
      fusion_ = pointwiseChain();
      return;
    }
    const int64_t hidden = options.heads * options.head_dim;
    const hostir::tools::TransformerLayerTensors tensors = hostir::tools::drawTransformerLayer(
        {.tokens = options.tokens, .hidden = hidden, .heads = options.heads, .ffn = 4 * hidden}, 0);
    inputs_ = hostir::tools::transformerLayerLocalInputs(tensors, options.heads, devices,
                                                         communicator.deviceId());
    for (int i = 0; options.aten_first && i < 2; ++i) {
      hostir::tools::transformerLayerReference(tensors, options.heads);
    }
    fusion_ = hostir::tools::buildTransformerLayer(devices, options.head_dim, /*chunks=*/1);
    if (options.program == "train") {
      differentiated_ = hostir::differentiate(*fusion_);
      output_grad_ = at::randn_like(inputs_.at(0));
    }
  }

  Program make() {
    Program program;
    if (!differentiated_.has_value()) {
      program.executors.push_back(
          std::make_unique<hostir::MultiDeviceExecutor>(*fusion_, communicator_));
      hostir::MultiDeviceExecutor* forward = program.executors.back().get();
      program.run = [this, forward] { forward->run(inputs_); };
      return program;
    }
    program.executors.push_back(
        std::make_unique<hostir::MultiDeviceExecutor>(*differentiated_->forward, communicator_));
    program.executors.push_back(
        std::make_unique<hostir::MultiDeviceExecutor>(*differentiated_->backward, communicator_));
    hostir::MultiDeviceExecutor* forward = program.executors[0].get();
    hostir::MultiDeviceExecutor* backward = program.executors[1].get();
    program.run = [this, forward, backward] {
      std::vector<at::Tensor> outputs = forward->run(inputs_);
      std::vector<at::Tensor> backward_inputs = inputs_;
      backward_inputs.push_back(output_grad_);
      for (int64_t saved : differentiated_->saved_outputs) {
        backward_inputs.push_back(outputs.at(static_cast<size_t>(saved)));
      }
      backward->run(backward_inputs);
    };
    return program;
  }

 private:
  const Options& options_;
  hostir::Communicator& communicator_;
  std::vector<at::Tensor> inputs_;
  std::unique_ptr<hostir::Fusion> fusion_;
  std::optional<hostir::Differentiated> differentiated_;
  at::Tensor output_grad_;
};

int run(int argc, char** argv) {
  const Options options = parse(argc, argv);
  hostir::Communicator& communicator = hostir::Communicator::getInstance();
  Bench bench(options, communicator);
  std::vector<Program> kept;  // alive to the end: a later executor is not the same memory
  for (int e = 0; e < options.executors; ++e) {
    const int compiled = hostir::KernelCache::global().compiled();
    const int loaded = hostir::KernelCache::global().loadedFromDisk();
    auto start = Clock::now();
    Program program = bench.make();
    const double compile_ms = msSince(start);
    start = Clock::now();
    const double window_start = monotonicSeconds();
    const double cpu_start = processCpuMs();
    program.run();
    const double first_ms = msSince(start);
    const double first_cpu_ms = processCpuMs() - cpu_start;
    if (options.window) {
      std::printf("first run window %.6f %.6f\n", window_start, monotonicSeconds());
    }
    std::vector<double> warm;
    for (int i = 0; i < options.runs; ++i) {
      start = Clock::now();
      program.run();
      warm.push_back(msSince(start));
    }
    const double warm_cpu_ms = (processCpuMs() - cpu_start - first_cpu_ms) / options.runs;
    const double second_ms = warm.front();
    std::sort(warm.begin(), warm.end());
    const double warm_ms = warm[warm.size() / 2];
    std::printf(
        "rank %ld, %s, executor %d: compile %.1f ms (%d kernels compiled, %d loaded from the "
        "kernel cache), first run %.2f ms, second run %.2f ms, warm run %.2f ms (median of %d), "
        "first/warm %.2fx; CPU time of the process's threads: first run %.1f ms, a warm run %.1f "
        "ms (mean)\n",
        static_cast<long>(communicator.deviceId()), options.program.c_str(), e + 1, compile_ms,
        hostir::KernelCache::global().compiled() - compiled,
        hostir::KernelCache::global().loadedFromDisk() - loaded, first_ms, second_ms, warm_ms,
        options.runs, first_ms / warm_ms, first_cpu_ms, warm_cpu_ms);
    kept.push_back(std::move(program));
  }
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
