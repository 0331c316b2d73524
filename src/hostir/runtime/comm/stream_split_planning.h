#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <string>
#include <vector>

#include "hostir/host_ir/passes/stream_split_insertion.h"

namespace hostir {

class Communicator;
class Fusion;

// The runtime's answer to insert_stream_splits (issue 36): with the first
// run's inputs it knows every size, so per candidate it prices the
// allgather (bytes each rank receives) and the GEMMs that read it (FLOPs of
// this rank's shard) with the chunk-count model of chunk_choice.h, on the
// team's link as calibrated once per process and the GEMM rate of the
// candidate's chunk, and takes rank 0's choice (agreeOnChunks), so every
// rank lowers the same program. Every rank must call decide() (it probes
// and broadcasts over the candidate's team).
class CalibratedStreamSplitPlanner : public StreamSplitPlanner {
 public:
  // `inputs` are this rank's shards of the fusion's inputs, in order.
  CalibratedStreamSplitPlanner(Communicator& communicator, const Fusion& fusion,
                               std::vector<at::Tensor> inputs);

  std::vector<StreamSplitDecision> decide(
      const std::vector<StreamSplitCandidate>& candidates) override;

  // What decide() found and chose, one line per candidate
  // (describeStreamSplits), plus what the planning cost.
  const std::string& report() const {
    return report_;
  }
  // The largest chunk count decide() chose (1: none).
  int64_t largestChunks() const {
    return largest_chunks_;
  }

 private:
  Communicator& communicator_;
  const Fusion& fusion_;
  std::vector<at::Tensor> inputs_;
  std::string report_;
  int64_t largest_chunks_ = 1;
};

}  // namespace hostir
