#include "hostir/runtime/segment_executors.h"

#include "hostir/host_ir/host_ir.h"
#include "hostir/runtime/finite_check.h"

namespace hostir {

SegmentExecutors::SegmentExecutors(const HostIrContainer& program, int64_t device) {
  for (HostUnit* unit : program.hostUnits()) {
    // The engine the compile stage recorded, if it ran (not for a program
    // only lowered): run on it, not decided again.
    units_[unit] = FusionExecutor::borrowing(*unit->fusion(), unit->engine());
    units_[unit]->setDevice(device);
  }
  for (int64_t id = 0; id < program.numKernels(); ++id) {
    kernels_.push_back(FusionExecutor::borrowing(*program.kernel(id), program.kernelEngine(id)));
    kernels_.back()->setDevice(device);
  }
}

FusionExecutor& SegmentExecutors::forUnit(const HostUnit* unit) {
  auto it = units_.find(unit);
  HOSTIR_ASSERT(it != units_.end(), "HostUnit of PostOnStream is not registered");
  return *it->second;
}

FusionExecutor& SegmentExecutors::forKernel(int64_t kernel_id) {
  HOSTIR_CHECK(kernel_id >= 0 && kernel_id < static_cast<int64_t>(kernels_.size()),
               "LaunchKernel refers to kernel ", kernel_id, " but the program has ",
               kernels_.size(), " kernels");
  return *kernels_[static_cast<size_t>(kernel_id)];
}

std::string SegmentExecutors::execution(const HostIrContainer& program) const {
  std::string report;
  for (HostUnit* unit : program.postedHostUnits()) {
    report += "  " + unit->toInlineString() + ": " + units_.at(unit)->execution() + "\n";
  }
  for (size_t id = 0; id < kernels_.size(); ++id) {
    report += "  kernel " + std::to_string(id) + ": " + kernels_[id]->execution() + "\n";
  }
  return report;
}

void runSegmentCheckingFinite(const Expr* expr, const HostUnit* unit, FusionExecutor& executor,
                              const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs) {
  executor.run(inputs, outputs);
  runtime::NamedTensors read;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (isTensor(inputs[i])) {
      read.emplace_back(expr->inputs()[i]->toInlineString(), std::get<at::Tensor>(inputs[i]));
    }
  }
  runtime::NamedTensors written;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = expr->outputs()[i]->toInlineString();
    if (unit != nullptr) {
      name += " (the segment's output " + unit->fusion()->outputs().at(i)->toInlineString() + ")";
    }
    written.emplace_back(std::move(name), outputs[i]);
  }
  // The segment's ops name it: the HostUnit's fusion, or the launch itself
  // for a kernel.
  runtime::checkOutputsFinite(written, read, [expr, unit] {
    return unit != nullptr ? unit->toString(1) : expr->toString(1);
  });
}

}  // namespace hostir
