#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hostir {

class MpiProgress;

// The MPI library for the mpi collective backend (docs/multidevice.md,
// "Collective backends"): initialised once per process with
// MPI_THREAD_MULTIPLE (collectives are posted from stream threads), one
// communicator per process group, one progress thread. MPI has no
// timeouts: every wait here is bounded by polling against a deadline.
class MpiWorld {
 public:
  // Initialises MPI and checks that its world is rank `rank` of
  // `world_size`, as the launch environment (`description`) says. Throws
  // hostir::Error when it is not, when the library lacks
  // MPI_THREAD_MULTIPLE, or when MPI was already finalised in this process
  // (it cannot start twice). This header does not include <mpi.h>: only the
  // mpi_* sources are compiled against MPI.
  MpiWorld(int64_t rank, int64_t world_size, const std::string& description);
  // Finalises MPI, or, when an operation never completed (a peer is gone
  // or stuck, and MPI still owns buffers), ends the job with MPI_Abort.
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  // A process group over the sorted `team` (world ranks) for `stream_key`.
  // Every member must ask for it; throws hostir::Error when one does not
  // within `timeout`.
  c10::intrusive_ptr<c10d::ProcessGroup> createGroup(const std::vector<int64_t>& sorted_team,
                                                     int64_t stream_key,
                                                     std::chrono::milliseconds timeout);

  // Waits up to `grace` for the operations still in flight (the peers may
  // still be finishing theirs); returns whether none is left.
  bool drain(std::chrono::milliseconds grace);

  // Every rank's `mine`, in rank order, within `timeout`.
  std::vector<std::string> allgatherStrings(const std::string& mine,
                                            std::chrono::milliseconds timeout);

 private:
  // Waits for `work` (an MpiWork) within `timeout`; a timeout leaves it to
  // the progress thread (and makes the destructor abort).
  void waitFor(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
               const std::string& what);

  bool owns_library_ = false;  // MPI was initialised here, so it is finalised here
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<MpiProgress> progress_;
  bool gave_up_ = false;  // a bounded wait timed out
};

}  // namespace hostir
