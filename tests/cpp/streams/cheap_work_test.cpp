// Stream::enqueueCheap: work cheaper than a hand-off runs on the calling
// thread while its stream is idle, and is queued behind whatever the stream
// still has to do otherwise, so stream order and sticky failures hold.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using testing::kGenerousWait;
using testing::Signal;

std::shared_ptr<const std::string> labelled(const std::string& text) {
  return std::make_shared<const std::string>(text);
}

TEST(CheapWork, RunsOnTheCallingThreadWhenTheStreamIsIdle) {
  StreamPool pool;
  Stream& stream = pool.stream(1);
  std::thread::id ran_on;
  stream.enqueueCheap(labelled("tiny add"), [&] { ran_on = std::this_thread::get_id(); });
  // Synchronous: done before enqueueCheap returned, with no drain needed.
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  // An event recorded now is complete: nothing is queued or running.
  EXPECT_TRUE(stream.recordEvent().isComplete());
  pool.synchronizeAll();
}

TEST(CheapWork, WaitsBehindQueuedWorkOnTheWorker) {
  StreamPool pool;
  Stream& stream = pool.stream(1);
  Signal release;
  std::vector<int> order;  // touched by the worker only
  std::thread::id cheap_ran_on;
  stream.enqueue("blocked", [&] {
    release.waitFor(kGenerousWait);
    order.push_back(1);
  });
  stream.enqueueCheap(labelled("tiny add"), [&] {
    cheap_ran_on = std::this_thread::get_id();
    order.push_back(2);
  });
  release.raise();
  pool.synchronizeAll();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_NE(cheap_ran_on, std::this_thread::get_id());
}

TEST(CheapWork, WaitsBehindAParkedWait) {
  StreamPool pool;
  Stream& producer = pool.stream(1);
  Stream& consumer = pool.stream(2);
  Signal release;
  std::atomic<bool> produced{false};
  std::atomic<bool> consumer_saw_it{false};
  producer.enqueue("produce", [&] {
    release.waitFor(kGenerousWait);
    produced = true;
  });
  consumer.waitStream(producer);
  consumer.enqueueCheap(labelled("consume"), [&] { consumer_saw_it = produced.load(); });
  release.raise();
  pool.synchronizeAll();
  EXPECT_TRUE(consumer_saw_it);
}

TEST(CheapWork, AFailureIsTheStreamsStickyFailure) {
  StreamPool pool;
  Stream& stream = pool.stream(1);
  stream.enqueueCheap(labelled("tiny add"), [] { throw std::runtime_error("bad operand"); });
  std::atomic<bool> later_ran{false};
  stream.enqueueCheap(labelled("later"), [&] { later_ran = true; });
  stream.enqueue("queued later", [&] { later_ran = true; });
  try {
    stream.synchronize();
    FAIL() << "the failure of cheap work was lost";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("bad operand"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("tiny add"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(later_ran);
  ASSERT_TRUE(stream.takeFailure().has_value());
  stream.enqueueCheap(labelled("after recovery"), [&] { later_ran = true; });
  EXPECT_TRUE(later_ran);
}

TEST(CheapWork, EventsAfterItCompleteInOrder) {
  StreamPool pool;
  Stream& worker = pool.stream(1);
  Stream& waiter = pool.stream(2);
  std::atomic<int> value{0};
  worker.enqueueCheap(labelled("write"), [&] { value = 7; });
  waiter.waitStream(worker);
  std::atomic<int> seen{0};
  waiter.enqueue("read", [&] { seen = value.load(); });
  pool.synchronizeAll();
  EXPECT_EQ(seen, 7);
}

TEST(CheapWork, ManyOnSeveralStreamsKeepEachStreamsOrder) {
  StreamPool pool;
  constexpr int kStreams = 4;
  constexpr int kItems = 400;
  std::vector<std::vector<int>> ran(kStreams);
  for (int i = 0; i < kItems; ++i) {
    Stream& stream = pool.stream(1 + i % kStreams);
    std::vector<int>& mine = ran[i % kStreams];
    if (i % 3 == 0) {
      stream.enqueue("append", [&mine, i] { mine.push_back(i); });
    } else {
      stream.enqueueCheap(labelled("append"), [&mine, i] { mine.push_back(i); });
    }
  }
  pool.synchronizeAll();
  for (int s = 0; s < kStreams; ++s) {
    ASSERT_EQ(ran[s].size(), static_cast<std::size_t>(kItems / kStreams));
    for (std::size_t k = 1; k < ran[s].size(); ++k) {
      EXPECT_LT(ran[s][k - 1], ran[s][k]);
    }
  }
}

}  // namespace
}  // namespace hostir::runtime
