#include "hostir/runtime/streams/event.h"

#include <utility>

#include "hostir/ir/error.h"

namespace hostir::runtime {

Event::Event(int stream_id, std::shared_ptr<const std::string> after_label)
    : state_(std::make_shared<State>()) {
  state_->stream_id = stream_id;
  state_->after_label = std::move(after_label);
}

bool Event::isComplete() const {
  if (!state_) {
    return true;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->complete;
}

std::optional<StreamFailure> Event::failure() const {
  if (!state_) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->failure;
}

void Event::synchronize(std::optional<WaitTimeout> timeout) const {
  const WaitTimeout limit = timeout.value_or(defaultWaitTimeout());
  HOSTIR_CHECK(waitFor(limit), "timed out after ", describeTimeout(limit),
               " on the host waiting for the ", describe());
  if (auto failed = failure()) {
    HOSTIR_THROW("the ", describe(), " will never be reached: ", failed->describe());
  }
}

std::string Event::describe() const {
  if (!state_) {
    return "unrecorded event";
  }
  std::string text = "event on stream " + std::to_string(state_->stream_id);
  if (state_->after_label == nullptr || state_->after_label->empty()) {
    return text + " (recorded before any work)";
  }
  return text + " after '" + *state_->after_label + "'";
}

std::vector<std::shared_ptr<EventWaiter>> Event::complete(
    std::optional<StreamFailure> failure) const {
  std::vector<std::shared_ptr<EventWaiter>> waiters;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->complete = true;
    state_->failure = std::move(failure);
    waiters.swap(state_->waiters);
  }
  state_->completed_cv.notify_all();
  return waiters;
}

bool Event::completedOrParked(const std::shared_ptr<EventWaiter>& waiter) const {
  if (!state_) {
    return true;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->complete) {
    state_->waiters.push_back(waiter);
  }
  return state_->complete;
}

bool Event::completedCleanly() const {
  if (!state_) {
    return true;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->complete && !state_->failure.has_value();
}

bool Event::waitUntil(std::chrono::steady_clock::time_point deadline) const {
  if (!state_) {
    return true;
  }
  std::unique_lock<std::mutex> lock(state_->mutex);
  return state_->completed_cv.wait_until(lock, deadline, [this] { return state_->complete; });
}

}  // namespace hostir::runtime
