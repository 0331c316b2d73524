#include "hostir/runtime/stream_scheduler.h"

#include "hostir/host_ir/stream.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/thread_budget_aten.h"

namespace hostir {

void StreamScheduler::prepare(const StreamSchedule& schedule) {
  pool_.setNumberOfStreams(schedule.number_of_streams);  // checks it
  runtime::applyThreadBudget(pool_, schedule.communicates, schedule.ranks_sharing_cores);
  pool_.callerStream().enqueue(
      "prepare: the stream's worker and thread budget", [] {}, "prepare");
  pool_.synchronizeAll(runtime::defaultWaitTimeout());
}

void StreamScheduler::startRun(const StreamSchedule& schedule) {
  pool_.setNumberOfStreams(schedule.number_of_streams);  // checks it
  const runtime::ThreadBudget budget =
      runtime::applyThreadBudget(pool_, schedule.communicates, schedule.ranks_sharing_cores);
  if (budget.compute_slots >= budget.concurrent_streams) {
    gate_.reset();
  } else if (gate_ == nullptr || gate_->slots() != budget.compute_slots) {
    gate_ = std::make_unique<runtime::ComputeGate>(budget.compute_slots);
  }
  // One rule for every wait of the run (docs/reliability.md): a program that
  // communicates may wait for a collective, which is bounded by the
  // communication timeout, so its stream-side waits get the stream timeout
  // plus that; the collective's own timeout ends a dead peer's wait first,
  // with the message that names it.
  wait_timeout_ = runtime::defaultWaitTimeout();
  if (schedule.communicates) {
    wait_timeout_ +=
        std::chrono::duration_cast<runtime::WaitTimeout>(schedule.communication_timeout);
  }
  skip_compute_ = schedule.skip_compute;
  bound_streams_.clear();
  current_ = &pool_.callerStream();
  inline_on_caller_ = !schedule.communicates;
}

void StreamScheduler::finishRun() {
  pool_.synchronizeAll(wait_timeout_);
}

void StreamScheduler::drainAfterFailure() {
  try {
    pool_.synchronizeAll(wait_timeout_);
  } catch (const std::exception&) {  // the host-side error is the one to report
  }
}

runtime::Stream& StreamScheduler::resolve(const Stream* ir_stream, ExpressionEvaluator& ee) {
  auto bound = bound_streams_.find(ir_stream);
  if (bound != bound_streams_.end()) {
    return *bound->second;
  }
  HOSTIR_CHECK(ir_stream->hasIndex(), ir_stream->toInlineString(),
               " is not bound: get it with GetCurrentStream or give it an index");
  int64_t index = ee.evaluateInt(ir_stream->index());
  HOSTIR_CHECK(index >= 0, ir_stream->toInlineString(), " evaluates to index ", index,
               "; stream indices must be non-negative");
  // IR stream k is worker stream k + 1; the caller's stream is pool stream 0.
  return pool_.stream(index + 1);
}

void StreamScheduler::switchTo(const Stream* ir_stream, ExpressionEvaluator& ee) {
  current_ = &resolve(ir_stream, ee);
  if (current_ != &pool_.callerStream()) {
    inline_on_caller_ = false;
  }
}

void StreamScheduler::synchronizeWith(const Stream* ir_stream, ExpressionEvaluator& ee) {
  runtime::Stream& other = resolve(ir_stream, ee);
  if (&other != current_) {
    inline_on_caller_ = false;
    current_->waitStream(other, wait_timeout_);
  }
}

}  // namespace hostir
