#include "hostir/runtime/comm/mpi_work.h"

#include <cstdlib>
#include <stdexcept>

#include "hostir/ir/error.h"

namespace hostir {

void checkMpi(int code, const char* call) {
  if (code == MPI_SUCCESS) {
    return;
  }
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(message, length));
}

MpiWork::MpiWork(c10d::OpType type, std::vector<MPI_Request> requests,
                 std::vector<at::Tensor> buffers, std::function<void()> on_completion)
    : c10d::Work(-1, type),
      requests_(std::move(requests)),
      buffers_(std::move(buffers)),
      on_completion_(std::move(on_completion)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::NoneType::get())) {}

bool MpiWork::progress() {
  int done = 0;
  try {
    checkMpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done,
                         MPI_STATUSES_IGNORE),
             "MPI_Testall");
    if (!done) {
      return false;
    }
    if (on_completion_) {
      on_completion_();
    }
  } catch (const std::exception&) {
    complete(std::current_exception());
    return true;
  }
  complete(nullptr);
  return true;
}

void MpiWork::complete(std::exception_ptr error) {
  buffers_.clear();
  on_completion_ = nullptr;
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue());
  }
}

c10::intrusive_ptr<c10::ivalue::Future> MpiWork::getFuture() {
  return future_;
}

std::chrono::microseconds MpiProgress::pollInterval() {
  const char* text = std::getenv("HOSTIR_MPI_POLL_US");
  if (text == nullptr || *text == '\0') {
    return std::chrono::microseconds(kDefaultPollMicroseconds);
  }
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  HOSTIR_CHECK(end != text && *end == '\0' && value >= 0 && value <= 10000, "HOSTIR_MPI_POLL_US='",
               text,
               "' is not a number of microseconds from 0 to 10000 (the pause between two "
               "tests of the MPI requests in flight; 0 yields the core instead)");
  return std::chrono::microseconds(value);
}

MpiProgress::MpiProgress(std::chrono::microseconds poll_interval)
    : poll_interval_(poll_interval), thread_([this] { run(); }) {}

MpiProgress::~MpiProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  added_.notify_all();
  thread_.join();
}

void MpiProgress::add(c10::intrusive_ptr<MpiWork> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(std::move(work));
    ++unfinished_;
  }
  added_.notify_one();
}

int64_t MpiProgress::numUnfinished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return unfinished_;
}

void MpiProgress::run() {
  std::vector<c10::intrusive_ptr<MpiWork>> active;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      added_.wait(lock, [&] { return stop_ || !active.empty() || !incoming_.empty(); });
      if (stop_) {
        return;
      }
      for (auto& work : incoming_) {
        active.push_back(std::move(work));
      }
      incoming_.clear();
    }
    // Tested in posting order; a finished work leaves the list.
    int64_t finished = 0;
    for (auto it = active.begin(); it != active.end();) {
      if ((*it)->progress()) {
        it = active.erase(it);
        ++finished;
      } else {
        ++it;
      }
    }
    if (finished > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      unfinished_ -= finished;
    }
    if (!active.empty()) {
      if (poll_interval_.count() == 0) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(poll_interval_);
      }
    }
  }
}

}  // namespace hostir
