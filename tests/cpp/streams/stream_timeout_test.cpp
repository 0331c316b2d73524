#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using std::chrono::milliseconds;
using testing::kGenerousWait;
using testing::Signal;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StreamTimeout, StreamWaitTimesOutNamingBothStreamsAndTheEvent) {
  StreamPool pool;
  Signal release;
  pool.stream(1).enqueue("T5 = matmul(T3, T4)", [&] { release.waitFor(kGenerousWait); });
  pool.stream(2).waitEvent(pool.stream(1).recordEvent(), milliseconds(50));
  bool later_ran = false;
  pool.stream(2).enqueue("later", [&] { later_ran = true; });
  pool.stream(2).drain();  // its wait gave up; stream 1 is still blocked
  release.raise();
  try {
    pool.synchronizeAll();
    FAIL() << "expected a timeout error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_TRUE(contains(message, "stream 2 failed")) << message;
    EXPECT_TRUE(contains(message, "timed out after 50 ms")) << message;
    EXPECT_TRUE(contains(message, "event on stream 1 after 'T5 = matmul(T3, T4)'")) << message;
  }
  EXPECT_FALSE(later_ran);
}

TEST(StreamTimeout, HostDrainTimesOutNamingTheStreamAndItsRunningWork) {
  StreamPool pool;
  Signal release;
  pool.stream(3).enqueue("stuck work", [&] { release.waitFor(kGenerousWait); });
  pool.stream(3).enqueue("queued", [] {});
  try {
    pool.stream(3).drain(milliseconds(30));
    FAIL() << "expected a timeout error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_TRUE(contains(message, "timed out after 30 ms")) << message;
    EXPECT_TRUE(contains(message, "stream 3")) << message;
    EXPECT_TRUE(contains(message, "running 'stuck work' with 1 more item(s) queued")) << message;
  }
  release.raise();
  pool.synchronizeAll();
}

// Work that outlives the timeout and the grace after it (issue 22: the
// bound on waiting for running items) is named as still running.
TEST(StreamTimeout, SynchronizeAllTimesOut) {
  StreamPool pool;
  Signal release;
  pool.stream(1).enqueue("stuck work", [&] { release.waitFor(kGenerousWait); });
  try {
    pool.synchronizeAll(milliseconds(30), /*grace=*/milliseconds(30));
    FAIL() << "expected a timeout error";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "stream 1")) << error.what();
    EXPECT_TRUE(contains(error.what(), "'stuck work'")) << error.what();
    EXPECT_TRUE(contains(error.what(), "may still write into this run's buffers")) << error.what();
  }
  release.raise();
  pool.synchronizeAll();
}

TEST(StreamTimeout, HostEventWaitTimesOut) {
  StreamPool pool;
  Signal release;
  pool.stream(1).enqueue("stuck work", [&] { release.waitFor(kGenerousWait); });
  Event event = pool.stream(1).recordEvent();
  try {
    event.synchronize(milliseconds(20));
    FAIL() << "expected a timeout error";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(),
                         "timed out after 20 ms on the host waiting for the event "
                         "on stream 1 after 'stuck work'"))
        << error.what();
  }
  release.raise();
  pool.synchronizeAll();
}

TEST(StreamTimeout, DefaultTimeoutIsSettable) {
  const WaitTimeout original = defaultWaitTimeout();
  setDefaultWaitTimeout(milliseconds(40));
  StreamPool pool;
  Signal release;
  pool.stream(1).enqueue("stuck work", [&] { release.waitFor(kGenerousWait); });
  pool.stream(2).waitStream(pool.stream(1));  // uses the new default
  pool.stream(2).drain(kGenerousWait);
  EXPECT_TRUE(pool.stream(2).failure().has_value());
  EXPECT_TRUE(contains(pool.stream(2).failure()->message, "timed out after 40 ms"));
  setDefaultWaitTimeout(original);
  release.raise();
  EXPECT_THROW(pool.synchronizeAll(), Error);
  EXPECT_THROW(setDefaultWaitTimeout(milliseconds(0)), Error);
}

TEST(StreamTimeout, DescribesTimeoutsReadably) {
  EXPECT_EQ(describeTimeout(std::chrono::seconds(60)), "60 s");
  EXPECT_EQ(describeTimeout(milliseconds(250)), "250 ms");
}

}  // namespace
}  // namespace hostir::runtime
