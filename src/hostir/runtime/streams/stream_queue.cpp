#include "hostir/runtime/streams/stream_queue.h"

#include <atomic>
#include <exception>
#include <system_error>
#include <utility>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/allocation_site.h"

namespace hostir::runtime {

// What an event holds of a stream parked on it. The stream clears `stream`
// when it is destroyed; an event completing holds `mutex` while it settles
// the stream, so the stream outlives that.
struct EventWaiter {
  std::mutex mutex;
  Stream* stream = nullptr;
};

namespace {
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

Stream::Stream(int id, Tracer& tracer)
    : id_(id), tracer_(tracer), waiter_(std::make_shared<EventWaiter>()) {
  waiter_->stream = this;
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
  {
    // No event completing from now on settles this stream.
    std::lock_guard<std::mutex> lock(waiter_->mutex);
    waiter_->stream = nullptr;
  }
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
      completeEvent(item.event, makeStreamFailure(id_, item.describe(), reason));
    }
  }
  drained_cv_.notify_all();
}

std::string Stream::Item::describe() const {
  switch (kind) {
    case ItemKind::kWork: return label != nullptr ? *label : std::string();
    case ItemKind::kRecordEvent: return event.describe();
    case ItemKind::kWaitEvent: return "wait for " + event.describe();
  }
  return {};
}

void Stream::push(Item item) {
  bool wake_worker = false;
  std::vector<Event> reached;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (item.kind == ItemKind::kWork) {
      last_enqueued_label_ = item.label;
    }
    queue_.push_back(std::move(item));
    ++unfinished_;
    // A running worker settles the queue itself once its item is done.
    if (running_ == nullptr) {
      wake_worker = settleHeadLocked(reached) || alarmTooLateLocked();
    }
  }
  for (const Event& event : reached) {
    completeEvent(event, std::nullopt);
  }
  if (wake_worker) {
    work_available_cv_.notify_one();
  }
}

void Stream::enqueue(std::string label, std::function<void()> work, const char* category) {
  enqueue(std::make_shared<const std::string>(std::move(label)), std::move(work), category);
}

Stream::Item Stream::workItem(std::shared_ptr<const std::string> label, std::function<void()> work,
                              const char* category) const {
  HOSTIR_CHECK(work != nullptr, "enqueued empty work '", label != nullptr ? *label : "",
               "' on stream ", id_);
  Item item;
  item.kind = ItemKind::kWork;
  item.label = std::move(label);
  item.category = category;
  item.work = std::move(work);
  return item;
}

void Stream::enqueue(std::shared_ptr<const std::string> label, std::function<void()> work,
                     const char* category) {
  push(workItem(std::move(label), std::move(work), category));
}

void Stream::enqueue(std::shared_ptr<const std::string> label, std::function<void()> work,
                     const char* category, std::function<void()> then) {
  Item item = workItem(std::move(label), std::move(work), category);
  item.then = std::move(then);
  push(std::move(item));
}

void Stream::enqueueCheap(std::shared_ptr<const std::string> label, std::function<void()> work,
                          const char* category) {
  Item item = workItem(std::move(label), std::move(work), category);
  bool run_here = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Behind other items, or skipped by a failed stream: the worker's.
    run_here = unfinished_ == 0 && !stopping_ && !failure_;
    if (run_here) {
      last_enqueued_label_ = item.label;
      ++unfinished_;
      running_ = &item;  // what a drain timeout names; keeps settles to us
    }
  }
  if (!run_here) {
    push(std::move(item));
    return;
  }
  runWork(item);
  bool wake_worker = false;
  std::vector<Event> reached;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = nullptr;
    if (--unfinished_ == 0) {
      drained_cv_.notify_all();
    }
    // Items another thread queued meanwhile were left for whoever runs.
    if (!queue_.empty()) {
      wake_worker = settleHeadLocked(reached) || alarmTooLateLocked();
    }
  }
  for (const Event& event : reached) {
    completeEvent(event, std::nullopt);
  }
  if (wake_worker) {
    work_available_cv_.notify_one();
  }
}

