#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir::runtime {
namespace {

TEST(StreamPool, SameIndexGivesTheSameStream) {
  StreamPool pool;
  Stream& first = pool.stream(2);
  EXPECT_EQ(&pool.stream(2), &first);
  EXPECT_EQ(first.id(), 2);
}

TEST(StreamPool, DistinctIndicesGiveDistinctStreams) {
  StreamPool pool;
  EXPECT_NE(&pool.stream(1), &pool.stream(2));
  EXPECT_NE(&pool.stream(0), &pool.stream(1));
  EXPECT_NE(&pool.stream(3), &pool.stream(7));
}

TEST(StreamPool, IndexZeroIsTheCallerStream) {
  StreamPool pool;
  EXPECT_EQ(&pool.callerStream(), &pool.stream(0));
  EXPECT_EQ(pool.callerStream().id(), 0);
}

TEST(StreamPool, StreamsAreCreatedLazilyAndReusedAcrossRuns) {
  StreamPool pool;
  EXPECT_EQ(pool.createdStreamCount(), 0u);
  Stream& stream = pool.stream(1);
  std::thread::id first_run_worker;
  stream.enqueue("run 1", [&] { first_run_worker = std::this_thread::get_id(); });
  pool.synchronizeAll();
  EXPECT_EQ(pool.createdStreamCount(), 1u);

  std::thread::id second_run_worker;
  EXPECT_EQ(&pool.stream(1), &stream);
  pool.stream(1).enqueue("run 2", [&] { second_run_worker = std::this_thread::get_id(); });
  pool.synchronizeAll();
  EXPECT_EQ(second_run_worker, first_run_worker);
  EXPECT_EQ(pool.createdStreamCount(), 1u);
}

TEST(StreamPool, NumberOfStreamsIsAParameter) {
  EXPECT_EQ(StreamPool().numberOfStreams(), 4);
  EXPECT_EQ(StreamPool(2).numberOfStreams(), 2);
  EXPECT_THROW(StreamPool(0), Error);
}

TEST(StreamPool, RejectsNegativeAndRunawayIndices) {
  StreamPool pool;
  EXPECT_THROW(pool.stream(-1), Error);
  try {
    pool.stream(StreamPool::kMaxStreamIndex + 1);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("StreamIdx % numberOfStreams"), std::string::npos);
  }
}

TEST(StreamPool, WorkerSetupRunsOnEveryWorkerBeforeItsWork) {
  StreamPool pool;
  pool.stream(1);  // exists before the setup is installed
  std::atomic<int> setups{0};
  thread_local bool set_up = false;
  pool.setWorkerSetup([&] {
    set_up = true;
    ++setups;
  });
  std::atomic<int> work_after_setup{0};
  for (int s = 0; s < 3; ++s) {  // stream 2 is created after the setup
    for (int i = 0; i < 5; ++i) {
      pool.stream(s).enqueue("check", [&] { work_after_setup += set_up ? 1 : 0; });
    }
  }
  pool.synchronizeAll();
  EXPECT_EQ(work_after_setup.load(), 15);
  EXPECT_EQ(setups.load(), 3);  // once per worker, not once per item
}

}  // namespace
}  // namespace hostir::runtime
