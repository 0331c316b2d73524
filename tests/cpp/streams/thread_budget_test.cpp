#include <gtest/gtest.h>

#include "hostir/ir/error.h"
#include "hostir/runtime/thread_budget.h"

namespace hostir::runtime {
namespace {

TEST(ThreadBudget, SplitsCoresEvenlyAcrossStreams) {
  const ThreadBudget budget = computeThreadBudget(4, 16, nullptr);
  EXPECT_EQ(budget.intra_op_threads, 4);
  EXPECT_FALSE(budget.from_environment);
  EXPECT_EQ(budget.describe(), "4 intra-op thread(s) per stream (16 cores / 4 streams)");
}

TEST(ThreadBudget, NeverDropsBelowOneThread) {
  EXPECT_EQ(computeThreadBudget(4, 2, nullptr).intra_op_threads, 1);
  EXPECT_EQ(computeThreadBudget(8, 1, nullptr).intra_op_threads, 1);
}

TEST(ThreadBudget, RoundsDownSoStreamsTimesThreadsFitTheCores) {
  const ThreadBudget budget = computeThreadBudget(3, 8, nullptr);
  EXPECT_EQ(budget.intra_op_threads, 2);
  EXPECT_LE(budget.intra_op_threads * budget.concurrent_streams, budget.cores);
}

TEST(ThreadBudget, EnvironmentOverrides) {
  const ThreadBudget budget = computeThreadBudget(4, 16, "3");
  EXPECT_EQ(budget.intra_op_threads, 3);
  EXPECT_TRUE(budget.from_environment);
  EXPECT_EQ(computeThreadBudget(4, 16, "").intra_op_threads, 4);  // empty = unset
}

TEST(ThreadBudget, RejectsBadOverrides) {
  for (const char* bad : {"0", "-2", "two", "3x"}) {
    try {
      computeThreadBudget(4, 16, bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("HOSTIR_INTRAOP_THREADS"), std::string::npos);
    }
  }
  EXPECT_THROW(computeThreadBudget(0, 16, nullptr), Error);
}

TEST(ThreadBudget, AvailableCoresIsPositive) {
  EXPECT_GE(availableCores(), 1);
  const ThreadBudget budget = computeThreadBudget(1);
  EXPECT_GE(budget.intra_op_threads, 1);
}

}  // namespace
}  // namespace hostir::runtime
