#include "hostir/runtime/streams/compute_gate.h"

#include <map>
#include <utility>

#include "hostir/ir/error.h"

namespace hostir::runtime {

struct ComputeGate::Ticket::State {
  explicit State(int slots) : slots(slots) {}

  // Skips turns given up ahead of the next one. Called with `mutex` held.
  void advance() {
    while (!given_up.empty() && *given_up.begin() == next_turn) {
      given_up.erase(given_up.begin());
      ++next_turn;
    }
  }

  const int slots;
  std::mutex mutex;
  std::condition_variable changed;
  std::uint64_t taken = 0;      // tickets handed out
  std::uint64_t next_turn = 0;  // the ticket that may start next
  int running = 0;
  std::set<std::uint64_t> given_up;
  std::map<std::uint64_t, std::string> waiting_labels;  // for timeout messages
};

ComputeGate::ComputeGate(int slots)
    : slots_(slots), state_(std::make_shared<Ticket::State>(slots)) {
  HOSTIR_CHECK(slots >= 1, "a compute gate needs at least 1 slot, got ", slots);
}

std::shared_ptr<ComputeGate::Ticket> ComputeGate::take(std::string label) {
  std::uint64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    number = state_->taken++;
    state_->waiting_labels.emplace(number, label);
  }
  return std::shared_ptr<Ticket>(new Ticket(state_, number, std::move(label)));
}

ComputeGate::Ticket::Ticket(std::shared_ptr<State> state, std::uint64_t number, std::string label)
    : state_(std::move(state)), number_(number), label_(std::move(label)) {}

ComputeGate::Ticket::~Ticket() {
  if (phase_ == Phase::kRunning) {
    leave();
    return;
  }
  if (phase_ == Phase::kWaiting) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->waiting_labels.erase(number_);
    state_->given_up.insert(number_);
    state_->advance();
    state_->changed.notify_all();
  }
}

void ComputeGate::Ticket::enter(WaitTimeout timeout) {
  HOSTIR_ASSERT(phase_ == Phase::kWaiting, "a compute ticket entered twice");
  std::unique_lock<std::mutex> lock(state_->mutex);
  const bool admitted = state_->changed.wait_for(lock, timeout, [this] {
    return state_->next_turn == number_ && state_->running < state_->slots;
  });
  if (!admitted) {
    auto holder = state_->waiting_labels.find(state_->next_turn);
    std::string blocker =
        state_->next_turn == number_
            ? std::string("a free slot (all ") + std::to_string(state_->slots) + " busy)"
        : holder != state_->waiting_labels.end() ? "'" + holder->second + "' to start first"
                                                 : "earlier compute to start first";
    HOSTIR_THROW("timed out after ", describeTimeout(timeout), " waiting for the compute turn of '",
                 label_, "': it waits for ", blocker,
                 "; compute runs in program order (ComputeGate)");
  }
  state_->waiting_labels.erase(number_);
  ++state_->next_turn;
  state_->advance();
  ++state_->running;
  phase_ = Phase::kRunning;
  state_->changed.notify_all();
}

void ComputeGate::Ticket::leave() {
  if (phase_ != Phase::kRunning) {
    return;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  --state_->running;
  phase_ = Phase::kDone;
  state_->changed.notify_all();
}

}  // namespace hostir::runtime
