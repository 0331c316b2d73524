// Compiled segments against their floors and ATen's best, interleaved in one
// process with the same intra-op threads on both sides (issue 17's targets;
// docs/performance.md, "Compiled kernels"):
//   - a 10-op pointwise chain (bench_python_execute's ops) at 16M floats
//     against one pass over memory: the faster of at::add_out(y, x, 1) and
//     std::memcpy(y, x) (glibc's copy of a large block streams its stores,
//     so it is the cheapest read + write this machine does);
//     and, since the chain reads two tensors, against the traffic it cannot
//     avoid: one pass reading both and writing one (out = x + y, a plain
//     loop the compiler vectorizes, on the same threads);
//   - the 100-op chain (x*0.999, x+0.001) at 16M floats against the larger of
//     that memory floor and its arithmetic floor (100 ops per element at
//     lanes x 2 FMA units x clock x threads, from the detected target);
//   - the 100-op chain at 1K floats against ATen eager;
//   - softmax and layer norm over the last axis of [4096, 1024] floats,
//     written with hostir's ops, against at::softmax / at::layer_norm;
//   - compile time of one segment, cold and from the disk cache.
//
//   build/benchmarks/bench_kernels [--threads N] [--runs R]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/kernels/kernel_target.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/target_detection.h"
#include "wall_time.h"

namespace {

using namespace hostir;

using bench::median;
using bench::seconds;

// Median seconds per call of each body, run interleaved: a, b, a, b, ...
std::vector<double> interleaved(const std::vector<std::function<void()>>& bodies, int runs,
                                int reps) {
  for (const auto& body : bodies) {
    body();  // warm-up (and the compile)
  }
  std::vector<std::vector<double>> samples(bodies.size());
  for (int run = 0; run < runs; ++run) {
    for (size_t i = 0; i < bodies.size(); ++i) {
      samples[i].push_back(seconds([&] {
                             for (int r = 0; r < reps; ++r) {
                               bodies[i]();
                             }
                           }) /
                           reps);
    }
  }
  std::vector<double> medians;
  for (auto& s : samples) {
    medians.push_back(median(s));
  }
  return medians;
}

std::unique_ptr<Fusion> chain100() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* t = makeContigTensor(1);
  fusion->addInput(t);
  for (int i = 0; i < 100; ++i) {
    t = i % 2 == 0 ? mul(t, 0.999) : add(t, 0.001);
  }
  fusion->addOutput(t);
  return fusion;
}

at::Tensor atenChain100(at::Tensor t) {
  for (int i = 0; i < 100; ++i) {
    t = i % 2 == 0 ? at::mul(t, 0.999) : at::add(t, 0.001);
  }
  return t;
}

std::unique_ptr<Fusion> chain10() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(1);
  TensorView* y = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(y);
  TensorView* t = mul(add(x, y), 2.0);
  t = neg(sub(relu(t), y));
  t = add(mul(tanh(t), x), 1.0);
  fusion->addOutput(abs(sigmoid(t)));
  return fusion;
}

at::Tensor atenChain10(const at::Tensor& x, const at::Tensor& y) {
  at::Tensor t = at::mul(at::add(x, y), 2.0);
  t = at::neg(at::sub(at::relu(t), y));
  t = at::add(at::mul(at::tanh(t), x), 1.0);
  return at::abs(at::sigmoid(t));
}

std::unique_ptr<Fusion> softmaxFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  TensorView* e = exp(sub(x, max(x, {1}, true)));
  fusion->addOutput(div(e, sum(e, {1}, true)));
  return fusion;
}

std::unique_ptr<Fusion> layerNormFusion(int64_t width) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  fusion->addInput(x);
  fusion->addInput(w);
  fusion->addInput(b);
  double n = static_cast<double>(width);
  TensorView* centered = sub(x, div(sum(x, {1}, true), n));
  TensorView* var = div(sum(mul(centered, centered), {1}, true), n);
  TensorView* normed = div(centered, sqrt(add(var, 1e-5)));
  fusion->addOutput(add(mul(normed, broadcast(w, {true, false})), broadcast(b, {true, false})));
  return fusion;
}

double cpuGigahertz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) == 0) {
      return std::atof(line.substr(line.find(':') + 1).c_str()) / 1000.0;
    }
  }
  return 2.0;
}

