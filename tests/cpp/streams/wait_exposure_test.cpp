#include "hostir/runtime/streams/wait_exposure.h"

#include <gtest/gtest.h>

namespace hostir::runtime {
namespace {

constexpr int kFirstLinkLane = 100;

bool isCollectiveWait(const std::string& name) {
  return name.rfind("Wait ", 0) == 0;
}

TraceEvent item(std::string name, int lane, int64_t start_us, int64_t end_us,
                std::string category) {
  return TraceEvent{std::move(name), lane, start_us, end_us, std::move(category)};
}

TEST(WaitExposureTest, AWaitIsExposedOnlyWhereNoStreamComputes) {
  // Stream 1 waits 0..10 ms for the collective while stream 2 computes
  // 2..6 ms: 6 of the 10 ms are exposed.
  const std::vector<TraceEvent> events = {
      item("Wait Communication 3", 1, 0, 10'000, "wait"),
      item("linear", 2, 2'000, 6'000, "compute"),
  };
  const RunExposure run = measureWaitExposure(events, kFirstLinkLane, isCollectiveWait);
  ASSERT_EQ(run.waits.size(), 1u);
  EXPECT_EQ(run.waits[0].name, "Wait Communication 3");
  EXPECT_EQ(run.waits[0].waits, 1);
  EXPECT_DOUBLE_EQ(run.waits[0].waited_ms, 10.0);
  EXPECT_DOUBLE_EQ(run.waits[0].exposed_ms, 6.0);
  EXPECT_DOUBLE_EQ(run.compute_ms, 4.0);
  EXPECT_DOUBLE_EQ(run.span_ms, 10.0);
  EXPECT_DOUBLE_EQ(run.exposed_ms, 6.0);
}

TEST(WaitExposureTest, ChunksOfOneCollectiveAddUpAndOverlappingWaitsCountOnceInTheTotal) {
  // Two chunks' waits of Communication 3 (in a loop), one wait of
  // Communication 7 overlapping the second; compute covers 4..5 ms.
  const std::vector<TraceEvent> events = {
      item("Wait Communication 3", 1, 0, 2'000, "wait"),
      item("Wait Communication 3", 2, 3'000, 6'000, "wait"),
      item("Wait Communication 7", 1, 5'000, 8'000, "wait"),
      item("gelu", 3, 4'000, 5'000, "compute"),
  };
  const RunExposure run = measureWaitExposure(events, kFirstLinkLane, isCollectiveWait);
  ASSERT_EQ(run.waits.size(), 2u);
  EXPECT_EQ(run.waits[0].waits, 2);
  EXPECT_DOUBLE_EQ(run.waits[0].waited_ms, 5.0);
  EXPECT_DOUBLE_EQ(run.waits[0].exposed_ms, 4.0);
  EXPECT_EQ(run.waits[1].name, "Wait Communication 7");
  EXPECT_DOUBLE_EQ(run.waits[1].exposed_ms, 3.0);
  // 0..2, 3..8 less 4..5: 6 ms, not 4 + 3.
  EXPECT_DOUBLE_EQ(run.exposed_ms, 6.0);
}

TEST(WaitExposureTest, OtherWaitsAndTheLinksLanesAreNotCounted) {
  const std::vector<TraceEvent> events = {
      item("wait for the compute turn of linear", 1, 0, 5'000, "wait"),
      item("allgather in flight", kFirstLinkLane, 0, 9'000, "communication"),
      item("linear", kFirstLinkLane + 1, 0, 9'000, "compute"),
      item("Wait Communication 3", 1, 5'000, 7'000, "wait"),
  };
  const RunExposure run = measureWaitExposure(events, kFirstLinkLane, isCollectiveWait);
  ASSERT_EQ(run.waits.size(), 1u);
  EXPECT_DOUBLE_EQ(run.waits[0].exposed_ms, 2.0);
  EXPECT_DOUBLE_EQ(run.compute_ms, 0.0);
  EXPECT_DOUBLE_EQ(run.span_ms, 7.0);
}

TEST(WaitExposureTest, ARunWithoutEventsHasNothingExposed) {
  const RunExposure run = measureWaitExposure({}, kFirstLinkLane, isCollectiveWait);
  EXPECT_TRUE(run.waits.empty());
  EXPECT_DOUBLE_EQ(run.exposed_ms, 0.0);
  EXPECT_DOUBLE_EQ(run.span_ms, 0.0);
}

}  // namespace
}  // namespace hostir::runtime
