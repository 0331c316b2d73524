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
// Sharded extents must divide evenly by the number of devices. When some
// rank holds none of an input (it lives on a mesh without that rank), every
// run first allgathers the inputs' symbolic extents among all ranks, so a
// rank that only receives a tensor still knows its shape.
class MultiDeviceExecutor {
 public:
  MultiDeviceExecutor(const Fusion& fusion, Communicator& communicator,
                      MultiDeviceExecutorParams params = {});

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {});

  const HostIrContainer& hostProgram() const {
    return evaluator_->container();
  }
  // The fusion after the presegmentation passes (what was lowered).
  const Fusion& preparedFusion() const {
    return *prepared_;
  }

 private:
  // The symbolic extents of the inputs, with where to read each.
  struct InputExtent {
    const Val* symbol;
    size_t input;
    int64_t axis;
  };
  std::vector<std::pair<const Val*, PolymorphicValue>> exchangeInputExtents(
      const std::vector<at::Tensor>& inputs);

  Communicator& communicator_;
  std::unique_ptr<Fusion> prepared_;
  std::unique_ptr<HostIrEvaluator> evaluator_;
  std::vector<InputExtent> input_extents_;  // empty: every rank holds every input
};

}  // namespace hostir
