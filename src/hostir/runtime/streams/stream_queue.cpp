#include "hostir/runtime/streams/stream_queue.h"

#include <atomic>
#include <exception>
#include <system_error>
#include <utility>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {
// Start time of work that began while tracing was off: not recorded.
constexpr std::int64_t kNotTraced = -1;

// Worker starts left before a start fails (limitWorkerStartsForTesting);
// negative: no limit.
std::atomic<std::int64_t> g_worker_starts_left{-1};

void failIfOutOfTestStarts() {
  std::int64_t left = g_worker_starts_left.load();
  while (left >= 0) {
    if (left == 0) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "thread creation refused by limitWorkerStartsForTesting");
    }
    if (g_worker_starts_left.compare_exchange_weak(left, left - 1)) {
      return;
    }
  }
}
}  // namespace

void limitWorkerStartsForTesting(std::optional<std::int64_t> starts) {
  g_worker_starts_left.store(starts.value_or(-1));
}

Stream::Stream(int id, Tracer& tracer) : id_(id), tracer_(tracer) {
  try {
    failIfOutOfTestStarts();
    worker_ = std::thread([this] { workerLoop(); });
  } catch (const std::system_error& error) {
    HOSTIR_THROW("cannot start the worker thread of stream ", id, ": ", error.what(),
                 "; the process may have reached its thread limit (ulimit -u, RLIMIT_NPROC): "
                 "use fewer streams (number_of_streams) or fewer executors, or raise the limit");
  }
}

Stream::~Stream() {
  stop();
  worker_.join();
  drained_cv_.notify_all();
}

void Stream::stop() {
  discardQueued("the stream was destroyed before it reached this event", /*stop_worker=*/true);
}

void Stream::cancelQueued(const std::string& reason) {
  discardQueued(reason, /*stop_worker=*/false);
}

void Stream::discardQueued(const std::string& reason, bool stop_worker) {
  std::deque<Item> abandoned;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = stopping_ || stop_worker;
    abandoned.swap(queue_);
    unfinished_ -= abandoned.size();
    if (unfinished_ == 0) {
      drained_cv_.notify_all();
    }
  }
  work_available_cv_.notify_all();
  for (const Item& item : abandoned) {
    if (item.kind == ItemKind::kRecordEvent) {
      item.event.complete(makeStreamFailure(id_, item.label, reason));
    }
  }
  drained_cv_.notify_all();
}

void Stream::push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (item.kind != ItemKind::kRecordEvent) {
      last_enqueued_label_ = item.label;
    }
    queue_.push_back(std::move(item));
    ++unfinished_;
  }
  work_available_cv_.notify_one();
}

void Stream::enqueue(std::string label, std::function<void()> work, const char* category) {
  HOSTIR_CHECK(work != nullptr, "enqueued empty work '", label, "' on stream ", id_);
  Item item;
  item.kind = ItemKind::kWork;
  item.label = std::move(label);
  item.category = category;
  item.work = std::move(work);
  push(std::move(item));
}

Event Stream::recordEvent() {
  Item item;
  item.kind = ItemKind::kRecordEvent;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    item.event = Event(id_, last_enqueued_label_);
  }
  item.label = item.event.describe();
  Event event = item.event;
  push(std::move(item));
  return event;
}

void Stream::waitEvent(const Event& event, std::optional<WaitTimeout> timeout) {
  Item item;
  item.kind = ItemKind::kWaitEvent;
  item.label = "wait for " + event.describe();
  item.category = "wait";
  item.event = event;
  item.timeout = timeout.value_or(defaultWaitTimeout());
  push(std::move(item));
}

void Stream::waitStream(Stream& other, std::optional<WaitTimeout> timeout) {
  waitEvent(other.recordEvent(), timeout);
}

void Stream::drain(std::optional<WaitTimeout> timeout) {
  const WaitTimeout limit = timeout.value_or(defaultWaitTimeout());
  std::unique_lock<std::mutex> lock(mutex_);
  const bool drained = drained_cv_.wait_for(lock, limit, [this] { return unfinished_ == 0; });
  HOSTIR_CHECK(drained, "timed out after ", describeTimeout(limit),
               " on the host waiting for stream ", id_, " to finish its work; it is running '",
               running_label_, "' with ", queue_.size(), " more item(s) queued");
}

void Stream::synchronize(std::optional<WaitTimeout> timeout) {
  drain(timeout);
  if (auto failed = failure()) {
    HOSTIR_THROW(failed->describe());
  }
}

std::optional<StreamFailure> Stream::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

std::optional<StreamFailure> Stream::takeFailure() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(failure_, std::nullopt);
}

void Stream::setWorkerSetup(std::function<void()> setup) {
  std::lock_guard<std::mutex> lock(mutex_);
  worker_setup_ = std::move(setup);
  ++worker_setup_generation_;
}

void Stream::workerLoop() {
  std::uint64_t applied_setup_generation = 0;
  for (;;) {
    Item item;
    std::function<void()> setup;
    std::optional<StreamFailure> failed_before;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_available_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        return;  // the destructor settles what is still queued
      }
      item = std::move(queue_.front());
      queue_.pop_front();
      running_label_ = item.label;
      if (applied_setup_generation != worker_setup_generation_) {
        applied_setup_generation = worker_setup_generation_;
        setup = worker_setup_;
      }
      failed_before = failure_;
    }

    if (setup && !failed_before) {
      try {
        setup();
      } catch (const std::exception& error) {
        fail("worker setup", error.what());
      }
    }
    switch (item.kind) {
      case ItemKind::kWork: runWork(item); break;
      case ItemKind::kWaitEvent: runWait(item); break;
      case ItemKind::kRecordEvent: item.event.complete(failure()); break;
    }

    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_label_.clear();
      --unfinished_;
      if (unfinished_ == 0) {
        drained_cv_.notify_all();
      }
    }
  }
}

void Stream::runWork(const Item& item) {
  if (failure()) {
    return;  // sticky error: later work on a failed stream is skipped
  }
  const std::int64_t start_us = tracer_.isEnabled() ? tracer_.nowUs() : kNotTraced;
  try {
    item.work();
  } catch (const std::exception& error) {
    fail(item.label, error.what());
  } catch (...) {
    fail(item.label, "an exception not derived from std::exception");
  }
  trace(item, start_us);
}

void Stream::runWait(const Item& item) {
  if (failure()) {
    return;
  }
  const std::int64_t start_us = tracer_.isEnabled() ? tracer_.nowUs() : kNotTraced;
  if (!item.event.waitFor(item.timeout)) {
    fail(item.label, "timed out after " + describeTimeout(item.timeout) + " waiting for the " +
                         item.event.describe());
  } else if (auto awaited_failure = item.event.failure()) {
    fail(item.label, "the awaited stream failed first: " + awaited_failure->describe());
  }
  trace(item, start_us);
}

void Stream::fail(std::string work_label, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_) {
    failure_ = makeStreamFailure(id_, std::move(work_label), std::move(message));
  }
}

void Stream::trace(const Item& item, std::int64_t start_us) {
  if (start_us != kNotTraced && tracer_.isEnabled()) {
    tracer_.record(TraceEvent{item.label, id_, start_us, tracer_.nowUs(), item.category});
  }
}

}  // namespace hostir::runtime
