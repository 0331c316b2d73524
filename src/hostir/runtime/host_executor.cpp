#include "hostir/runtime/host_executor.h"

#include "hostir/host_ir/lowering.h"
#include "hostir/runtime/input_validation.h"

namespace hostir {

HostExecutor::HostExecutor(const Fusion& fusion, HostIrEvaluatorParams params)
    : checks_(fusion), evaluator_(lowerToHostIr(fusion), params) {}

std::vector<at::Tensor> HostExecutor::run(const std::vector<at::Tensor>& inputs,
                                          const std::vector<at::Tensor>& outputs) {
  return run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs);
}

std::vector<at::Tensor> HostExecutor::run(const std::vector<PolymorphicValue>& inputs,
                                          const std::vector<at::Tensor>& outputs) {
  // The program's own validation gives the messages for wrong inputs
  // (count, dtype, rank, ...); the fusion checks come after it.
  checks_.check(
      inputs, [&] { validateInputs(evaluator_.container().inputs(), inputs, "the host program"); });
  return evaluator_.run(inputs, outputs);
}

}  // namespace hostir
