#include "hostir/host_ir/passes/pass_registry.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "hostir/host_ir/passes/batched_matmul_sums.h"
#include "hostir/host_ir/passes/batched_rhs_gemms.h"
#include "hostir/host_ir/passes/buffer_shrinking.h"
#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/host_ir/passes/collective_scheduling.h"
#include "hostir/host_ir/passes/communication_lowering.h"
#include "hostir/host_ir/passes/gemm_epilogues.h"
#include "hostir/host_ir/passes/loop_host_units.h"
#include "hostir/host_ir/passes/propagate_stream_axes.h"
#include "hostir/host_ir/passes/recompute_scheduling.h"
#include "hostir/host_ir/passes/reduce_scatter_of_sums.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "hostir/host_ir/passes/stream_split_insertion.h"
#include "hostir/ir/fusion.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

using Lowering = std::optional<MultiDeviceLowering>;

RegisteredPass onFusion(std::string name, std::string summary, void (*run)(Fusion*),
                        PassScope scope = PassScope::MultiDevice) {
  return {std::move(name),
          PassStage::Presegmentation,
          scope,
          std::move(summary),
          [run](Fusion& fusion) { run(&fusion); },
          nullptr};
}

RegisteredPass onHostProgram(std::string name, PassScope scope, std::string summary,
                             std::function<void(HostIrContainer&, const Lowering&)> run) {
  return {std::move(name), PassStage::HostIr, scope, std::move(summary), nullptr, std::move(run)};
}

RegisteredPass onEveryHostProgram(std::string name, std::string summary,
                                  void (*run)(HostIrContainer&)) {
  return onHostProgram(std::move(name), PassScope::Always, std::move(summary),
                       [run](HostIrContainer& program, const Lowering&) { run(program); });
}

std::vector<RegisteredPass> buildTable() {
  return {
      onFusion("validate_shardings", "every DID annotation is well formed", validateShardings),
      onFusion("propagate_shardings", "every tensor gets a mesh and DID axes", propagateShardings),
      onFusion(
          "insert_stream_splits",
          "an unannotated fusion's allgathered GEMMs get the Stream split the cost model picks",
          insertStreamSplits),
      onFusion("insert_reshardings", "every resharding expr is one communication-shaped op",
               insertReshardings),
      onFusion("reorder_sharded_axis", "a resharded axis is outermost (permute + set + permute)",
               reorderShardedAxis),
      onFusion("make_resharding_contiguous", "buffers a collective reads or writes are contiguous",
               makeReshardingContiguous),
      onFusion("propagate_stream_axes",
               "a Stream split reaches the tensors computed from the marked ones",
               propagateStreamAxes, PassScope::Always),
      onHostProgram("resharding_to_communication", PassScope::MultiDevice,
                    "resharding exprs become collectives, partial ops and pipelined loops",
                    [](HostIrContainer& program, const Lowering& lowering) {
                      lowerReshardingToCommunication(program, lowering->my_device);
                    }),
      onHostProgram("specialize_encodings", PassScope::MultiDevice,
                    "weights get the encoding of each device's target",
                    [](HostIrContainer& program, const Lowering& lowering) {
                      specializeEncodings(program, lowering->targets);
                    }),
      // Before the removal: every rank rejects a Stream axis any rank would.
      onHostProgram("stream_axes_check", PassScope::MultiDevice,
                    "every rank rejects a Stream axis that any rank's lowering would",
                    [](HostIrContainer& program, const Lowering&) { checkStreamAxes(program); }),
      onHostProgram("other_devices_work_removal", PassScope::MultiDevice,
                    "exprs and buffers that live only on other devices are dropped",
                    [](HostIrContainer& program, const Lowering& lowering) {
                      removeOtherDevicesWork(program, lowering->my_device);
                    }),
      onHostProgram("reduce_scatter_of_sums", PassScope::MultiDevice,
                    "allreduced partial sums added then scattered are added, then reduce-scattered",
                    [](HostIrContainer& program, const Lowering&) { reduceScatterSums(program); }),
      onEveryHostProgram("stream_parallelization",
                         "exprs with a Stream axis become a loop over streams", parallelizeStreams),
      onEveryHostProgram("causal_key_ranges",
                         "a causal softmax in a query loop reads only the keys its rows see",
                         narrowCausalKeyRanges),
      onEveryHostProgram("buffer_shrinking", "loop intermediates shrink to one slice per stream",
                         shrinkStreamBuffers),
      onEveryHostProgram("batched_rhs_gemms",
                         "a matrix times a batch of matrices is one GEMM against their columns",
                         mergeBatchedRhsGemms),
      onEveryHostProgram("batched_matmul_sums",
                         "a batched matmul summed over its batch is one GEMM over the merged K",
                         mergeBatchedMatmulSums),
      onEveryHostProgram("loop_host_units",
                         "runs of pointwise/reduction ops in a loop body become one kernel",
                         groupLoopOpsIntoHostUnits),
      onEveryHostProgram("gemm_epilogues",
                         "a linear and the GELU/add unit after it become one GEMM with post-ops",
                         foldGemmEpilogues),
      onHostProgram(
          "collective_scheduling", PassScope::MultiDevice,
          "a collective is posted once its input is ready, waited for once needed",
          [](HostIrContainer& program, const Lowering&) { scheduleCollectives(program); }),
      onEveryHostProgram(
          "recompute_scheduling",
          "a value recomputed from the inputs lives only while the one GEMM reading it runs",
          scheduleRecomputes),
  };
}

