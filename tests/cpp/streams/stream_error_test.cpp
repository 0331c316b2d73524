#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir::runtime {
namespace {

std::string synchronizeAllError(StreamPool& pool) {
  try {
    pool.synchronizeAll();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StreamError, WorkerExceptionReachesTheCallerNamingTheWork) {
  StreamPool pool;
  pool.stream(2).enqueue("T2_g_float[iS4{i0}] = add(T0, T1)",
                         [] { HOSTIR_THROW("shapes [2] and [3] do not broadcast"); });
  const std::string message = synchronizeAllError(pool);
  EXPECT_TRUE(contains(message, "stream 2")) << message;
  EXPECT_TRUE(contains(message, "T2_g_float[iS4{i0}] = add(T0, T1)")) << message;
  EXPECT_TRUE(contains(message, "shapes [2] and [3] do not broadcast")) << message;
}

TEST(StreamError, CallerStreamExceptionIsCapturedToo) {
  StreamPool pool;
  pool.callerStream().enqueue("bad", [] { throw std::out_of_range("index 7"); });
  const std::string message = synchronizeAllError(pool);
  EXPECT_TRUE(contains(message, "index 7 (stream 0 failed running 'bad')")) << message;
}

TEST(StreamError, NonStandardExceptionIsCaptured) {
  StreamPool pool;
  pool.stream(1).enqueue("throws an int", [] { throw 7; });
  EXPECT_TRUE(contains(synchronizeAllError(pool), "'throws an int'"));
}

TEST(StreamError, LaterWorkOnTheFailedStreamIsSkipped) {
  StreamPool pool;
  std::atomic<bool> later_ran{false};
  std::atomic<bool> other_stream_ran{false};
  pool.stream(1).enqueue("fails", [] { HOSTIR_THROW("boom"); });
  pool.stream(1).enqueue("later", [&] { later_ran = true; });
  pool.stream(2).enqueue("independent", [&] { other_stream_ran = true; });
  EXPECT_FALSE(synchronizeAllError(pool).empty());
  EXPECT_FALSE(later_ran);
  EXPECT_TRUE(other_stream_ran);  // streams that do not depend on it carry on
}

// A stream waiting on an event of a failed stream must not hang (it would
// wait until the timeout); it fails at once and skips its later work. The
// caller hears about the original failure first.
TEST(StreamError, FailurePropagatesThroughEventsWithoutHanging) {
  StreamPool pool;
  std::atomic<bool> consumer_ran{false};
  pool.stream(1).enqueue("producer", [] { HOSTIR_THROW("producer broke"); });
  pool.stream(2).waitEvent(pool.stream(1).recordEvent(), std::chrono::seconds(600));
  pool.stream(2).enqueue("consumer", [&] { consumer_ran = true; });
  const auto start = std::chrono::steady_clock::now();
  const std::string message = synchronizeAllError(pool);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_FALSE(consumer_ran);
  EXPECT_EQ(message.rfind("producer broke (stream 1 failed running 'producer')", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "(stream 2 failed running 'wait for event on stream 1")) << message;
}

TEST(StreamError, EventRecordedBeforeTheFailureStillCompletesCleanly) {
  StreamPool pool;
  std::atomic<bool> consumer_ran{false};
  pool.stream(1).enqueue("fine", [] {});
  Event before_failure = pool.stream(1).recordEvent();
  pool.stream(1).enqueue("fails", [] { HOSTIR_THROW("boom"); });
  pool.stream(2).waitEvent(before_failure);
  pool.stream(2).enqueue("consumer", [&] { consumer_ran = true; });
  EXPECT_FALSE(synchronizeAllError(pool).empty());
  EXPECT_TRUE(consumer_ran);
  EXPECT_FALSE(before_failure.failure().has_value());
}

TEST(StreamError, HostSideEventSynchronizeReportsTheFailure) {
  StreamPool pool;
  pool.stream(1).enqueue("fails", [] { HOSTIR_THROW("boom"); });
  Event after_failure = pool.stream(1).recordEvent();
  try {
    after_failure.synchronize();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "boom (stream 1 failed running 'fails')")) << error.what();
  }
  EXPECT_FALSE(synchronizeAllError(pool).empty());
}

TEST(StreamError, StreamSynchronizeReportsItsStickyFailure) {
  StreamPool pool;
  pool.stream(1).enqueue("fails", [] { HOSTIR_THROW("boom"); });
  EXPECT_THROW(pool.stream(1).synchronize(), Error);
  EXPECT_THROW(pool.stream(1).synchronize(), Error);  // sticky until the run ends
  EXPECT_FALSE(synchronizeAllError(pool).empty());
  EXPECT_NO_THROW(pool.stream(1).synchronize());
}

TEST(StreamError, PoolIsUsableAfterTheErrorWasRaised) {
  StreamPool pool;
  pool.stream(1).enqueue("fails", [] { HOSTIR_THROW("boom"); });
  pool.stream(2).waitStream(pool.stream(1));
  EXPECT_FALSE(synchronizeAllError(pool).empty());

  std::atomic<int> ran{0};
  pool.stream(1).enqueue("next run", [&] { ++ran; });
  pool.stream(2).waitStream(pool.stream(1));
  pool.stream(2).enqueue("next run", [&] { ++ran; });
  EXPECT_NO_THROW(pool.synchronizeAll());
  EXPECT_EQ(ran.load(), 2);
}

TEST(StreamError, DestroyingAStreamCompletesItsPendingEvents) {
  StreamPool pool;
  Event never_reached;
  {
    Stream doomed(9);
    doomed.enqueue("slow", [] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); });
    never_reached = doomed.recordEvent();
  }
  EXPECT_TRUE(never_reached.isComplete());
  pool.stream(1).waitEvent(never_reached, std::chrono::seconds(600));
  const std::string message = synchronizeAllError(pool);
  EXPECT_TRUE(contains(message, "destroyed")) << message;
}

}  // namespace
}  // namespace hostir::runtime
