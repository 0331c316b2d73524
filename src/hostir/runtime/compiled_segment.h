#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/kernels/kernel_signature.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class ExpressionEvaluator;

// A segment that runs as one compiled kernel: binds ATen tensors to the
// kernel's buffers and evaluates its scalar arguments (docs/kernels.md).
class CompiledSegment {
 public:
  // The compiled form of `fusion` for this process's target, or nullptr
  // with the reason in `why_not` (an op without a kernel lowering,
  // HOSTIR_KERNELS=aten, or an engine failure, which is also warned about).
  static std::unique_ptr<CompiledSegment> compile(const Fusion& fusion, std::string* why_not);

  // Runs the kernel on `inputs` (the fusion's inputs, bound in `ee`) into
  // `outputs` (allocated here where undefined). Returns false, touching
  // nothing, for a call the kernel does not take (an empty tensor, a
  // tensor past 2^31 bytes, a stride beyond int32, a pad, cat or gather
  // call of runtime/resize_gather_checks.h: an index out of range...), with
  // the reason in `why_not`; the caller then runs the segment through ATen.
  bool run(ExpressionEvaluator& ee, const std::vector<PolymorphicValue>& inputs,
           std::vector<at::Tensor>& outputs, std::string* why_not = nullptr);

  const CompiledKernel& kernel() const {
    return *kernel_;
  }

 private:
  CompiledSegment(KernelSignature signature, std::shared_ptr<const CompiledKernel> kernel,
                  const Fusion& fusion);

  KernelSignature signature_;
  std::shared_ptr<const CompiledKernel> kernel_;
  const Fusion* fusion_;
  // Checked before every call, as ATen would check them op by op: select
  // indices in range, pointwise operands of one size along each axis (or
  // broadcast), a reshape keeping the element count.
  void checkShapes(ExpressionEvaluator& ee) const;
  std::vector<const Expr*> checked_;
  // Whether the kernel may refuse its data (a sin or cos argument of 2^30 or
  // more, vector_trig.h), which the caller then runs through ATen.
  bool may_refuse_;
};

// "compiled kernel for x86-64-linux-avx2...", "GEMM with post-ops: linear +
// gelu (...)" or "ATen: <reason>": how a segment runs, for printouts.
std::string describeSegmentExecution(const Fusion& fusion);

}  // namespace hostir
