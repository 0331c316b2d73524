#pragma once

#include <memory>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/host_ir_evaluator.h"

namespace hostir {

// The entry point for running a fusion through host IR: lowers it once
// (segmentation, stream parallelization, ...) and runs the host program on
// every call.
class HostExecutor {
 public:
  explicit HostExecutor(const Fusion& fusion, HostIrEvaluatorParams params = {});

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return evaluator_.run(inputs, outputs);
  }
  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return evaluator_.run(inputs, outputs);
  }

  // The lowered program, for inspection.
  const HostIrContainer& hostProgram() const {
    return evaluator_.container();
  }
  HostIrEvaluator& evaluator() {
    return evaluator_;
  }

 private:
  HostIrEvaluator evaluator_;
};

}  // namespace hostir
