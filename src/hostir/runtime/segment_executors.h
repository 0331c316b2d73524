#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class Expr;
class HostUnit;

// The executors of a host program's segments: one per HostUnit and one per
// LaunchKernel kernel, made once with the program. The program owns the
// segments' fusions and outlives this (the evaluator declares it first), so
// the executors borrow them. `device`: the rank's device, whose shards the
// segments' sharded tensors hold (-1: none).
class SegmentExecutors {
 public:
  SegmentExecutors(const HostIrContainer& program, int64_t device);

  FusionExecutor& forUnit(const HostUnit* unit);
  // Throws hostir::Error for a kernel id the program does not have.
  FusionExecutor& forKernel(int64_t kernel_id);

  // How each segment runs and what its runs so far ran on, one line per
  // HostUnit the program posts, then per kernel (FusionExecutor::execution).
  std::string execution(const HostIrContainer& program) const;

 private:
  std::unordered_map<const HostUnit*, std::unique_ptr<FusionExecutor>> units_;
  std::vector<std::unique_ptr<FusionExecutor>> kernels_;
};

// Runs a segment (`expr`, a PostOnStream of `unit` or a LaunchKernel with
// `unit` null) on `inputs` into `outputs`, then, for HOSTIR_CHECK_FINITE,
// checks its outputs hold no NaN/Inf the inputs did not, naming the
// segment's ops.
void runSegmentCheckingFinite(const Expr* expr, const HostUnit* unit, FusionExecutor& executor,
                              const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs);

}  // namespace hostir
