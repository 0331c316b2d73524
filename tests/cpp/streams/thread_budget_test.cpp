#include <gtest/gtest.h>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/thread_budget.h"

namespace hostir::runtime {
namespace {

TEST(ThreadBudget, SplitsCoresEvenlyAcrossStreams) {
  const ThreadBudget budget = computeThreadBudget(4, 16, nullptr);
  EXPECT_EQ(budget.intra_op_threads, 4);
  EXPECT_FALSE(budget.from_environment);
  EXPECT_EQ(budget.compute_slots, 4);
  EXPECT_EQ(budget.describe(),
            "4 intra-op thread(s) per op, 4 streams computing at once (16 cores for this rank)");
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

TEST(ThreadBudget, CommunicatingProgramsComputeInProgramOrderWithTheRanksCores) {
  // 2 ranks on 16 cores: 8 each; one op at a time, one core left to Gloo.
  const ThreadBudget budget = computeThreadBudget(ThreadBudgetInputs{
      .concurrent_streams = 4, .cores = 16, .ranks_sharing_cores = 2, .communicates = true});
  EXPECT_EQ(budget.cores, 8);
  EXPECT_EQ(budget.compute_slots, 1);
  EXPECT_EQ(budget.intra_op_threads, 7);
  EXPECT_EQ(budget.describe(),
            "7 intra-op thread(s) per op, 1 op(s) at a time in program order (8 cores for this "
            "rank)");
  // 2 ranks on 2 cores: no core to spare for communication.
  const ThreadBudget small = computeThreadBudget(ThreadBudgetInputs{
      .concurrent_streams = 4, .cores = 2, .ranks_sharing_cores = 2, .communicates = true});
  EXPECT_EQ(small.cores, 1);
  EXPECT_EQ(small.intra_op_threads, 1);
  EXPECT_EQ(small.compute_slots, 1);
}

TEST(ThreadBudget, ComputeSlotsOverride) {
  const ThreadBudget budget = computeThreadBudget(ThreadBudgetInputs{
      .concurrent_streams = 4, .cores = 8, .communicates = true, .compute_slots_override = "2"});
  EXPECT_EQ(budget.compute_slots, 2);
  for (const char* bad : {"0", "x", "-1"}) {
    try {
      computeThreadBudget(
          ThreadBudgetInputs{.concurrent_streams = 4, .cores = 8, .compute_slots_override = bad});
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("HOSTIR_COMPUTE_SLOTS"), std::string::npos);
    }
  }
}

TEST(ThreadBudget, AvailableCoresIsPositive) {
  EXPECT_GE(availableCores(), 1);
  const ThreadBudget budget = computeThreadBudget(1);
  EXPECT_GE(budget.intra_op_threads, 1);
}

}  // namespace
}  // namespace hostir::runtime
