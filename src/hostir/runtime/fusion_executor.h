#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hostir/host_ir/gemm_epilogue.h"
#include "hostir/host_ir/segment_engine.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class ExpressionEvaluator;

// What the runs of a segment ran on so far: the engine it was planned for
// (the compiled kernel, the GEMM with post-ops), or ATen where that engine
// did not take a call (an empty tensor, past 2 GiB, a stride beyond int32,
// a machine where oneDNN has no packed GEMM), per reason.
struct SegmentRuns {
  int64_t on_planned_engine = 0;
  std::map<std::string, int64_t> fallbacks;  // reason -> runs through ATen
};

// Runs a whole fusion on one device: validates the inputs, binds them, and
// runs the fusion on its engine: as one compiled kernel (from the kernel
// cache) where the kernel layer takes all its ops, as one GEMM with post-ops
// where it is a linear and its epilogue (GemmEpilogue), else evaluating
// every op in topological order with ATen. A segment of a host program runs
// on the engine the compile stage recorded on its HostUnit (given to
// `borrowing`), never decided again; a fusion run alone has its engine
// decided on first use (decideSegmentEngine). Preallocated outputs are
// written in place.
class FusionExecutor {
 public:
  // Takes ownership of the fusion (the executor keeps it alive).
  explicit FusionExecutor(std::unique_ptr<Fusion> fusion);
  // Keeps a copy of `fusion`, as HostExecutor and MultiDeviceExecutor do:
  // `FusionExecutor executor(fusion);`.
  explicit FusionExecutor(const Fusion& fusion) : FusionExecutor(copyOf(fusion)) {}
  // Runs `fusion` without copying it; the caller keeps it alive for the
  // executor's lifetime (the host IR evaluator: a HostUnit owns its fusion).
  // `engine`: the one the compile stage recorded (HostUnit::engine), which
  // runs it; the run-time fallbacks to ATen still apply (SegmentRuns).
  static std::unique_ptr<FusionExecutor> borrowing(
      const Fusion& fusion, std::optional<SegmentEngine> engine = std::nullopt);

  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  // `run({t0, t1})`: a braced list of tensors (without this overload the
  // call would be ambiguous between the two vector overloads).
  std::vector<at::Tensor> run(std::initializer_list<at::Tensor> inputs,
                              const std::vector<at::Tensor>& outputs = {});

  const Fusion& fusion() const {
    return *fusion_;
  }

  // The device whose shards the fusion's sharded tensors hold (-1: none),
  // as the host program's evaluator has it: an uneven axis holds that
  // device's torch.chunk piece, which a replicated input sharing the
  // extent does not tell (ExpressionEvaluator::setDevice).
  void setDevice(int64_t device) {
    device_ = device;
  }

  // How the fusion runs: "compiled kernel <hash> for <target>", "GEMM with
  // post-ops: <epilogue>" or "ATen: <why>" (compiles it if it has not been
  // yet); after runs of a kernel or a GEMM with post-ops, what they ran on:
  // "; ran it 2 times, fell back to ATen 1 time: the input T0... is empty".
  std::string execution();
  SegmentRuns runs() const;

 private:
  static std::unique_ptr<Fusion> copyOf(const Fusion& fusion) {
    auto copy = std::make_unique<Fusion>();
    copyFusion(fusion, *copy);
    return copy;
  }

  FusionExecutor(const Fusion* fusion, std::optional<SegmentEngine> engine);  // borrows
  // Checks the fusion and computes the run order, once per executor.
  void prepare();
  // The engine: the recorded one, else decided here on first use.
  const SegmentEngine& engine();
  // The compiled kernel of a Kernel engine, taken from the kernel cache on
  // first use; null for another engine, or where the kernel cannot be had
  // now (the reason in kernel_lost_).
  CompiledSegment* compiled();
  std::vector<at::Tensor> runWithAten(ExpressionEvaluator& ee,
                                      const std::vector<at::Tensor>& outputs);
  // The linear and its epilogue as one oneDNN matmul with post-ops; false,
  // computing nothing, where oneDNN does not take it (linearThroughDnnlOut).
  bool runGemmEpilogue(ExpressionEvaluator& ee, std::vector<at::Tensor>& results,
                       std::string& why_not);
  // Counts a run on the planned engine, or one that fell back to ATen
  // (said once per reason under HOSTIR_DUMP=kernels).
  void recordRun(const std::optional<std::string>& fallback);

  std::unique_ptr<Fusion> owned_;  // null when borrowed
  const Fusion* fusion_ = nullptr;
  int64_t device_ = -1;
  std::vector<Expr*> exprs_;  // topological order, computed once
  // Per expr: intermediates no later expr reads.
  std::vector<std::vector<const Val*>> dead_after_;
  std::optional<GemmEpilogue> gemm_epilogue_;
  std::mutex compile_mutex_;  // guards engine_ and compiled_ on first use
  std::optional<SegmentEngine> engine_;
  bool compile_tried_ = false;
  std::unique_ptr<CompiledSegment> compiled_;
  std::string kernel_lost_;
  mutable std::mutex runs_mutex_;
  SegmentRuns runs_;
};

// Segments run as one GEMM with post-ops so far in this process (for tests).
int64_t gemmsWithPostOpsRun();

}  // namespace hostir
