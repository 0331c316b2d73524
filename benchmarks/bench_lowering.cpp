// Lowering time (segmentation + host IR emission + passes) of generated
// fusions of about 100, 1,000 and 10,000 exprs mixing stream-parallel
// pointwise ops, non-host-lowerable unary chains (PostOnStream segments),
// reductions and broadcasts. Prints each time and the growth per 10x exprs.
// Target (issue 4): 1,000 exprs in under 50 ms, growth no worse than ~12x.
#include <benchmark/benchmark.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"

namespace {

using hostir::ParallelType;
using hostir::TensorView;

void stream(TensorView* tv) {
  tv->axis(0)->parallelize(ParallelType::Stream);
}

// Repeats a block of 9 exprs until the fusion has `target` exprs:
//   a = set(t); b = a * 0.999; c = b + 0.001       (one fused stream loop)
//   d = neg(abs(c))                                  (a PostOnStream segment)
//   r = sum(d, {1}); rb = broadcast(r)               (stream-parallel reduction)
//   e = d - rb; t = relu(e)                           (loop, then a segment)
// Every 4th block also outputs `t`.
std::unique_ptr<hostir::Fusion> makeFusion(int64_t target) {
  auto fusion = std::make_unique<hostir::Fusion>();
  hostir::FusionGuard fg(fusion.get());
  TensorView* t = hostir::makeContigTensor(2);
  fusion->addInput(t);
  int64_t block = 0;
  while (static_cast<int64_t>(fusion->exprs().size()) < target) {
    TensorView* a = hostir::set(t);
    TensorView* b = hostir::mul(a, 0.999);
    TensorView* c = hostir::add(b, 0.001);
    TensorView* d = hostir::neg(hostir::abs(c));
    TensorView* r = hostir::sum(d, {1});
    TensorView* rb = hostir::broadcast(r, {false, true});
    TensorView* e = hostir::sub(d, rb);
    for (TensorView* tv : {a, b, c, r, e}) {
      stream(tv);
    }
    t = hostir::relu(e);
    if (++block % 4 == 0) {
      fusion->addOutput(t);
    }
  }
  fusion->addOutput(t);
  return fusion;
}

void LowerToHostIr(benchmark::State& state) {
  std::unique_ptr<hostir::Fusion> fusion = makeFusion(state.range(0));
  state.counters["exprs"] = static_cast<double>(fusion->exprs().size());
  int64_t host_exprs = 0;
  for (auto _ : state) {
    std::unique_ptr<hostir::HostIrContainer> hic = hostir::lowerToHostIr(*fusion);
    host_exprs = static_cast<int64_t>(hic->topLevel().size());
    benchmark::DoNotOptimize(hic);
  }
  state.counters["top_level"] = static_cast<double>(host_exprs);
}

void LowerSegmentsOnly(benchmark::State& state) {
  std::unique_ptr<hostir::Fusion> fusion = makeFusion(state.range(0));
  state.counters["exprs"] = static_cast<double>(fusion->exprs().size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(hostir::lowerSegmentsToHostIr(*fusion));
  }
}

BENCHMARK(LowerToHostIr)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(LowerSegmentsOnly)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// Console output plus, per family, the growth of the time per 10x exprs.
class GrowthReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) {
        continue;
      }
      std::string name = run.benchmark_name();
      auto slash = name.find('/');
      times_[name.substr(0, slash)][std::stol(name.substr(slash + 1))] = run.GetAdjustedRealTime();
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::cout << "\ngrowth of lowering time per 10x exprs:\n";
    for (const auto& [family, times] : times_) {
      const double* previous = nullptr;
      long previous_size = 0;
      for (const auto& [size, time] : times) {
        std::cout << "  " << std::left << std::setw(18) << family << std::setw(7) << size
                  << std::fixed << std::setprecision(2) << std::setw(10) << time << " ms";
        if (previous != nullptr) {
          std::cout << "  x" << std::setprecision(1) << time / *previous << " vs " << previous_size;
        }
        std::cout << "\n";
        previous = &time;
        previous_size = size;
      }
    }
  }

 private:
  std::map<std::string, std::map<long, double>> times_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  GrowthReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