const char* stageName(PassStage stage) {
  return stage == PassStage::Presegmentation ? "presegmentation" : "host IR";
}

const char* scopeName(PassScope scope) {
  return scope == PassScope::Always ? "always" : "multi-device";
}

}  // namespace

const std::vector<RegisteredPass>& registeredPasses() {
  static const std::vector<RegisteredPass> table = buildTable();
  return table;
}

std::vector<std::string> registeredPassNames() {
  std::vector<std::string> names;
  for (const RegisteredPass& pass : registeredPasses()) {
    names.push_back(pass.name);
  }
  return names;
}

PassPipeline<Fusion> presegmentationPipeline(bool multidevice) {
  PassPipeline<Fusion> pipeline(registeredPassNames());
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.stage == PassStage::Presegmentation &&
        (pass.scope == PassScope::Always || multidevice)) {
      pipeline.add(pass.name, pass.run_on_fusion);
    }
  }
  return pipeline;
}

HostIrPassManager hostIrPipeline(const std::optional<MultiDeviceLowering>& multidevice) {
  HostIrPassManager pipeline(registeredPassNames());
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.stage != PassStage::HostIr || (pass.scope == PassScope::MultiDevice && !multidevice)) {
      continue;
    }
    pipeline.add(pass.name,
                 [run = pass.run_on_host_program, multidevice](HostIrContainer& program) {
                   const LoweringDeviceScope device(multidevice ? multidevice->my_device : -1);
                   run(program, multidevice);
                 });
  }
  return pipeline;
}

void runPresegmentationPasses(Fusion* fusion, bool multidevice) {
  presegmentationPipeline(multidevice).run(*fusion);
}

std::string describePasses() {
  size_t name_width = 4;
  for (const RegisteredPass& pass : registeredPasses()) {
    name_width = std::max(name_width, pass.name.size());
  }
  std::ostringstream out;
  out << std::left;
  auto row = [&](const std::string& index, const char* stage, const char* scope,
                 const std::string& name, const std::string& summary) {
    out << std::setw(4) << index << std::setw(17) << stage << std::setw(14) << scope
        << std::setw(static_cast<int>(name_width) + 2) << name << summary << "\n";
  };
  row("#", "stage", "runs", "pass", "what it does");
  int index = 1;
  for (const RegisteredPass& pass : registeredPasses()) {
    row(std::to_string(index++), stageName(pass.stage), scopeName(pass.scope), pass.name,
        pass.summary);
  }
  return out.str();
}

}  // namespace hostir
