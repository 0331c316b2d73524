#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hostir/runtime/streams/event.h"
#include "hostir/runtime/streams/stream_failure.h"
#include "hostir/runtime/streams/stream_timeout.h"
#include "hostir/runtime/streams/tracer.h"

namespace hostir::runtime {

// A CPU stream with CUDA-stream semantics: an ordered queue of work drained by
// the stream's own worker thread. Work enqueued on one stream runs in enqueue
// order; work on different streams runs concurrently. Enqueueing never blocks
// the host (the calling thread); only synchronize() and drain() do.
//
// Errors are sticky, as on a CUDA stream: when work throws, the stream keeps
// the first failure (with the work's label), skips every later work item and
// wait, and completes later events with that failure so other streams waiting
// on them fail too instead of hanging. takeFailure() clears it.
class Stream {
 public:
  // Starts the worker thread; a thread the system refuses to start (the
  // process's thread limit, ulimit -u) is a hostir::Error naming the stream.
  explicit Stream(int id, Tracer& tracer = Tracer::global());
  // Discards work not yet started (its events complete as failed, so no
  // waiter hangs), lets the running item finish and joins the worker.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int id() const {
    return id_;
  }

  // Discards the work not yet started (its events complete as failed, so
  // no waiter hangs) and keeps the stream usable: what is enqueued later
  // runs. The running item, if any, finishes; drain() waits for it. Used
  // after a timeout so that a run that raises leaves no queued work behind
  // to write into its buffers later.
  void cancelQueued(const std::string& reason);

  // The first half of destruction, without the join: discards the work not
  // yet started (completing its events as failed) and tells the worker to
  // exit after its running item. Lets a pool stop all its streams before
  // joining any, so that no running wait outlives the event it waits for.
  void stop();

  // `label` names the work in errors and traces, e.g. the expr's printed form;
  // `category` is how a trace classifies it ("compute", "communication").
  void enqueue(std::string label, std::function<void()> work, const char* category = "compute");
  // The same with a label the caller keeps and reuses (no copy per item).
  void enqueue(std::shared_ptr<const std::string> label, std::function<void()> work,
               const char* category = "compute");
  // The same, with `then` run by the worker once the work is over and its
  // trace event ended, also when the work threw or was skipped: releasing
  // what the work held (a compute turn) inside the work would let the thread
  // it wakes take this core before the trace reads the clock, and the trace
  // would show the work lasting as long as the other thread ran.
  void enqueue(std::shared_ptr<const std::string> label, std::function<void()> work,
               const char* category, std::function<void()> then);

  // Work that costs less than handing it to the worker (waking a sleeping
  // thread costs both threads microseconds; a pointwise op on a few
  // thousand elements costs about as much). When the stream is idle (nothing
  // queued or running) and healthy, the calling thread runs it now, as the
  // worker would: a failure becomes the stream's sticky failure and a trace
  // shows it on this stream's lane. Otherwise it is queued as enqueue()
  // queues it, so stream order holds either way.
  void enqueueCheap(std::shared_ptr<const std::string> label, std::function<void()> work,
                    const char* category = "compute");

  // An event that completes when all work enqueued so far has run (at once
  // when nothing is queued or running).
  Event recordEvent();

  // Makes this stream (its worker, not the host) wait for `event` before
  // running later work. Past `timeout` the stream fails with an error naming
  // the event; if the event's stream failed, this stream fails too. A wait
  // for an event that has already completed cleanly is no item at all
  // (unless a trace is recorded: it shows every wait).
  //
  // A wait does not hold the worker: once it is the next item, it is parked
  // on the event and the worker sleeps until the wait's deadline. Whoever
  // completes the event (another stream's worker) takes the wait off this
  // queue, and with it the events recorded behind it, and wakes the worker
  // only when work follows. A stream that only waits (the caller's stream
  // synchronizing with the workers) thus never wakes its worker.
  void waitEvent(const Event& event, std::optional<WaitTimeout> timeout = std::nullopt);

  // `Synchronize other` of the host IR: later work on this stream waits until
  // `other` has run what was enqueued on it so far.
  void waitStream(Stream& other, std::optional<WaitTimeout> timeout = std::nullopt);

  // Blocks the host until every enqueued item has run or been skipped; throws
  // hostir::Error naming the stream and its running work after `timeout`.
  void drain(std::optional<WaitTimeout> timeout = std::nullopt);

