#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

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

  // An event that completes when all work enqueued so far has run.
  Event recordEvent();

  // Makes this stream (its worker, not the host) wait for `event` before
  // running later work. Past `timeout` the stream fails with an error naming
  // the event; if the event's stream failed, this stream fails too.
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
  enum class ItemKind { kWork, kRecordEvent, kWaitEvent };
  struct Item {
    ItemKind kind = ItemKind::kWork;
    std::string label;
    const char* category = "compute";
    std::function<void()> work;
    Event event;
    WaitTimeout timeout{0};
  };

  // Takes the queue, completing its record-event items as failed; the
  // caller holds no lock.
  void discardQueued(const std::string& reason, bool stop_worker);
  void push(Item item);
  void workerLoop();
  void runWork(const Item& item);
  void runWait(const Item& item);
  void fail(std::string work_label, std::string message);
  void trace(const Item& item, std::int64_t start_us);

  const int id_;
  Tracer& tracer_;

  mutable std::mutex mutex_;
  std::condition_variable work_available_cv_;
  std::condition_variable drained_cv_;
  std::deque<Item> queue_;
  std::size_t unfinished_ = 0;       // queued plus running
  std::string running_label_;        // for timeout messages
  std::string last_enqueued_label_;  // what a new event comes "after"
  std::optional<StreamFailure> failure_;
  std::function<void()> worker_setup_;
  std::uint64_t worker_setup_generation_ = 0;
  bool stopping_ = false;

  std::thread worker_;  // declared last: starts once every member exists
};

// Fault injection for tests: after `starts` more worker threads have
// started, starting one fails as a system out of threads would
// (std::system_error, EAGAIN). std::nullopt removes the limit.
void limitWorkerStartsForTesting(std::optional<std::int64_t> starts);

}  // namespace hostir::runtime
