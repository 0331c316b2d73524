#pragma once

#include "hostir/ir/fusion.h"
#include "hostir/runtime/executor.h"
#include "hostir/runtime/host_ir_evaluator.h"

namespace hostir {

// Runs a fusion in this process through the one run path (executor.h):
// lowers it once (segmentation, stream parallelization, ...) and runs the
// host program on every call.
//
// Before a run with inputs of a new signature (dtypes, sizes, scalar
// values), the inputs are checked against the fusion itself (FusionChecks:
// split factors, every op on meta tensors), so what the fusion without
// Stream axes would reject is rejected here too, naming the op.
class HostExecutor : public Executor {
 public:
  explicit HostExecutor(const Fusion& fusion, HostIrEvaluatorParams params = {})
      : Executor(fusion, ExecutorParams{.number_of_streams = params.number_of_streams}) {}
};

}  // namespace hostir
