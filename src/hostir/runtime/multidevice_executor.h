#pragma once

#include "hostir/ir/fusion.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/executor.h"

namespace hostir {

struct MultiDeviceExecutorParams {
  int number_of_streams = runtime::kDefaultNumberOfStreams;
  // ExecutorParams::automatic_stream_splits.
  bool automatic_stream_splits = ExecutorParams::automaticStreamSplitsFromEnvironment();
};

// Runs a sharded fusion on this rank through the one run path
// (executor.h): runs the presegmentation passes (propagate shardings, insert
// reshardings, ...) on a copy, lowers it to a host program for this rank's
// device (collectives for every resharding, work of other meshes dropped,
// stream loops), and runs that program on the rank's local shards. Inputs
// are this device's shards (an undefined tensor for an input whose mesh does
// not hold this device); outputs likewise. Sharded extents must divide evenly
// by the number of devices: uneven torch.chunk layouts are rejected. Every
// run starts with the ranks' agreement check (rank_agreement.h).
class MultiDeviceExecutor : public Executor {
 public:
  MultiDeviceExecutor(const Fusion& fusion, Communicator& communicator,
                      MultiDeviceExecutorParams params = {})
      : Executor(fusion,
                 ExecutorParams{.number_of_streams = params.number_of_streams,
                                .communicator = &communicator,
                                .automatic_stream_splits = params.automatic_stream_splits}) {}
};

}  // namespace hostir