void row(const char* what, double subject, double baseline, const char* baseline_name,
         const char* target) {
  std::printf("  %-34s %10.3f ms  %10.3f ms  %6.2fx  (%s; target %s)\n", what, subject * 1e3,
              baseline * 1e3, subject / baseline, baseline_name, target);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  int runs = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--threads") {
      threads = std::atoi(argv[i + 1]);
    } else if (flag == "--runs") {
      runs = std::atoi(argv[i + 1]);
    } else {
      std::cerr << "usage: bench_kernels [--threads N] [--runs R]\n";
      return 2;
    }
  }
  at::set_num_threads(threads);
  KernelTarget target = runnableKernelTarget(localTarget());
  double ghz = cpuGigahertz();
  int lanes = target.vector_bits / 32;
  std::printf(
      "bench_kernels: %d intra-op thread(s) for hostir and ATen alike; target %s; "
      "%d float lanes, 2 FMA units, %.2f GHz\n",
      threads, target.toString().c_str(), lanes, ghz);
  std::printf("  %-34s %13s  %13s  %7s\n", "", "hostir", "baseline", "ratio");

  const int64_t big = int64_t{1} << 24;
  at::Tensor x = at::randn({big});
  at::Tensor y = at::randn({big});
  at::Tensor floor_out = at::empty({big});
  at::Tensor out = at::empty({big});

  FusionExecutor ten(chain10());
  std::vector<at::Tensor> ten_inputs{x, y};
  auto copy_pass = [&] {
    std::memcpy(floor_out.data_ptr<float>(), x.data_ptr<float>(),
                static_cast<size_t>(big) * sizeof(float));
  };
  auto two_in_one_out_pass = [&] {
    const float* a = x.data_ptr<float>();
    const float* b = y.data_ptr<float>();
    float* c = floor_out.data_ptr<float>();
    at::parallel_for(0, big, int64_t{1} << 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        c[i] = a[i] + b[i];
      }
    });
  };
  std::vector<double> t10 =
      interleaved({[&] { ten.run(ten_inputs, {out}); }, [&] { at::add_out(floor_out, x, 1); },
                   copy_pass, [&] { atenChain10(x, y); }, two_in_one_out_pass},
                  runs, 3);
  double memory_floor10 = std::min(t10[1], t10[2]);
  std::printf("  (memory floor: at::add_out %.3f ms, memcpy %.3f ms; the faster is the floor)\n",
              t10[1] * 1e3, t10[2] * 1e3);
  row("10-op chain, 16M floats", t10[0], memory_floor10, "memory floor", "<= 1.3x");
  row("10-op chain, 16M floats", t10[0], t10[4], "read x and y, write out", "-");
  row("10-op chain, 16M floats", t10[0], t10[3], "ATen eager", "-");

  FusionExecutor hundred(chain100());
  std::vector<at::Tensor> hundred_inputs{x};
  std::vector<double> t100 =
      interleaved({[&] { hundred.run(hundred_inputs, {out}); },
                   [&] { at::add_out(floor_out, x, 1); }, copy_pass, [&] { atenChain100(x); }},
                  runs, 1);
  double memory_floor100 = std::min(t100[1], t100[2]);
  double arithmetic_floor = 100.0 * static_cast<double>(big) / (lanes * 2 * ghz * 1e9 * threads);
  double floor100 = std::max(memory_floor100, arithmetic_floor);
  std::printf("  (100-op floors: memory %.3f ms, arithmetic %.3f ms)\n", memory_floor100 * 1e3,
              arithmetic_floor * 1e3);
  row("100-op chain, 16M floats", t100[0], floor100, "max(memory, arithmetic floor)", "<= 1.3x");
  row("100-op chain, 16M floats", t100[0], t100[3], "ATen eager", "-");

  at::Tensor small = at::randn({1024});
  at::Tensor small_out = at::empty({1024});
  std::vector<at::Tensor> small_inputs{small};
  std::vector<double> t1k = interleaved(
      {[&] { hundred.run(small_inputs, {small_out}); }, [&] { atenChain100(small); }}, runs, 200);
  row("100-op chain, 1K floats", t1k[0], t1k[1], "ATen eager", "<= 0.2x");

  at::Tensor m = at::randn({4096, 1024});
  at::Tensor m_out = at::empty({4096, 1024});
  at::Tensor w = at::randn({1024});
  at::Tensor b = at::randn({1024});
  FusionExecutor softmax(softmaxFusion());
  FusionExecutor layer_norm(layerNormFusion(1024));
  std::vector<at::Tensor> m_inputs{m};
  std::vector<at::Tensor> ln_inputs{m, w, b};
  std::vector<double> tsm = interleaved(
      {[&] { softmax.run(m_inputs, {m_out}); }, [&] { at::_softmax_out(m_out, m, 1, false); }},
      runs, 5);
  row("softmax [4096, 1024]", tsm[0], tsm[1], "at::softmax", "<= 1.0x");
  std::vector<double> tln = interleaved(
      {[&] { layer_norm.run(ln_inputs, {m_out}); }, [&] { at::layer_norm(m, {1024}, w, b); }}, runs,
      5);
  row("layer norm [4096, 1024]", tln[0], tln[1], "at::layer_norm", "<= 1.0x");

  // Compile time: a fresh cache directory (cold), then the same segment
  // from disk after the in-memory cache is dropped.
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("hostir-bench-kernels-" + std::to_string(::getpid()));
  setenv("HOSTIR_KERNEL_CACHE_DIR", dir.c_str(), 1);
  KernelCache::global().clearMemory();
  {
    FusionExecutor warm_runtime(softmaxFusion());
    warm_runtime.run(m_inputs);
  }  // the runtime library
  KernelCache::global().clearMemory();
  double cold = seconds([&] {
    FusionExecutor e(layerNormFusion(1024));
    e.execution();
  });
  KernelCache::global().clearMemory();
  double disk = seconds([&] {
    FusionExecutor e(layerNormFusion(1024));
    e.execution();
  });
  std::printf("  %-34s %10.3f ms  (target <= 500 ms)\n", "compile one segment, cold", cold * 1e3);
  std::printf("  %-34s %10.3f ms  (target <= 5 ms)\n", "same segment from the disk cache",
              disk * 1e3);
  std::filesystem::remove_all(dir);
  return 0;
}
