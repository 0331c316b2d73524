#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "hostir/runtime/streams/stream_timeout.h"

namespace hostir::runtime {

// Admits compute work to the cores in the order the host enqueued it, at most
// `slots` items at once, whatever stream each runs on.
//
// Why: on a CPU, streams share the cores. When chunk i+1's data arrives while
// chunk i's GEMM runs, a second stream would start chunk i+1's GEMM at once
// and the two would split the cores and finish together, so chunk i's
// follow-up communication (its reduce-scatter) would leave no earlier than the
// last chunk's. With one slot, chunk i finishes first with every core and its
// communication overlaps chunk i+1's compute (docs/streams.md).
//
// Tickets are taken on the host in program order. A stream's work only ever
// waits for work enqueued before it (events, earlier tickets), so in-order
// admission cannot deadlock. A ticket destroyed without running (its stream
// failed or was destroyed) gives up its turn, so later tickets never wait for
// it.
class ComputeGate {
 public:
  explicit ComputeGate(int slots);
  ComputeGate(const ComputeGate&) = delete;
  ComputeGate& operator=(const ComputeGate&) = delete;

  int slots() const {
    return slots_;
  }

  class Ticket {
   public:
    ~Ticket();
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;

    // Blocks the calling worker until every earlier ticket has started (or
    // given up its turn) and a slot is free. Throws hostir::Error after
    // `timeout`, naming the work that holds the turn.
    void enter(WaitTimeout timeout);
    // Frees the slot; called by the destructor if the work threw.
    void leave();

   private:
    friend class ComputeGate;
    struct State;
    Ticket(std::shared_ptr<State> state, std::uint64_t number, std::string label);

    std::shared_ptr<State> state_;
    std::uint64_t number_;
    std::string label_;
    enum class Phase { kWaiting, kRunning, kDone } phase_ = Phase::kWaiting;
  };

  // The next turn, in host order; `label` names the work in timeouts.
  std::shared_ptr<Ticket> take(std::string label);

 private:
  const int slots_;
  std::shared_ptr<Ticket::State> state_;
};

}  // namespace hostir::runtime
