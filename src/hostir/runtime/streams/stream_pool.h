#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/number_of_streams.h"
#include "hostir/runtime/streams/stream_queue.h"
#include "hostir/runtime/streams/stream_timeout.h"
#include "hostir/runtime/streams/tracer.h"

namespace hostir::runtime {

// Hands out streams by integer index, as the host IR names them
// (`Stream ( StreamIdx % numberOfStreams )`): the same index always gives the
// same Stream, distinct indices give distinct Streams, and index 0 is the
// caller's stream (asynchronous like the others, with its own worker).
// Streams are created on first use and kept, so later runs reuse their
// workers. numberOfStreams is how many streams a program is expected to use
// at once (the evaluator binds it to the `numberOfStreams` scalar, per run);
// it also sizes the thread budget (thread_budget.h).
class StreamPool {
 public:
  // A larger index is almost surely a loop index used without `% numberOfStreams`;
  // refusing it beats silently starting thousands of threads.
  static constexpr std::int64_t kMaxStreamIndex = 1023;

  explicit StreamPool(int number_of_streams = kDefaultNumberOfStreams,
                      Tracer& tracer = Tracer::global());
  // Stops every stream (queued work discarded, its events failed), then
  // joins their workers: running work finishes first.
  ~StreamPool();
  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;

  int numberOfStreams() const {
    return number_of_streams_.load(std::memory_order_relaxed);
  }
  // A run's number (the evaluator sets it when a run starts): streams are
  // made on first use and kept, so runs with different numbers share them.
  // Throws hostir::Error below 1 (checkedNumberOfStreams).
  void setNumberOfStreams(int number_of_streams);
  Tracer& tracer() {
    return tracer_;
  }

  Stream& callerStream() {
    return stream(0);
  }
  Stream& stream(std::int64_t index);

  // Communication channel `channel`'s stream (channel >= 0): the one stream
  // that posts a team's collectives, in the order the host enqueues them
  // (streams.md, "Communication channels"). Its id is kFirstChannelId +
  // channel, apart from the indexed streams; synchronizeAll covers it.
  static constexpr std::int64_t kFirstChannelId = kMaxStreamIndex + 1;
  Stream& channelStream(std::int64_t channel, const std::string& trace_name = "");

  // How many streams exist so far (created lazily).
  std::size_t createdStreamCount() const;

  // Ends a run: blocks the host until every stream has drained, then if any
  // work failed, clears every stream's failure (so the pool is usable again)
  // and throws hostir::Error describing the first failure, i.e. naming the
  // work that failed. `timeout` bounds the wait for the streams to drain.
  // Past it, the work not yet started on every stream is cancelled and the
  // running items get up to max(timeout, kMinTimeoutGrace) more to finish
  // before the timeout is thrown, so that no worker touches the run's
  // buffers after the caller has the error. An item still running after
  // that is named in the error (it may still write; later work on its
  // stream, and the pool's destruction, wait for it). `grace` replaces that
  // bound (tests).
  static constexpr WaitTimeout kMinTimeoutGrace{10'000};
  void synchronizeAll(std::optional<WaitTimeout> timeout = std::nullopt,
                      std::optional<WaitTimeout> grace = std::nullopt);

  // Installs `setup` on every stream, present and future (Stream::setWorkerSetup).
  void setWorkerSetup(std::function<void()> setup);

 private:
  void settleAfterTimeout(const std::vector<Stream*>& streams, WaitTimeout grace, Error& timed_out);

  std::atomic<int> number_of_streams_;
  Tracer& tracer_;
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::unique_ptr<Stream>> streams_;
  std::function<void()> worker_setup_;
};

}  // namespace hostir::runtime
