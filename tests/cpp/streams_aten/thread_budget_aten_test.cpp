#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/thread_budget_aten.h"

// Counts the pools libtorch starts through libpthreadpool.so (caffe2's
// pthreadpool, which at::set_num_threads re-creates): this executable's
// definition comes before the library's in the dynamic linker's lookup.
namespace {
std::atomic<int> g_pools_started{0};
}  // namespace

extern "C" struct pthreadpool* pthreadpool_create(size_t threads) {
  using Create = struct pthreadpool* (*)(size_t);
  static const Create real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthreadpool_create"));
  g_pools_started.fetch_add(1);
  return real == nullptr ? nullptr : real(threads);
}

namespace hostir::runtime {
namespace {

// Sets HOSTIR_INTRAOP_THREADS for one test and restores it afterwards.
class IntraOpThreadsOverride {
 public:
  explicit IntraOpThreadsOverride(const char* value) {
    if (const char* old = std::getenv("HOSTIR_INTRAOP_THREADS")) {
      saved_ = old;
    }
    setenv("HOSTIR_INTRAOP_THREADS", value, 1);
  }
  ~IntraOpThreadsOverride() {
    if (saved_.empty()) {
      unsetenv("HOSTIR_INTRAOP_THREADS");
    } else {
      setenv("HOSTIR_INTRAOP_THREADS", saved_.c_str(), 1);
    }
  }

