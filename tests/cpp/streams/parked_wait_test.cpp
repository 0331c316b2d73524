// Waits parked on their event (Stream::waitEvent): whoever completes the
// event takes the wait off the waiting stream's queue, with the events
// recorded behind it, so a stream that only waits needs no worker. These
// tests hold that to the semantics of a wait: nothing behind it runs or
// completes before the awaited event, every wait keeps its own timeout, and
// a stream may go away while it is parked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using std::chrono::milliseconds;
using testing::kGenerousWait;
using testing::Signal;

// Stream 2 fails on its 50 ms wait within seconds, not at the deadline of a
// longer wait (kGenerousWait); the work queued behind it never runs.
void expectStream2FailsOnItsShortWait(StreamPool& pool, const bool& later_ran) {
  pool.stream(2).drain(std::chrono::seconds(5));
  const std::optional<StreamFailure> failure = pool.stream(2).failure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->message.find("timed out after 50 ms"), std::string::npos) << failure->message;
  EXPECT_FALSE(later_ran);
}

// Stream 2 and 3 only wait and record: the producer's completion reaches
// the consumer on stream 4 through both, in order.
TEST(ParkedWait, CompletionPassesThroughStreamsThatOnlyWait) {
  StreamPool pool;
  Signal release;
  int produced = 0;
  pool.stream(1).enqueue("producer", [&] {
    release.waitFor(kGenerousWait);
    produced = 42;
  });
  pool.stream(2).waitStream(pool.stream(1));
  Event after_second = pool.stream(2).recordEvent();
  pool.stream(3).waitEvent(after_second);
  Event after_third = pool.stream(3).recordEvent();
  std::atomic<int> consumed{0};
  pool.stream(4).waitEvent(after_third);
  pool.stream(4).enqueue("consumer", [&] { consumed = produced; });

  EXPECT_FALSE(after_second.isComplete());
  EXPECT_FALSE(after_third.isComplete());
  EXPECT_EQ(consumed.load(), 0);
  release.raise();
  pool.synchronizeAll();
  EXPECT_TRUE(after_second.isComplete());
  EXPECT_TRUE(after_third.isComplete());
  EXPECT_EQ(consumed.load(), 42);
}

// A stream may wait for its own event: it completes when the stream gets
// there, and the wait behind it then lets the work after it run.
TEST(ParkedWait, AStreamWaitingForItsOwnEventGoesOn) {
  StreamPool pool;
  bool ran = false;
  pool.stream(1).enqueue("first", [] {});
  pool.stream(1).waitEvent(pool.stream(1).recordEvent());
  pool.stream(1).enqueue("after", [&] { ran = true; });
  pool.synchronizeAll();
  EXPECT_TRUE(ran);
}

// The worker sleeps until the deadline of the wait it parked last. A later
// wait with an earlier deadline must wake it, or that wait would time out
// only at the earlier wait's deadline (here the generous one).
TEST(ParkedWait, AShorterTimeoutAfterALongerOneStillEndsOnTime) {
  StreamPool pool;
  Signal first, stuck;
  pool.stream(1).enqueue("first producer", [&] { first.waitFor(kGenerousWait); });
  pool.stream(2).waitStream(pool.stream(1), kGenerousWait);
  first.raise();
  pool.stream(1).drain();
  pool.stream(3).enqueue("stuck producer", [&] { stuck.waitFor(kGenerousWait); });
  pool.stream(2).waitStream(pool.stream(3), milliseconds(50));
  bool later_ran = false;
  pool.stream(2).enqueue("later", [&] { later_ran = true; });
  expectStream2FailsOnItsShortWait(pool, later_ran);
  stuck.raise();
  EXPECT_THROW(pool.synchronizeAll(), Error);
}

// The first of two parked waits times out on its own deadline, although the
// wait behind it would wait much longer.
TEST(ParkedWait, TheFirstWaitTimesOutWhileALongerOneIsQueuedBehindIt) {
  StreamPool pool;
  Signal stuck;
  pool.stream(1).enqueue("stuck producer", [&] { stuck.waitFor(kGenerousWait); });
  pool.stream(2).waitStream(pool.stream(1), milliseconds(50));
  pool.stream(2).waitStream(pool.stream(1), kGenerousWait);
  bool later_ran = false;
  pool.stream(2).enqueue("later", [&] { later_ran = true; });
  expectStream2FailsOnItsShortWait(pool, later_ran);
  stuck.raise();
  EXPECT_THROW(pool.synchronizeAll(), Error);
}

// While parked, a wait is what its stream is doing: a host drain that times
// out names it.
TEST(ParkedWait, AHostDrainTimingOutNamesTheParkedWait) {
  StreamPool pool;
  Signal stuck;
  pool.stream(1).enqueue("stuck producer", [&] { stuck.waitFor(kGenerousWait); });
  pool.stream(2).waitStream(pool.stream(1));
  pool.stream(2).enqueue("queued", [] {});
  try {
    pool.stream(2).drain(milliseconds(30));
    FAIL() << "expected a timeout error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("running 'wait for event on stream 1 after 'stuck producer'' with 1 more "
                        "item(s) queued"),
              std::string::npos)
        << error.what();
  }
  stuck.raise();
  pool.synchronizeAll();
}

// A stream destroyed while parked on an event is not told when the event
// completes later (the event outlives it).
TEST(ParkedWait, AStreamMayBeDestroyedWhileParked) {
  Stream producer(1);
  Signal release;
  producer.enqueue("producer", [&] { release.waitFor(kGenerousWait); });
  auto waiter = std::make_unique<Stream>(2);
  waiter->waitStream(producer);
  Event behind_the_wait = waiter->recordEvent();
  waiter.reset();
  EXPECT_TRUE(behind_the_wait.isComplete());
  EXPECT_TRUE(behind_the_wait.failure().has_value());  // discarded with the stream
  release.raise();
  producer.synchronize();
}

}  // namespace
}  // namespace hostir::runtime