  // drain(), then throws the stream's failure if it has one (the failure
  // stays, as CUDA errors do, until takeFailure() or StreamPool::synchronizeAll).
  void synchronize(std::optional<WaitTimeout> timeout = std::nullopt);

  std::optional<StreamFailure> failure() const;
  // Returns the failure and clears it: work enqueued afterwards runs again.
  std::optional<StreamFailure> takeFailure();

  // Runs `setup` on the worker thread before its next work item (e.g. to set
  // that thread's intra-op thread count). Replaces any earlier setup.
  void setWorkerSetup(std::function<void()> setup);

 private:
  using Clock = std::chrono::steady_clock;
  // Start time of an item that began while tracing was off: not recorded.
  static constexpr std::int64_t kNotTraced = -1;

  enum class ItemKind { kWork, kRecordEvent, kWaitEvent };
  struct Item {
    ItemKind kind = ItemKind::kWork;
    // The work's label (kWork). Record and wait items are named after their
    // event, in text built only for a message or a trace (describe()).
    std::shared_ptr<const std::string> label;
    const char* category = "compute";
    std::function<void()> work;
    std::function<void()> then;  // after the work and its trace event
    Event event;
    WaitTimeout timeout{0};
    // A wait, from when it is the next item: when it gives up, whether its
    // event knows to tell this stream, and when it began (for traces).
    std::optional<Clock::time_point> deadline;
    bool parked = false;
    std::int64_t started_us = kNotTraced;

    std::string describe() const;
  };

  // Takes the queue, completing its record-event items as failed; the
  // caller holds no lock.
  void discardQueued(const std::string& reason, bool stop_worker);
  Item workItem(std::shared_ptr<const std::string> label, std::function<void()> work,
                const char* category) const;
  void push(Item item);
  void workerLoop();
  void runWork(const Item& item);
  void runWait(const Item& item);
  void fail(std::string work_label, std::string message);
  void trace(const Item& item, std::int64_t start_us);

  // Under mutex_, while the worker runs nothing: does at the head of the
  // queue what needs no worker. Record-event items are taken off (their
  // events go to `reached`, for the caller to complete once it holds no
  // lock), waits for cleanly completed events are dropped, and a wait for
  // an incomplete event is parked on it. Returns whether the worker must
  // run: work is next, or a wait whose event failed or whose deadline
  // passed, or the stream failed or is stopping.
  bool settleHeadLocked(std::vector<Event>& reached);
  // Under mutex_: whether the sleeping worker must wake before its alarm,
  // for a parked wait's deadline.
  bool alarmTooLateLocked() const;
  void popHeadLocked();
  // Completes `event` and settles the streams parked on it, then the events
  // those streams reach, in turn. Takes no lock of the caller's.
  static void completeEvent(const Event& event, std::optional<StreamFailure> failure);
  // Called by completeEvent: an event this stream was parked on completed.
  void onParkedEventCompleted(std::vector<Event>& reached);

  const int id_;
  Tracer& tracer_;

  mutable std::mutex mutex_;
  std::condition_variable work_available_cv_;
  std::condition_variable drained_cv_;
  std::deque<Item> queue_;
  std::size_t unfinished_ = 0;     // queued plus running
  const Item* running_ = nullptr;  // what the worker runs (timeout messages)
  std::shared_ptr<const std::string> last_enqueued_label_;  // what a new event comes "after"
  std::optional<StreamFailure> failure_;
  std::function<void()> worker_setup_;
  std::uint64_t worker_setup_generation_ = 0;
  bool stopping_ = false;
  bool worker_sleeping_ = false;
  // When the sleeping worker wakes by itself: the deadline of the wait it
  // parked last, so that parking a later wait (a later deadline) needs no
  // wake-up; max() when it sleeps until told.
  Clock::time_point worker_alarm_ = Clock::time_point::max();
  // What events hold to tell this stream they completed; its stream
  // pointer is cleared (under its mutex) when the stream is destroyed.
  std::shared_ptr<EventWaiter> waiter_;

  std::thread worker_;  // declared last: starts once every member exists
};

// Fault injection for tests: after `starts` more worker threads have
// started, starting one fails as a system out of threads would
// (std::system_error, EAGAIN). std::nullopt removes the limit.
void limitWorkerStartsForTesting(std::optional<std::int64_t> starts);

}  // namespace hostir::runtime
