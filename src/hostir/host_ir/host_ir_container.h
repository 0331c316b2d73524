#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hostir/host_ir/scope.h"
#include "hostir/host_ir/segment_engine.h"
#include "hostir/ir/fusion.h"
#include "hostir/multidevice/target.h"

namespace hostir {

class HostUnit;

// A host program: a Fusion whose statements are driven by an explicit,
// ordered top-level Scope rather than by dataflow. Program order is the
// scope order (loops nest their bodies); passes edit it through Scope.
//
// It also registers the segments that LaunchKernel runs by id.
class HostIrContainer : public Fusion {
 public:
  HostIrContainer() = default;

  Scope& topLevel() {
    return top_level_;
  }
  const Scope& topLevel() const {
    return top_level_;
  }
  // The top-level exprs in program order (loop bodies are not flattened).
  std::vector<Expr*> exprs() const override {
    return top_level_.toVector();
  }
  void pushBackTopLevelExpr(Expr* expr) {
    top_level_.push_back(expr);
  }

  // Registers a segment for LaunchKernel; returns its kernel id (0, 1, ...).
  int64_t addKernel(std::unique_ptr<Fusion> kernel);
  int64_t numKernels() const {
    return static_cast<int64_t>(kernels_.size());
  }
  // An error naming the id when none is registered under it.
  Fusion* kernel(int64_t kernel_id) const;
  // The engine that runs a kernel, once the compile stage decided it
  // (runtime/segment_engines.h), as a HostUnit's; none in a program only
  // lowered or built by hand.
  const std::optional<SegmentEngine>& kernelEngine(int64_t kernel_id) const;
  void setKernelEngine(int64_t kernel_id, SegmentEngine engine);

  // Every device's target (docs/targets.md), printed in the header; empty
  // when unknown (one device, or all alike and not exchanged).
  void setDeviceTargets(DeviceTargets targets) {
    device_targets_ = std::move(targets);
  }
  const DeviceTargets& deviceTargets() const {
    return device_targets_;
  }
  // Every HostUnit created in this container, in creation order.
  std::vector<HostUnit*> hostUnits() const;
  // The HostUnits the program runs (posted, in creation order): a pass that
  // absorbed a segment into another (gemm_epilogues) or a loop leaves its
  // HostUnit created but unposted.
  std::vector<HostUnit*> postedHostUnits() const;

  // A deep copy: statements, inputs, outputs, program (loop bodies and
  // HostUnit fusions included) and kernels. Prints identically.
  std::unique_ptr<HostIrContainer> clone() const;

  // "%HostIrContainer { (inputs) -> (outputs) :", the program indented two
  // spaces per level, "} // %HostIrContainer", then each HostUnit's fusion
  // and each kernel.
  std::string toString() const override;
  // Prints toString() when HOSTIR_DUMP lists host_ir.
  void printIfHostIrDumpEnabled() const {
    printIfDumpEnabled("host_ir");
  }

 private:
  Scope top_level_;
  std::vector<std::unique_ptr<Fusion>> kernels_;
  std::vector<std::optional<SegmentEngine>> kernel_engines_;  // one per kernel
  DeviceTargets device_targets_;
};

}  // namespace hostir
