#pragma once

#include <ATen/ATen.h>
#include <mpi.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hostir {

// Throws std::runtime_error "<call> failed: <MPI's message>" unless `code`
// is MPI_SUCCESS (communicators use MPI_ERRORS_RETURN).
void checkMpi(int code, const char* call);

// The c10d work of one posted MPI operation: its requests, the tensors MPI
// reads and writes (kept alive until the requests complete, also when
// nobody waits) and a local step once they complete (copying a staged
// buffer out). Completed by MpiProgress; wait() is c10d's: bounded by its
// timeout ("Operation timed out!"), rethrowing an MPI error.
class MpiWork : public c10d::Work {
 public:
  MpiWork(c10d::OpType type, std::vector<MPI_Request> requests, std::vector<at::Tensor> buffers,
          std::function<void()> on_completion = {});

  // Tests the requests once; when they are done, runs the local step and
  // completes the work and its future. Returns whether the work is done.
  // Called by MpiProgress's thread only.
  bool progress();

  // Completes when the transfer does (trace lanes use it).
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  void complete(std::exception_ptr error);

  std::vector<MPI_Request> requests_;
  std::vector<at::Tensor> buffers_;
  std::function<void()> on_completion_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// MPI moves data only while some thread calls into it (Open MPI has no
// progress thread of its own), so one thread per process tests every
// unfinished work: a transfer goes on while the streams compute, and a
// work completes without anyone waiting on it. Between tests the thread
// sleeps pollInterval() (HOSTIR_MPI_POLL_US); it blocks while nothing is in
// flight.
class MpiProgress {
 public:
  static constexpr int64_t kDefaultPollMicroseconds = 20;
  // HOSTIR_MPI_POLL_US (0 to 10000), or kDefaultPollMicroseconds; 0 yields
  // the core between tests instead of sleeping. Throws for another value.
  static std::chrono::microseconds pollInterval();

  explicit MpiProgress(std::chrono::microseconds poll_interval);
  // Stops the thread; unfinished works stay unfinished.
  ~MpiProgress();
  MpiProgress(const MpiProgress&) = delete;
  MpiProgress& operator=(const MpiProgress&) = delete;

  void add(c10::intrusive_ptr<MpiWork> work);
  // Works posted and not completed: MPI still owns their buffers.
  int64_t numUnfinished() const;

 private:
  void run();

  const std::chrono::microseconds poll_interval_;
  mutable std::mutex mutex_;
  std::condition_variable added_;
  std::vector<c10::intrusive_ptr<MpiWork>> incoming_;
  int64_t unfinished_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace hostir
