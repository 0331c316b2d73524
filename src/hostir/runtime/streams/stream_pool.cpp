#include "hostir/runtime/streams/stream_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hostir/ir/error.h"

namespace hostir::runtime {

StreamPool::StreamPool(int number_of_streams, Tracer& tracer)
    : number_of_streams_(kDefaultNumberOfStreams), tracer_(tracer) {
  setNumberOfStreams(number_of_streams);
}

void StreamPool::setNumberOfStreams(int number_of_streams) {
  number_of_streams_.store(checkedNumberOfStreams(number_of_streams), std::memory_order_relaxed);
}

StreamPool::~StreamPool() {
  std::map<std::int64_t, std::unique_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    streams.swap(streams_);
  }
  for (auto& [index, stream] : streams) {
    stream->stop();
  }
  streams.clear();  // joins each worker
}

Stream& StreamPool::stream(std::int64_t index) {
  HOSTIR_CHECK(index >= 0 && index <= kMaxStreamIndex, "stream index ", index,
               " is out of range [0, ", kMaxStreamIndex,
               "]; index streams with `StreamIdx % numberOfStreams` (numberOfStreams = ",
               numberOfStreams(), ")");
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto found = streams_.find(index); found != streams_.end()) {
    return *found->second;
  }
  // Made before it is inserted: a worker that fails to start leaves no
  // empty slot behind.
  auto stream = std::make_unique<Stream>(static_cast<int>(index), tracer_);
  if (worker_setup_) {
    stream->setWorkerSetup(worker_setup_);
  }
  return *streams_.emplace(index, std::move(stream)).first->second;
}

Stream& StreamPool::channelStream(std::int64_t channel, const std::string& trace_name) {
  HOSTIR_CHECK(channel >= 0 && channel <= kMaxStreamIndex, "communication channel ", channel,
               " is out of range [0, ", kMaxStreamIndex, "]");
  const std::int64_t id = kFirstChannelId + channel;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto found = streams_.find(id); found != streams_.end()) {
    return *found->second;
  }
  // Posting a collective needs no intra-op threads: no worker setup.
  auto stream = std::make_unique<Stream>(static_cast<int>(id), tracer_);
  tracer_.setLaneName(static_cast<int>(id),
                      trace_name.empty() ? "comm channel " + std::to_string(channel) : trace_name);
  return *streams_.emplace(id, std::move(stream)).first->second;
}

std::size_t StreamPool::createdStreamCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return streams_.size();
}

void StreamPool::synchronizeAll(std::optional<WaitTimeout> timeout,
                                std::optional<WaitTimeout> grace) {
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [index, stream] : streams_) {
      streams.push_back(stream.get());
    }
  }

  // Drain everything before judging: a stream stuck past the deadline is
  // often a consequence of another stream's failure, which is the better error.
  const WaitTimeout limit = timeout.value_or(defaultWaitTimeout());
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::optional<Error> timed_out;
  for (Stream* stream : streams) {
    const auto left =
        std::chrono::duration_cast<WaitTimeout>(deadline - std::chrono::steady_clock::now());
    try {
      stream->drain(std::max(left, WaitTimeout(1)));
    } catch (const Error& error) {
      if (!timed_out) {
        timed_out = error;
      }
    }
  }

  // Failures stamped after this are the cancellation's own consequences
  // (waits on cancelled events): not news to the caller.
  std::uint64_t cancelled_after = UINT64_MAX;
  if (timed_out) {
    cancelled_after = makeStreamFailure(-1, "", "").sequence;
    settleAfterTimeout(streams, grace.value_or(std::max(limit, kMinTimeoutGrace)), *timed_out);
  }

  std::vector<StreamFailure> failures;
  for (Stream* stream : streams) {
    if (auto failure = stream->takeFailure(); failure && failure->sequence < cancelled_after) {
      failures.push_back(std::move(*failure));
    }
  }
  if (!failures.empty()) {
    std::sort(failures.begin(), failures.end(), [](const StreamFailure& a, const StreamFailure& b) {
      return a.sequence < b.sequence;
    });
    std::string message = failures.front().describe();
    for (std::size_t i = 1; i < failures.size(); ++i) {
      message += "\n  then (likely as a consequence) " + failures[i].describe();
    }
    if (timed_out) {
      message += std::string("\n  and ") + timed_out->what();
    }
    throw Error(message);
  }
  if (timed_out) {
    throw *timed_out;
  }
}

void StreamPool::settleAfterTimeout(const std::vector<Stream*>& streams, WaitTimeout grace,
                                    Error& timed_out) {
  // The caller gets the error once no worker can touch the run's buffers:
  // queued work never starts, running items get up to the grace bound.
  for (Stream* stream : streams) {
    stream->cancelQueued("cancelled: the run timed out before this stream reached this event");
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (Stream* stream : streams) {
    const auto left =
        std::chrono::duration_cast<WaitTimeout>(deadline - std::chrono::steady_clock::now());
    try {
      stream->drain(std::max(left, WaitTimeout(1)));
    } catch (const Error& still_running) {
      timed_out = Error(std::string(timed_out.what()) + "\n  and after a further " +
                        describeTimeout(grace) +
                        " (work not yet started was cancelled): " + still_running.what() +
                        "; that item may still write into this run's buffers, and the "
                        "stream's next work waits for it");
      return;
    }
  }
}

void StreamPool::setWorkerSetup(std::function<void()> setup) {
  std::lock_guard<std::mutex> lock(mutex_);
  worker_setup_ = std::move(setup);
  for (auto& [index, stream] : streams_) {
    stream->setWorkerSetup(worker_setup_);
  }
}

}  // namespace hostir::runtime
