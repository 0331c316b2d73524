#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace hostir::runtime::testing {

// A one-shot flag one thread raises and another waits for, with a timeout so
// a test whose runtime serializes work fails instead of hanging.
class Signal {
 public:
  void raise() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      raised_ = true;
    }
    cv_.notify_all();
  }

  bool waitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return raised_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool raised_ = false;
};

// Long enough for any loaded machine (or TSAN) to schedule a thread; only
// reached when the behaviour under test is broken.
inline constexpr std::chrono::milliseconds kGenerousWait{20000};

}  // namespace hostir::runtime::testing
