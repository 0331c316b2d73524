// Host IR evaluator overhead (issue 3): a stream-pipelined ForLoop of 1,000
// iterations whose op is tiny (adding 1 to a 16-element slice; also 8,192,
// where each add goes to a stream worker), so the time is the evaluator's
// own: walking the program, binding views, enqueueing closures on streams
// and synchronizing them. Compared against the same ATen ops called
// directly in a loop on the host thread.
//
// The program (numberOfStreams = 4):
//   T1 = ALLOCATE(T1[i0, i1])
//   GetCurrentStream into Stream 0
//   FOR StreamIdx in iStreamIdx{i0}:               i0 = 1,000
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     in_slice  = HirAliasSelect( T0, axis 0, index = StreamIdx )
//     out_slice = HirAliasSelect( T1, axis 0, index = StreamIdx )
//     out_slice = add( in_slice, 1 )
//     SetCurrentStream to Stream 0
//     Synchronize Stream ( StreamIdx % numberOfStreams )
// Host instructions executed per run: 3 + 6 * 1,000 (the Allocate, the
// GetCurrentStream, the ForLoop itself, and six body exprs per iteration).
//
// Reported: real time per run, microseconds per host instruction, and the
// ratio HostIr / Aten.
#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>
#include <sys/resource.h>

#include <iomanip>
#include <iostream>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "ratio_reporter.h"

namespace {

constexpr int64_t kIterations = 1000;
constexpr int64_t kBodyExprs = 6;
constexpr int64_t kHostInstructions = 3 + kBodyExprs * kIterations;

using namespace hostir;

// What the whole process used, every thread together (the host thread and
// the stream workers). Real time on a shared machine depends on what else
// runs; the CPU time and the context switches a run costs do not.
struct ProcessUsage {
  double cpu_us = 0;
  double context_switches = 0;
};

ProcessUsage processUsage() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return 1e6 * static_cast<double>(t.tv_sec) + t.tv_usec; };
  return {us(usage.ru_utime) + us(usage.ru_stime),
          static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw)};
}

// Runs the benchmark's loop, then adds per-run counters: the process's CPU
// time (all threads) and its context switches.
template <typename RunOnce>
void measureRuns(benchmark::State& state, RunOnce run_once) {
  const ProcessUsage before = processUsage();
  for (auto _ : state) {
    run_once();
  }
  const ProcessUsage after = processUsage();
  using benchmark::Counter;
  state.counters["proc_cpu_us"] = Counter(after.cpu_us - before.cpu_us, Counter::kAvgIterations);
  state.counters["ctx_switches"] =
      Counter(after.context_switches - before.context_switches, Counter::kAvgIterations);
  state.counters["host_instrs"] = static_cast<double>(kHostInstructions);
}

std::unique_ptr<HostIrContainer> makeProgram() {
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard fg(hic.get());
  TensorView* in = makeContigTensor(2);
  hic->addInput(in);
  Val* rows = in->axis(0)->extent();
  Val* cols = in->axis(1)->extent();
  auto make_tensor = [](const std::vector<Val*>& extents) {
    std::vector<IterDomain*> ids;
    for (Val* extent : extents) {
      ids.push_back(IrBuilder::create<IterDomain>(extent));
    }
    auto* domain = IrBuilder::create<TensorDomain>(ids, std::vector<bool>(ids.size(), false));
    return IrBuilder::create<TensorView>(domain, DataType::Float);
  };
  TensorView* in_slice = make_tensor({cols});
  TensorView* out_slice = add(in_slice, 1.0);
  TensorView* out = make_tensor({rows, cols});
  hic->addOutput(out);

  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  Val* index = IrBuilder::create<Scalar>(std::string(kStreamIdx), DataType::Int64);
  Val* n_streams = IrBuilder::create<Scalar>(std::string(kNumberOfStreams), DataType::Int64);
  auto* worker = IrBuilder::create<Stream>(mod(index, n_streams));
  auto* id = IrBuilder::create<IterDomain>(rows, IterType::Iteration, ParallelType::Stream);
  auto* loop = IrBuilder::create<ForLoop>(index, id);
  Scope& body = loop->body();
  body.push_back(IrBuilder::create<SetCurrentStream>(worker));
  body.push_back(IrBuilder::create<HirAliasSelect>(in, in_slice, 0, index));
  body.push_back(IrBuilder::create<HirAliasSelect>(out, out_slice, 0, index));
  body.push_back(out_slice->definition());
  body.push_back(IrBuilder::create<SetCurrentStream>(get_caller->stream()));
  body.push_back(IrBuilder::create<Synchronize>(worker));

  hic->pushBackTopLevelExpr(IrBuilder::create<Allocate>(out, MemoryType::Global, false));
  hic->pushBackTopLevelExpr(get_caller);
  hic->pushBackTopLevelExpr(loop);
  return hic;
}

void HostIr(benchmark::State& state) {
  HostIrEvaluator hie(makeProgram(), HostIrEvaluatorParams{.number_of_streams = 4});
  std::vector<at::Tensor> inputs{at::randn({kIterations, state.range(0)})};
  at::Tensor expected = inputs[0] + 1;
  if (!at::allclose(hie.run(inputs)[0], expected)) {
    state.SkipWithError("the host program computed a wrong result");
    return;
  }
  measureRuns(state, [&] { benchmark::DoNotOptimize(hie.run(inputs)); });
}

// The same work without the evaluator: the views and the add, called
// directly, with the 1 made once as a float wrapped number (as the evaluator
// makes it), so that ATen does not convert a double on every add.
void Aten(benchmark::State& state) {
  at::Tensor in = at::randn({kIterations, state.range(0)});
  at::Tensor one = at::detail::scalar_tensor_static(1.0, at::kFloat, at::kCPU);
  one.unsafeGetTensorImpl()->set_wrapped_number(true);
  measureRuns(state, [&] {
    at::Tensor out = at::empty_like(in);
    for (int64_t i = 0; i < kIterations; ++i) {
      at::Tensor in_slice = in.select(0, i);
      at::Tensor out_slice = out.select(0, i);
      at::add_out(out_slice, in_slice, one);
    }
    benchmark::DoNotOptimize(out);
  });
}

// 16 columns: ops cheaper than a hand-off, run by the host thread while their
// stream is idle (Stream::enqueueCheap). 8192 columns: past that size, every
// add is handed to its stream's worker, so the hand-offs show.
BENCHMARK(HostIr)->Arg(16)->Arg(8192)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Aten)->Arg(16)->Arg(8192)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Adds the per-host-instruction figure to the ratio.
class OverheadReporter : public hostir::bench::RatioReporter {
 public:
  OverheadReporter() : RatioReporter("HostIr", "Aten") {}

  void ReportRuns(const std::vector<Run>& runs) override {
    RatioReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      auto instrs = run.counters.find("host_instrs");
      if (run.run_type == Run::RT_Iteration && instrs != run.counters.end()) {
        per_instruction_[run.benchmark_name()] = run.GetAdjustedRealTime() / instrs->second.value;
      }
    }
  }

  void Finalize() override {
    RatioReporter::Finalize();
    std::cout << "\nmicroseconds per host instruction (" << kHostInstructions
              << " per run; Aten: run time / the same count):\n";
    for (const auto& [name, us] : per_instruction_) {
      std::cout << "  " << std::left << std::setw(28) << name << std::fixed << std::setprecision(3)
                << us << " us\n";
    }
  }

 private:
  std::map<std::string, double> per_instruction_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  OverheadReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
