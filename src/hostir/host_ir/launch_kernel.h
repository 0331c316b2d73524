#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

// Runs the segment a HostIrContainer registered under `kernel_id`
// (HostIrContainer::addKernel) on the current stream, binding the segment's
// inputs and outputs by position. Unlike PostOnStream it refers to the
// segment by id, so the runtime can compile it once and cache it.
// Layout: inputs, outputs as given; attribute 0: kernel id.
class LaunchKernel : public Expr {
  HOSTIR_DECLARE_EXPR(LaunchKernel)
  LaunchKernel(Fusion* container, int64_t kernel_id, std::vector<Val*> inputs,
               std::vector<Val*> outputs);

  int64_t kernelId() const {
    return attribute<int64_t>(0);
  }

  // "LaunchKernel (kernel=0, inputs=(T0_g_float[...]), outputs=(T1_g_float[...]))".
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