Event Stream::recordEvent() {
  Item item;
  item.kind = ItemKind::kRecordEvent;
  std::optional<StreamFailure> failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    item.event = Event(id_, last_enqueued_label_);
    if (unfinished_ != 0) {
      Event event = item.event;
      queue_.push_back(std::move(item));
      ++unfinished_;
      // Behind queued or running items: it completes when the worker or a
      // settle reaches it, never by itself, so nobody needs waking now.
      return event;
    }
    failed = failure_;
  }
  // Nothing queued or running: everything enqueued so far has run.
  completeEvent(item.event, std::move(failed));
  return item.event;
}

void Stream::waitEvent(const Event& event, std::optional<WaitTimeout> timeout) {
  // Nothing to wait for, nothing to fail: no item, unless a trace is being
  // recorded, which shows every wait.
  if (!tracer_.isEnabled() && event.completedCleanly()) {
    return;
  }
  Item item;
  item.kind = ItemKind::kWaitEvent;
  item.category = "wait";
  item.event = event;
  item.timeout = timeout.value_or(defaultWaitTimeout());
  push(std::move(item));
}

void Stream::waitStream(Stream& other, std::optional<WaitTimeout> timeout) {
  waitEvent(other.recordEvent(), timeout);
}

bool Stream::settleHeadLocked(std::vector<Event>& reached) {
  while (!queue_.empty()) {
    if (failure_ || stopping_) {
      return true;  // the worker skips or discards what is queued
    }
    Item& head = queue_.front();
    if (head.kind == ItemKind::kWork) {
      return true;
    }
    if (head.kind == ItemKind::kRecordEvent) {
      reached.push_back(std::move(head.event));
      popHeadLocked();
      continue;
    }
    if (!head.deadline) {  // the wait begins now
      head.deadline = Clock::now() + head.timeout;
      head.started_us = tracer_.isEnabled() ? tracer_.nowUs() : kNotTraced;
    }
    const bool complete =
        head.parked ? head.event.isComplete() : head.event.completedOrParked(waiter_);
    head.parked = true;
    if (!complete) {
      return Clock::now() >= *head.deadline;  // past it, the worker fails the stream
    }
    if (head.event.failure()) {
      return true;  // the worker fails the stream
    }
    trace(head, head.started_us);
    popHeadLocked();
  }
  return false;
}

bool Stream::alarmTooLateLocked() const {
  return worker_sleeping_ && !queue_.empty() && queue_.front().deadline &&
         *queue_.front().deadline < worker_alarm_;
}

void Stream::popHeadLocked() {
  queue_.pop_front();
  if (--unfinished_ == 0) {
    drained_cv_.notify_all();
  }
}

void Stream::completeEvent(const Event& event, std::optional<StreamFailure> failure) {
  std::vector<Event> to_complete{event};
  std::optional<StreamFailure> first_failure = std::move(failure);
  while (!to_complete.empty()) {
    Event next = std::move(to_complete.back());
    to_complete.pop_back();
    // Only `event` may carry a failure: the settles below run on streams
    // that have not failed.
    for (const std::shared_ptr<EventWaiter>& waiter : next.complete(std::move(first_failure))) {
      std::lock_guard<std::mutex> alive(waiter->mutex);
      if (waiter->stream != nullptr) {
        waiter->stream->onParkedEventCompleted(to_complete);
      }
    }
    first_failure.reset();
  }
}

void Stream::onParkedEventCompleted(std::vector<Event>& reached) {
  bool wake_worker = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A running worker settles the queue itself once its item is done.
    if (running_ == nullptr) {
      wake_worker = settleHeadLocked(reached) || alarmTooLateLocked();
    }
  }
  if (wake_worker) {
    work_available_cv_.notify_one();
  }
}

