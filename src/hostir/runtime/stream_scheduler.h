#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "hostir/ir/error.h"
#include "hostir/runtime/op_error.h"
#include "hostir/runtime/streams/compute_gate.h"
#include "hostir/runtime/streams/stream_failure.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir {

class ExpressionEvaluator;
class Stream;
class Val;

// What a run's streams are given when it starts.
struct StreamSchedule {
  int number_of_streams = runtime::kDefaultNumberOfStreams;
  // The program posts collectives: its compute runs in program order, one op
  // at a time (thread_budget.h), and its stream-side waits may wait for a
  // collective, so they also get the communication timeout.
  bool communicates = false;
  int ranks_sharing_cores = 1;  // LOCAL_WORLD_SIZE when it communicates
  std::chrono::milliseconds communication_timeout{0};
  // HostIrRunOptions::skip_compute: nothing is enqueued.
  bool skip_compute = false;
};

// The stream side of a host program's run (docs/streams.md): which stream
// the host enqueues on (the current one; IR streams resolved to the pool's),
// the waits between streams, the thread budget and the compute turns of a
// program that communicates (ComputeGate), the one timeout of every
// stream-side wait of the run, the inline mode on the caller's stream, and
// the end of the run (every stream drained). The pool is its owner's (the
// evaluator's last member, destroyed first): the scheduler's gate outlives
// the work queued on it.
class StreamScheduler {
 public:
  // Only keeps `pool`: the owner may pass a member not constructed yet.
  explicit StreamScheduler(runtime::StreamPool& pool) : pool_(pool) {}

  // Ahead of the first run (the evaluator's constructor, in the compile
  // stage): puts the thread budget of a run with `schedule` in effect and
  // starts the caller's stream's worker, so that what a first run would
  // start once (ATen's process-wide count and the pools libtorch makes for
  // it, the caller's and that worker's OpenMP teams) is started here.
  void prepare(const StreamSchedule& schedule);
  // Sets the run's number of streams (checked), the thread budget, the gate
  // and the timeout; the run starts on the caller's stream.
  void startRun(const StreamSchedule& schedule);
  // Blocks until every stream has drained; throws the first failure.
  void finishRun();
  // After a host-side failure: queued work may still use the run's buffers,
  // so it finishes first; its own errors give way to the host's.
  void drainAfterFailure();

  runtime::Stream& current() {
    return *current_;
  }
  runtime::WaitTimeout waitTimeout() const {
    return wait_timeout_;
  }

  // GetCurrentStream: `ir_stream` names the current stream from now on.
  void bindCurrent(const Val* ir_stream) {
    bound_streams_[ir_stream] = current_;
  }
  // SetCurrentStream. `ee` evaluates an indexed stream's index.
  void switchTo(const Stream* ir_stream, ExpressionEvaluator& ee);
  // Synchronize: the current stream waits for what `ir_stream` has queued.
  void synchronizeWith(const Stream* ir_stream, ExpressionEvaluator& ee);
  // The current stream, for a collective to order itself after (which ends
  // the inline mode: from then on, streams are ordered against each other).
  runtime::Stream& leaveInline() {
    inline_on_caller_ = false;
    return *current_;
  }

  // Enqueues compute on the current stream, admitted in program order when
  // the thread budget says so. A template, so that the closure is wrapped
  // into one std::function (one allocation per op), not two. `cheap` work
  // runs on the host thread when its stream is idle and compute is not
  // ordered (Stream::enqueueCheap).
  template <typename Work>
  void enqueueCompute(const std::shared_ptr<const std::string>& label, Work work,
                      bool cheap = false);

 private:
  runtime::Stream& resolve(const Stream* ir_stream, ExpressionEvaluator& ee);
  // Runs `work` on the calling thread, failing as the caller's stream would.
  template <typename Work>
  void runInline(const std::string& label, const Work& work);

  runtime::StreamPool& pool_;
  std::unique_ptr<runtime::ComputeGate> gate_;  // null: compute is not ordered
  runtime::Stream* current_ = nullptr;
  // True until the run first leaves the caller's stream (switches to another
  // stream, makes a stream wait, or communicates): until then the caller's
  // stream has nothing queued and no other stream runs, so its compute runs
  // inline on the calling thread, in the same order, without a hand-off to
  // the stream's worker and back (docs/streams.md, "Inline on the caller").
  bool inline_on_caller_ = false;
  bool skip_compute_ = false;
  std::unordered_map<const Val*, runtime::Stream*> bound_streams_;
  // The timeout of this run's stream-side waits (runtime::defaultWaitTimeout,
  // plus the communication timeout when the program communicates: a stream
  // waiting for a collective must not give up before the collective does).
  runtime::WaitTimeout wait_timeout_{0};
};

template <typename Work>
void StreamScheduler::enqueueCompute(const std::shared_ptr<const std::string>& label, Work work,
                                     bool cheap) {
  if (skip_compute_) {
    return;  // the buffers exist; nothing is computed into them
  }
  // An ATen error on a stream without its backtrace: the cause, then the
  // stream and the op (StreamFailure::describe).
  auto named = [work = std::move(work)] {
    try {
      work();
    } catch (const Error& error) {
      if (std::string(error.what()).rfind("ATen failed to evaluate\n", 0) != 0) {
        throw;
      }
      throw Error(causeOf(error));
    } catch (const std::exception& error) {
      throw Error(causeOf(error));
    }
  };
  if (inline_on_caller_ && current_ == &pool_.callerStream()) {
    runInline(*label, named);
    return;
  }
  if (gate_ == nullptr) {
    if (cheap) {
      current_->enqueueCheap(label, std::move(named));
    } else {
      current_->enqueue(label, std::move(named));
    }
    return;
  }
  // Two items, so a trace shows the wait for the turn apart from the work.
  auto ticket = gate_->take(*label);
  current_->enqueue(
      "wait for the compute turn of " + *label,
      [ticket, timeout = wait_timeout_] { ticket->enter(timeout); }, "wait");
  current_->enqueue(label, std::move(named), "compute", [ticket] { ticket->leave(); });
}

template <typename Work>
void StreamScheduler::runInline(const std::string& label, const Work& work) {
  runtime::Tracer& tracer = pool_.tracer();
  const int64_t start_us = tracer.isEnabled() ? tracer.nowUs() : 0;
  try {
    work();
  } catch (const std::exception& error) {
    // The message the caller's stream would have given.
    HOSTIR_THROW(runtime::makeStreamFailure(current_->id(), label, error.what()).describe());
  }
  if (tracer.isEnabled()) {
    tracer.record(runtime::TraceEvent{label, current_->id(), start_us, tracer.nowUs()});
  }
}

}  // namespace hostir
