#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using testing::kGenerousWait;
using testing::Signal;

TEST(StreamOrder, WorkOnOneStreamRunsInEnqueueOrder) {
  StreamPool pool;
  Stream& stream = pool.stream(1);
  std::vector<int> ran;  // touched only by the worker until synchronizeAll
  constexpr int kItems = 1000;
  for (int i = 0; i < kItems; ++i) {
    stream.enqueue("append " + std::to_string(i), [&ran, i] { ran.push_back(i); });
  }
  pool.synchronizeAll();
  ASSERT_EQ(ran.size(), static_cast<std::size_t>(kItems));
  for (int i = 0; i < kItems; ++i) {
    EXPECT_EQ(ran[i], i);
  }
}

TEST(StreamOrder, WorkRunsOnTheStreamsOwnThreadNotTheHost) {
  StreamPool pool;
  std::thread::id caller_worker;
  std::thread::id worker_1;
  pool.callerStream().enqueue("who am I", [&] { caller_worker = std::this_thread::get_id(); });
  pool.stream(1).enqueue("who am I", [&] { worker_1 = std::this_thread::get_id(); });
  pool.synchronizeAll();
  EXPECT_NE(caller_worker, std::this_thread::get_id());
  EXPECT_NE(worker_1, std::this_thread::get_id());
  EXPECT_NE(caller_worker, worker_1);
}

// Stream 0 must be asynchronous: its work waits for a signal the host raises
// only after enqueue returned. Run on the host thread, it would time out.
TEST(StreamOrder, CallerStreamIsAsynchronous) {
  StreamPool pool;
  Signal host_went_on;
  std::atomic<bool> saw_signal{false};
  pool.callerStream().enqueue("wait for the host",
                              [&] { saw_signal = host_went_on.waitFor(kGenerousWait); });
  host_went_on.raise();
  pool.synchronizeAll();
  EXPECT_TRUE(saw_signal);
}

TEST(StreamOrder, SynchronizeWaitsForAllEnqueuedWork) {
  StreamPool pool;
  std::atomic<int> done{0};
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 50; ++i) {
      pool.stream(s).enqueue("count", [&done] {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        ++done;
      });
    }
  }
  pool.synchronizeAll();
  EXPECT_EQ(done.load(), 200);
}

}  // namespace
}  // namespace hostir::runtime
