#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/fusion_checks.h"
#include "hostir/runtime/host_ir_evaluator.h"

namespace hostir {

// The entry point for running a fusion through host IR: lowers it once
// (segmentation, stream parallelization, ...) and runs the host program on
// every call.
//
// Before a run with inputs of a new signature (dtypes, sizes, scalar
// values), the inputs are checked against the fusion itself (FusionChecks:
// split factors, every op on meta tensors), so what the fusion without
// Stream axes would reject is rejected here too, naming the op.
//
// run() may be called from several threads; runs are serialized
// (HostIrEvaluator).
class HostExecutor {
 public:
  explicit HostExecutor(const Fusion& fusion, HostIrEvaluatorParams params = {});

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  // `run({t0, t1})`: a braced list of tensors would be ambiguous between the
  // two overloads above.
  std::vector<at::Tensor> run(std::initializer_list<at::Tensor> inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return run(std::vector<at::Tensor>(inputs), outputs);
  }

  // The lowered program, for inspection.
  const HostIrContainer& hostProgram() const {
    return evaluator_.container();
  }
  HostIrEvaluator& evaluator() {
    return evaluator_;
  }
  const FusionChecks& checks() const {
    return checks_;
  }

 private:
  // Before evaluator_: the evaluator (its streams) is destroyed first.
  FusionChecks checks_;
  HostIrEvaluator evaluator_;
};

}  // namespace hostir
