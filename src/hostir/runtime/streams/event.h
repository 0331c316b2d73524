#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hostir/runtime/streams/stream_failure.h"
#include "hostir/runtime/streams/stream_timeout.h"

namespace hostir::runtime {

// A stream parked on an event (stream_queue.cpp): told when it completes.
struct EventWaiter;

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
    // The last work enqueued before the event, null if none; shared with
    // the stream's item, so recording an event copies no text.
    std::shared_ptr<const std::string> after_label;
    mutable std::mutex mutex;
    std::condition_variable completed_cv;
    bool complete = false;
    std::optional<StreamFailure> failure;
    // Streams whose next item is a wait for this event, parked instead of
    // blocking their worker (Stream::settleHead).
    std::vector<std::shared_ptr<EventWaiter>> waiters;
  };

  Event(int stream_id, std::shared_ptr<const std::string> after_label);

  // Called by the recording stream when it reaches the event; returns the
  // streams parked on it, which the caller tells (Stream::completeEvents).
  [[nodiscard]] std::vector<std::shared_ptr<EventWaiter>> complete(
      std::optional<StreamFailure> failure) const;

  // Whether the event completed; if not, `waiter` is told when it does.
  bool completedOrParked(const std::shared_ptr<EventWaiter>& waiter) const;

  // Whether the event completed and its stream had not failed.
  bool completedCleanly() const;

  // Waits until complete or `deadline`; returns whether it completed.
  bool waitUntil(std::chrono::steady_clock::time_point deadline) const;
  bool waitFor(WaitTimeout timeout) const {
    return waitUntil(std::chrono::steady_clock::now() + timeout);
  }

  std::shared_ptr<State> state_;
};

}  // namespace hostir::runtime
