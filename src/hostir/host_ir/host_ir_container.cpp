#include "hostir/host_ir/host_ir_container.h"

#include <sstream>

#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/printing.h"
#include "hostir/ir/cloner.h"

namespace hostir {

int64_t HostIrContainer::addKernel(std::unique_ptr<Fusion> kernel) {
  HOSTIR_CHECK(kernel != nullptr, "addKernel needs a segment fusion");
  HOSTIR_CHECK(kernel.get() != this, "a HostIrContainer cannot register itself as a kernel");
  kernels_.push_back(std::move(kernel));
  return numKernels() - 1;
}

Fusion* HostIrContainer::kernel(int64_t kernel_id) const {
  HOSTIR_CHECK(kernel_id >= 0 && kernel_id < numKernels(), "no kernel with id ", kernel_id,
               " in this HostIrContainer; ids 0 to ", numKernels() - 1,
               " are registered (HostIrContainer::addKernel)");
  return kernels_[static_cast<size_t>(kernel_id)].get();
}

std::vector<HostUnit*> HostIrContainer::hostUnits() const {
  std::vector<HostUnit*> units;
  for (const auto& statement : statements()) {
    if (auto* unit = dynamic_cast<HostUnit*>(statement.get())) {
      units.push_back(unit);
    }
  }
  return units;
}

std::unique_ptr<HostIrContainer> HostIrContainer::clone() const {
  auto copy = std::make_unique<HostIrContainer>();
  // copyFusion keeps every statement's name, so the copy prints the same;
  // loop bodies come along through ForLoop::cloneExtrasInto.
  IrCloner cloner = copyFusion(*this, *copy);
  for (const Expr* expr : top_level_) {
    copy->top_level_.push_back(cloner.clone(expr));
  }
  for (const auto& kernel : kernels_) {
    auto kernel_copy = std::make_unique<Fusion>();
    copyFusion(*kernel, *kernel_copy);
    copy->kernels_.push_back(std::move(kernel_copy));
  }
  return copy;
}

std::string HostIrContainer::toString() const {
  std::stringstream ss;
  ss << "%HostIrContainer { (" << valListString(inputs_) << ") -> (" << valListString(outputs_)
     << ") :\n"
     << top_level_.toString(1) << "} // %HostIrContainer\n";
  for (const HostUnit* unit : hostUnits()) {
    ss << "\n" << unit->toString();
  }
  for (size_t id = 0; id < kernels_.size(); ++id) {
    ss << "\nKernel " << id << ":\n" << indentLines(kernels_[id]->toString(), 1);
  }
  return ss.str();
}

}  // namespace hostir
