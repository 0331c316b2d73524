#pragma once

#include <memory>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/communicator.h"
#include "hostir/runtime/host_ir_evaluator.h"

namespace hostir {

struct MultiDeviceExecutorParams {
  int number_of_streams = runtime::StreamPool::kDefaultNumberOfStreams;
};

// Runs a sharded fusion on this rank: runs the presegmentation passes
// (propagate shardings, insert reshardings, ...) on a copy, lowers it to a
// host program for this rank's device (collectives for every resharding,
// work of other meshes dropped, stream loops), and runs that program on the
// rank's local shards. Inputs are this device's shards (an undefined tensor
// for an input whose mesh does not hold this device); outputs likewise.
// Sharded extents must divide evenly by the number of devices.
class MultiDeviceExecutor {
 public:
  MultiDeviceExecutor(const Fusion& fusion, Communicator& communicator,
                      MultiDeviceExecutorParams params = {});

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return evaluator_->run(inputs, outputs);
  }

  const HostIrContainer& hostProgram() const {
    return evaluator_->container();
  }
  // The fusion after the presegmentation passes (what was lowered).
  const Fusion& preparedFusion() const {
    return *prepared_;
  }

 private:
  std::unique_ptr<Fusion> prepared_;
  std::unique_ptr<HostIrEvaluator> evaluator_;
};

}  // namespace hostir
