#include <gtest/gtest.h>

#include <atomic>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using testing::kGenerousWait;
using testing::Signal;

// Work on stream A blocks until work on stream B, enqueued after it, signals.
// Only truly concurrent streams complete this; a serialized runtime runs A's
// work first, its wait times out, the work throws and synchronizeAll fails.
void expectConcurrent(StreamPool& pool, std::int64_t index_a, std::int64_t index_b) {
  Signal b_ran;
  pool.stream(index_a).enqueue("A waits for B", [&] {
    HOSTIR_CHECK(b_ran.waitFor(kGenerousWait), "stream B never ran while A was blocked");
  });
  pool.stream(index_b).enqueue("B signals A", [&] { b_ran.raise(); });
  EXPECT_NO_THROW(pool.synchronizeAll());
}

TEST(StreamConcurrency, TwoWorkerStreamsRunConcurrently) {
  StreamPool pool;
  expectConcurrent(pool, 1, 2);
}

TEST(StreamConcurrency, CallerStreamRunsConcurrentlyWithWorkers) {
  StreamPool pool;
  expectConcurrent(pool, 0, 3);
  expectConcurrent(pool, 3, 0);
}

// All four streams of the default pool block until every one has started:
// a barrier that needs four concurrent workers.
TEST(StreamConcurrency, AllStreamsOfThePoolRunAtOnce) {
  StreamPool pool(4);
  std::atomic<int> arrived{0};
  Signal all_arrived;
  for (int s = 0; s < pool.numberOfStreams(); ++s) {
    pool.stream(s).enqueue("barrier", [&] {
      if (++arrived == 4) {
        all_arrived.raise();
      }
      HOSTIR_CHECK(all_arrived.waitFor(kGenerousWait), "only ", arrived.load(),
                   " streams ran concurrently");
    });
  }
  EXPECT_NO_THROW(pool.synchronizeAll());
}

}  // namespace
}  // namespace hostir::runtime