void Stream::drain(std::optional<WaitTimeout> timeout) {
  const WaitTimeout limit = timeout.value_or(defaultWaitTimeout());
  std::unique_lock<std::mutex> lock(mutex_);
  const bool drained = drained_cv_.wait_for(lock, limit, [this] { return unfinished_ == 0; });
  if (drained) {
    return;
  }
  // A parked wait at the head is what the stream is doing.
  const Item* running = running_ != nullptr ? running_ : &queue_.front();
  const std::size_t behind = queue_.size() - (running_ != nullptr ? 0 : 1);
  HOSTIR_THROW("timed out after ", describeTimeout(limit), " on the host waiting for stream ", id_,
               " to finish its work; it is running '", running->describe(), "' with ", behind,
               " more item(s) queued");
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
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    std::vector<Event> reached;
    const bool must_run = settleHeadLocked(reached);
    if (!reached.empty()) {
      lock.unlock();
      for (const Event& event : reached) {
        completeEvent(event, std::nullopt);
      }
      lock.lock();
      continue;  // completing them may have settled this stream further
    }
    if (stopping_) {
      return;  // the destructor settles what is still queued
    }
    if (!must_run) {
      const Clock::time_point now = Clock::now();
      if (!queue_.empty() && queue_.front().deadline) {
        worker_alarm_ = *queue_.front().deadline;
      } else if (worker_alarm_ <= now) {
        worker_alarm_ = Clock::time_point::max();
      }
      worker_sleeping_ = true;
      if (worker_alarm_ == Clock::time_point::max()) {
        work_available_cv_.wait(lock);
      } else {
        work_available_cv_.wait_until(lock, worker_alarm_);
      }
      worker_sleeping_ = false;
      continue;
    }

    Item item = std::move(queue_.front());
    queue_.pop_front();
    running_ = &item;
    std::function<void()> setup;
    if (applied_setup_generation != worker_setup_generation_) {
      applied_setup_generation = worker_setup_generation_;
      setup = worker_setup_;
    }
    const std::optional<StreamFailure> failed_before = failure_;
    lock.unlock();

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
      case ItemKind::kRecordEvent: completeEvent(item.event, failure()); break;
    }

    lock.lock();
    running_ = nullptr;
    if (--unfinished_ == 0) {
      drained_cv_.notify_all();
    }
  }
}

void Stream::runWork(const Item& item) {
  if (!failure()) {  // sticky error: later work on a failed stream is skipped
    const std::int64_t start_us = tracer_.isEnabled() ? tracer_.nowUs() : kNotTraced;
    try {
      // Tracing tensor memory, what the work allocates is named after it.
      const AllocationSite site(recordingAllocationSites() ? item.label.get() : nullptr,
                                AllocationSite::Kind::kWorkItem);
      item.work();
    } catch (const std::exception& error) {
      fail(item.describe(), error.what());
    } catch (...) {
      fail(item.describe(), "an exception not derived from std::exception");
    }
    trace(item, start_us);
  }
  if (item.then) {
    try {
      item.then();
    } catch (const std::exception& error) {
      fail(item.describe(), error.what());
    } catch (...) {
      fail(item.describe(), "an exception not derived from std::exception");
    }
  }
}

void Stream::runWait(const Item& item) {
  if (failure()) {
    return;
  }
  // Normally a parked wait whose event failed or whose deadline passed.
  const std::int64_t start_us =
      item.started_us != kNotTraced || !tracer_.isEnabled() ? item.started_us : tracer_.nowUs();
  if (!item.event.waitUntil(item.deadline.value_or(Clock::now() + item.timeout))) {
    fail(item.describe(), "timed out after " + describeTimeout(item.timeout) + " waiting for the " +
                              item.event.describe());
  } else if (auto awaited_failure = item.event.failure()) {
    fail(item.describe(), "the awaited stream failed first: " + awaited_failure->describe());
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
    tracer_.record(TraceEvent{item.describe(), id_, start_us, tracer_.nowUs(), item.category});
  }
}

}  // namespace hostir::runtime
