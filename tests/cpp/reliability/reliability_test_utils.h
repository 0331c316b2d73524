#pragma once

// Helpers shared by the reliability tests (issue 11): a scoped change of the
// stream wait timeout, and running a body on several threads at once.

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "hostir/runtime/streams/stream_timeout.h"
#include "lowering/lowering_test_utils.h"

namespace hostir::test {

// Sets the default stream wait timeout for the scope of the object.
class ScopedWaitTimeout {
 public:
  explicit ScopedWaitTimeout(runtime::WaitTimeout timeout)
      : previous_(runtime::defaultWaitTimeout()) {
    runtime::setDefaultWaitTimeout(timeout);
  }
  ~ScopedWaitTimeout() {
    runtime::setDefaultWaitTimeout(previous_);
  }
  ScopedWaitTimeout(const ScopedWaitTimeout&) = delete;
  ScopedWaitTimeout& operator=(const ScopedWaitTimeout&) = delete;

 private:
  runtime::WaitTimeout previous_;
};

// Runs body(thread index) on `threads` threads started together; joins them.
inline void onThreads(int threads, const std::function<void(int)>& body) {
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&body, t] { body(t); });
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
}

// Work long enough to still be running when a run gives up waiting for
// it: 12 transcendental steps per element. By default every step's rows are
// split in 2 over a Stream axis, so the whole chain runs in one stream loop
// on worker streams (one kernel per chunk) that the host waits for. Work on
// the caller's stream alone runs inline on the calling thread, with no wait
// to time out; a split on the last step only would leave the first eleven
// there.
inline void buildLongSegmentFusion(Fusion& fusion, bool on_worker_streams = true) {
  FusionGuard guard(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* value = x;
  for (int i = 0; i < 12; ++i) {
    value = i % 2 == 0 ? exp(neg(value)) : sigmoid(value);
    if (on_worker_streams) {
      value->split(0, 2, /*inner_split=*/false);
      value->axis(0)->parallelize(ParallelType::Stream);
    }
  }
  fusion.addOutput(value);
}

}  // namespace hostir::test