 private:
  std::string saved_;
};

// The budget changes ATen's process-wide count (at::set_num_threads, which
// re-creates caffe2's pthreadpool) only when the count changes, and its
// workers start no pool at their first ATen call (before, every new worker
// did: the transformer layer's first run started 9 pools, each spinning a
// thread). Declared first: it needs a process in which nothing set ATen's
// count yet (ctest runs each suite in a process of its own).
TEST(AtenThreadPools, NewWorkersAndRepeatedRunsStartNoPool) {
  int started = g_pools_started.load();
  std::thread([] { at::get_num_threads(); }).join();
  if (g_pools_started.load() != started) {
    GTEST_SKIP() << "ATen's process-wide thread count was set before this test, so every new "
                    "thread starts a pool whatever the budget does; run the suite alone";
  }
  const int threads = at::get_num_threads() + 1;  // not any thread's default
  IntraOpThreadsOverride override_budget(std::to_string(threads).c_str());
  StreamPool pool(3);
  applyThreadBudget(pool);  // the count changes: ATen may start its pool here
  const bool counted = g_pools_started.load() != started;
  started = g_pools_started.load();
  int seen[3] = {0, 0, 0};
  for (int run = 0; run < 2; ++run) {
    applyThreadBudget(pool);
    for (int s = 0; s < 3; ++s) {
      pool.stream(s).enqueue("an op on a new worker", [&seen, s] {
        at::Tensor x = at::ones({1 << 16});
        seen[s] = (x + x).sum().item<float>() == 2.0f * (1 << 16) ? at::get_num_threads() : -1;
      });
    }
    pool.synchronizeAll();
  }
  EXPECT_EQ(g_pools_started.load() - started, 0);
  EXPECT_EQ(at::get_num_threads(), threads);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(seen[s], threads) << "stream " << s;
  }
  if (!counted) {
    GTEST_SKIP() << "this libtorch starts no pool through libpthreadpool.so at "
                    "at::set_num_threads, so the count above saw none either way";
  }
}

// Threads of an OpenMP team run ATen's lazy init too, at their first ATen
// call inside a parallel region (a column sum's parallel body asks ATen for
// its count): once a process-wide count is stored, each re-created caffe2's
// pool, in the layer's first run. The budget starts the caller's and each
// worker's team ahead, its threads marked, so a first parallel op on them
// starts no pool (before: one per new team thread). Declared before the
// tests below, whose parallel ops would start the host's team first.
TEST(AtenThreadPools, TheBudgetStartsTheTeamsAheadSoAParallelOpStartsNoPool) {
  IntraOpThreadsOverride override_budget("2");
  StreamPool pool(2);
  applyThreadBudget(pool);  // may start ATen's pool: the count is stored here
  pool.stream(1).enqueue("the worker's setup", [] {});
  pool.synchronizeAll();
  const int started = g_pools_started.load();
  const at::Tensor x = at::ones({1024, 1024});
  EXPECT_EQ(x.sum(0).sum().item<float>(), 1024.0f * 1024.0f);
  float on_worker = 0;
  pool.stream(1).enqueue("a parallel op on a worker",
                         [&on_worker, &x] { on_worker = x.sum(0).sum().item<float>(); });
  pool.synchronizeAll();
  EXPECT_EQ(on_worker, 1024.0f * 1024.0f);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(g_pools_started.load() - started, 0);
}

// c10d's Gloo threads are not the budget's: each ran ATen's lazy init at its
// first ATen call (a collective's copy), which re-created caffe2's pool, a
// new thread spinning in the transformer layer's first run. A group's
// workers now take the budget's count when the group is made, so a first
// collective starts no pool (before: one, from the worker that ran it).
TEST(AtenThreadPools, AGroupsFirstCollectiveStartsNoPool) {
  IntraOpThreadsOverride override_budget("2");
  StreamPool pool(1);
  applyThreadBudget(pool);  // may start ATen's pool: the count is stored here
  Communicator& communicator = Communicator::getInstance();
  ASSERT_EQ(communicator.size(), 1) << "runs as one process";
  const int started = g_pools_started.load();
  // Big enough that the Gloo worker's copy of the result is a parallel
  // loop, which asks ATen for its thread count.
  at::Tensor input = at::arange(1 << 20, at::kFloat);
  std::vector<std::vector<at::Tensor>> outputs = {{at::empty_like(input)}};
  std::vector<at::Tensor> inputs = {input};
  communicator.processGroup({0}, /*stream_key=*/7).allgather(outputs, inputs)->wait();
  EXPECT_TRUE(outputs[0][0].equal(input));
  EXPECT_EQ(g_pools_started.load() - started, 0);
}

// ATen's thread count can be per thread (OpenMP), so check it on the host and
// on each worker, and check that a new budget reaches workers that exist.
TEST(ThreadBudgetAten, AppliesTheBudgetOnTheHostAndOnEveryWorker) {
  const int original = at::get_num_threads();
  StreamPool pool(3);
  for (const int threads : {3, 2}) {
    IntraOpThreadsOverride override_budget(std::to_string(threads).c_str());
    const ThreadBudget budget = applyThreadBudget(pool);
    EXPECT_EQ(budget.intra_op_threads, threads);
    EXPECT_EQ(at::get_num_threads(), threads);
    int seen[3] = {0, 0, 0};
    for (int s = 0; s < 3; ++s) {
      pool.stream(s).enqueue("read intra-op threads",
                             [&seen, s] { seen[s] = at::get_num_threads(); });
    }
    pool.synchronizeAll();
    for (int s = 0; s < 3; ++s) {
      EXPECT_EQ(seen[s], threads) << "stream " << s;
    }
  }
  at::set_num_threads(original);
}

TEST(ThreadBudgetAten, DefaultSplitsTheCoresAcrossStreams) {
  StreamPool pool(2);
  const char* set = std::getenv("HOSTIR_INTRAOP_THREADS");
  if (set != nullptr && *set != '\0') {
    GTEST_SKIP() << "HOSTIR_INTRAOP_THREADS is set";
  }
  const int original = at::get_num_threads();
  const ThreadBudget budget = applyThreadBudget(pool);
  EXPECT_EQ(budget.intra_op_threads, std::max(1, availableCores() / 2));
  EXPECT_EQ(at::get_num_threads(), budget.intra_op_threads);
  at::set_num_threads(original);
}

}  // namespace
}  // namespace hostir::runtime
