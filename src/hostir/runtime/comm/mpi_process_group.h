#pragma once

#include <mpi.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "hostir/runtime/comm/mpi_work.h"

namespace hostir {

// A c10d process group over one MPI communicator, so that everything above
// the communicator (collectives.cpp, the executor, the bindings) has one
// code path for Gloo and MPI. Every operation is MPI's non-blocking one
// (MPI_Iallgather, MPI_Ireduce_scatter_block, ...), posted from the calling
// thread; `progress` completes its work. Like Gloo's, a group's operations
// must be posted in the same order on every member; posting from several
// threads at once is serialised, not reordered.
//
// Supported: broadcast, allreduce, reduce, allgather (and _allgather_base),
// gather, scatter, _reduce_scatter_base (MPI's own; the collectives compose
// reduce-scatter from alltoall_base instead, which measured faster),
// alltoall_base, send, recv, barrier. Reductions need a float, double or
// integer type; the others move bytes of any type. One message is at most
// 2 GiB (MPI counts are ints).
class ProcessGroupMpi : public c10d::ProcessGroup {
 public:
  static constexpr const char* kBackendName = "mpi";

  // Takes `communicator` (freed on destruction); `progress` outlives the
  // group.
  ProcessGroupMpi(MPI_Comm communicator, MpiProgress& progress);
  ~ProcessGroupMpi() override;

  const std::string getBackendName() const override {
    return kBackendName;
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& options) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& options) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& options) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& options) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& options) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& options) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& options) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& options) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_split_sizes,
                                               std::vector<int64_t>& input_split_sizes,
                                               const c10d::AllToAllOptions& options) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int destination,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int source,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& options) override;

 private:
  // Posts one request under the group's lock and hands its work to the
  // progress thread.
  c10::intrusive_ptr<c10d::Work> post(c10d::OpType type,
                                      const std::function<int(MPI_Request*)>& call,
                                      const char* name, std::vector<at::Tensor> buffers,
                                      std::function<void()> on_completion = {});
  // The group's gathered buffer for `blocks` (one per member, each shaped
  // like `like`): their common storage when they are consecutive in memory,
  // else a fresh buffer (*staged = true).
  at::Tensor gatheredBuffer(const std::vector<at::Tensor>& blocks, const at::Tensor& like,
                            bool* staged) const;

  MPI_Comm communicator_;
  MpiProgress& progress_;
  std::mutex post_mutex_;
};

}  // namespace hostir
