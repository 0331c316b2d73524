#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/compute_gate.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir::runtime {
namespace {

using namespace std::chrono_literals;

// Work admitted through the gate, as the evaluator enqueues compute.
void enqueueGated(Stream& stream, ComputeGate& gate, const std::string& label,
                  std::function<void()> work) {
  auto ticket = gate.take(label);
  stream.enqueue(label, [ticket, work = std::move(work)] {
    ticket->enter(5s);
    work();
    ticket->leave();
  });
}

TEST(ComputeGate, OneSlotRunsComputeInHostOrderAcrossStreams) {
  StreamPool pool(4);
  ComputeGate gate(1);
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  // Stream 1 is held back: without the gate, streams 2-4 would run first.
  Stream& held = pool.stream(1);
  std::atomic<bool> release{false};
  held.enqueue("hold", [&] {
    while (!release) {
      std::this_thread::sleep_for(1ms);
    }
  });
  for (int i = 0; i < 8; ++i) {
    enqueueGated(pool.stream(1 + i % 4), gate, "op " + std::to_string(i), [&, i] {
      int now = ++running;
      most_running = std::max(most_running.load(), now);
      std::this_thread::sleep_for(2ms);
      {
        std::lock_guard<std::mutex> lock(mutex);
        order.push_back(i);
      }
      --running;
    });
  }
  std::this_thread::sleep_for(20ms);
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_TRUE(order.empty()) << "op 1 ran before op 0, which is queued behind 'hold'";
  }
  release = true;
  pool.synchronizeAll();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(most_running.load(), 1);
}

TEST(ComputeGate, SeveralSlotsLetThatManyRunAtOnce) {
  StreamPool pool(4);
  ComputeGate gate(2);
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  for (int i = 0; i < 8; ++i) {
    enqueueGated(pool.stream(1 + i % 4), gate, "op", [&] {
      int now = ++running;
      most_running = std::max(most_running.load(), now);
      std::this_thread::sleep_for(5ms);
      --running;
    });
  }
  pool.synchronizeAll();
  EXPECT_EQ(most_running.load(), 2);
}

TEST(ComputeGate, WorkThatNeverRunsGivesUpItsTurn) {
  StreamPool pool(2);
  ComputeGate gate(1);
  // Ticket 0 sits on a stream that fails before reaching it: skipped work
  // must not hold back ticket 1 on another stream.
  pool.stream(1).enqueue("fails", [] { throw Error("boom"); });
  std::atomic<bool> first_ran{false};
  std::atomic<bool> second_ran{false};
  enqueueGated(pool.stream(1), gate, "skipped", [&] { first_ran = true; });
  enqueueGated(pool.stream(2), gate, "runs", [&] { second_ran = true; });
  EXPECT_THROW(pool.synchronizeAll(), Error);
  EXPECT_FALSE(first_ran);
  EXPECT_TRUE(second_ran);
}

TEST(ComputeGate, WorkThatThrowsFreesItsSlot) {
  StreamPool pool(2);
  ComputeGate gate(1);
  enqueueGated(pool.stream(1), gate, "throws", [] { throw Error("boom"); });
  std::atomic<bool> ran{false};
  enqueueGated(pool.stream(2), gate, "after", [&] { ran = true; });
  EXPECT_THROW(pool.synchronizeAll(), Error);
  EXPECT_TRUE(ran);
}

TEST(ComputeGate, TimeoutNamesTheWorkHoldingTheTurn) {
  ComputeGate gate(1);
  auto first = gate.take("T3 = linear(T1, T2)");
  auto second = gate.take("T4 = gelu(T3)");
  try {
    second->enter(20ms);
    FAIL() << "entered before the first ticket";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("timed out after", 0), 0u) << message;
    EXPECT_NE(message.find("'T4 = gelu(T3)'"), std::string::npos) << message;
    EXPECT_NE(message.find("'T3 = linear(T1, T2)' to start first"), std::string::npos) << message;
  }
  first->enter(20ms);
  first->leave();
  second->enter(20ms);
}

}  // namespace
}  // namespace hostir::runtime
