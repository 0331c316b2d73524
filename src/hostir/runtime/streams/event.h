#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "hostir/runtime/streams/stream_failure.h"
#include "hostir/runtime/streams/stream_timeout.h"

namespace hostir::runtime {

// A point in a stream, as a CUDA event: it completes once the stream has run
// all work enqueued before it. Obtained from Stream::recordEvent(); a copy
// refers to the same point. A default-constructed Event was never recorded
// and counts as complete, like an unrecorded CUDA event.
//
// If the recording stream had failed before reaching the point, the event
// still completes (nothing waiting on it may hang) but carries that failure,
// so a stream waiting on it fails too instead of reading garbage.
class Event {
 public:
  Event() = default;

  bool isComplete() const;

  // The failure of the recording stream, once complete (nullopt if none).
  std::optional<StreamFailure> failure() const;

  // Blocks the calling (host) thread until the event completes. Throws
  // hostir::Error after `timeout`, or if the recording stream failed first.
  void synchronize(std::optional<WaitTimeout> timeout = std::nullopt) const;

  // "event on stream 2 after 'T2 = add(T0, T1)'": what a waiter waits for.
  std::string describe() const;

 private:
  friend class Stream;

  struct State {
    int stream_id = 0;
    std::string after_label;  // last work enqueued before the event, "" if none
    mutable std::mutex mutex;
    std::condition_variable completed_cv;
    bool complete = false;
    std::optional<StreamFailure> failure;
  };

  Event(int stream_id, std::string after_label);

  // Called by the recording stream's worker when it reaches the event.
  void complete(std::optional<StreamFailure> failure) const;

  // Waits until complete or `timeout` elapses; returns whether it completed.
  bool waitFor(WaitTimeout timeout) const;

  std::shared_ptr<State> state_;
};

}  // namespace hostir::runtime
