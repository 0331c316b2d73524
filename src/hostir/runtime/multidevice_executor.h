#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/comm/communicator.h"
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
// Sharded extents must divide evenly by the number of devices: uneven
// torch.chunk layouts are rejected (see below). When some
// rank holds none of an input (it lives on a mesh without that rank), every
// run first allgathers the inputs' symbolic extents among all ranks, so a
// rank that only receives a tensor still knows its shape.
//
// Every run, the ranks allgather a small header (the program's fingerprint,
// numberOfStreams, a hash of this rank's input sizes); the first time the
// ranks run a combination of signatures, they check in detail that they
// agree on what must agree:
// the program (a fingerprint of the prepared fusion, which includes chunk
// counts and meshes), numberOfStreams, and every input axis's size (equal
// shards of a sharded axis, equal sizes of a replicated one). A
// disagreement is a hostir::Error on every rank naming the tensor, the
// ranks and the sizes, before any collective of the program could pair up
// mismatched buffers. Then every sharded axis of every tensor of the
// program (inputs, intermediates, outputs: what a scatter, allgather,
// reduce-scatter or pipelined loop exchanges) must have an extent that its
// device count divides, else every rank raises "uneven shards" naming the
// tensor, the op computing it and the extent. The check costs one small
// allgather among all ranks per run, and a second the first time a
// combination is seen; ranks whose sizes disagree on any call (one
// changed its shapes while another did not) all raise on that call.
//
// run() may be called from several threads; runs are serialized.
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

  // The cross-rank agreement check (see the class comment).
  void checkRanksAgree(const std::vector<at::Tensor>& inputs);

  Communicator& communicator_;
  int number_of_streams_;
  std::unique_ptr<Fusion> prepared_;
  uint64_t fingerprint_ = 0;  // of the prepared fusion's printed form
  std::mutex run_mutex_;
  // The combinations of every rank's signature hash (row r: rank r's) that
  // passed the detailed check; the same set on every rank.
  static constexpr size_t kMaxAgreedSignatures = 1024;
  std::set<std::vector<int64_t>> agreed_signatures_;
  std::unique_ptr<HostIrEvaluator> evaluator_;
  std::vector<InputExtent> input_extents_;  // empty: every rank holds every input
};

}  // namespace hostir
