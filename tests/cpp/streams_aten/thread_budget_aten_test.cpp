#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cstdlib>
#include <string>

#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/thread_budget_aten.h"

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
