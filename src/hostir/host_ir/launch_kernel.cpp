#include "hostir/host_ir/launch_kernel.h"

#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/printing.h"

namespace hostir {

LaunchKernel::LaunchKernel(Fusion* container, int64_t kernel_id, std::vector<Val*> inputs,
                           std::vector<Val*> outputs)
    : LaunchKernel(container, std::move(inputs), std::move(outputs),
                   std::vector<Attribute>{kernel_id}) {}

void LaunchKernel::validateStructure() const {
  HOSTIR_ASSERT(attributes_.size() == 1 && attribute_vals_.empty(),
                "LaunchKernel carries exactly its kernel id");
  int64_t kernel_id = std::get<int64_t>(attributes_[0]);
  HOSTIR_CHECK(kernel_id >= 0, "LaunchKernel with inputs (", valListString(inputs_),
               "): kernel id ", kernel_id,
               " is negative; use the id HostIrContainer::addKernel returned");
}

std::string LaunchKernel::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << "LaunchKernel (kernel=" << kernelId() << ", inputs=("
     << valListString(inputs_) << "), outputs=(" << valListString(outputs_) << "))\n";
  return ss.str();
}

HOSTIR_DEFINE_HOST_EXPR(LaunchKernel)

}  // namespace hostir
