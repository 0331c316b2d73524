// The stream side of a run (runtime/stream_scheduler.h) on its own, through
// its narrow interface: what the evaluator asks of it when it interprets
// SetCurrentStream, Synchronize and compute.

#include <atomic>
#include <thread>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/stream_scheduler.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

std::shared_ptr<const std::string> labelOf(const std::string& text) {
  return std::make_shared<const std::string>(text);
}

class StreamSchedulerTest : public ::testing::Test {
 protected:
  HostIrContainer program_;
  FusionGuard guard_{&program_};
  ExpressionEvaluator ee_;
  runtime::StreamPool pool_{2};
  StreamScheduler scheduler_{pool_};
};

TEST_F(StreamSchedulerTest, ComputeRunsInlineUntilTheRunLeavesTheCallersStream) {
  scheduler_.startRun({.number_of_streams = 2});
  EXPECT_EQ(&scheduler_.current(), &pool_.callerStream());
  std::thread::id ran_on;
  scheduler_.enqueueCompute(labelOf("first"), [&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id()) << "not run inline on the calling thread";

  // IR stream 1 is pool stream 2 (the caller's stream is pool stream 0).
  auto* worker = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}));
  scheduler_.switchTo(worker, ee_);
  EXPECT_EQ(&scheduler_.current(), &pool_.stream(2));
  std::atomic<bool> on_caller{true};
  scheduler_.enqueueCompute(labelOf("second"),
                            [&] { on_caller = std::this_thread::get_id() == ran_on; });
  scheduler_.finishRun();
  EXPECT_FALSE(on_caller) << "work on another stream ran on the calling thread";
}

TEST_F(StreamSchedulerTest, SynchronizeMakesTheCurrentStreamWaitForTheOther) {
  scheduler_.startRun({.number_of_streams = 2});
  auto* caller = IrBuilder::create<Stream>();
  scheduler_.bindCurrent(caller);
  auto* worker = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{0}));
  scheduler_.switchTo(worker, ee_);
  std::atomic<int> order{0};
  int first = -1;
  int second = -1;
  scheduler_.enqueueCompute(labelOf("slow"), [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    first = order++;
  });
  scheduler_.switchTo(caller, ee_);
  EXPECT_EQ(&scheduler_.current(), &pool_.callerStream());
  scheduler_.synchronizeWith(worker, ee_);
  scheduler_.enqueueCompute(labelOf("after"), [&] { second = order++; });
  scheduler_.finishRun();
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 1);
}

TEST_F(StreamSchedulerTest, ARunThatCommunicatesWaitsAlsoForTheCommunicationTimeout) {
  scheduler_.startRun({.number_of_streams = 2,
                       .communicates = true,
                       .communication_timeout = std::chrono::milliseconds(7000)});
  EXPECT_EQ(scheduler_.waitTimeout(), runtime::defaultWaitTimeout() + runtime::WaitTimeout(7000));
  // Not inline: a communicating run orders its streams from the start.
  std::atomic<bool> on_caller{true};
  const std::thread::id caller = std::this_thread::get_id();
  scheduler_.enqueueCompute(labelOf("op"),
                            [&] { on_caller = std::this_thread::get_id() == caller; });
  scheduler_.finishRun();
  EXPECT_FALSE(on_caller);
  scheduler_.startRun({.number_of_streams = 2});
  EXPECT_EQ(scheduler_.waitTimeout(), runtime::defaultWaitTimeout());
}

TEST_F(StreamSchedulerTest, SkippedComputeEnqueuesNothing) {
  scheduler_.startRun({.number_of_streams = 2, .skip_compute = true});
  bool ran = false;
  scheduler_.enqueueCompute(labelOf("op"), [&] { ran = true; });
  scheduler_.finishRun();
  EXPECT_FALSE(ran);
}

TEST_F(StreamSchedulerTest, AStreamNeitherBoundNorIndexedIsRefused) {
  scheduler_.startRun({.number_of_streams = 2});
  auto* unbound = IrBuilder::create<Stream>();
  EXPECT_HOSTIR_ERROR(scheduler_.switchTo(unbound, ee_),
                      {"is not bound: get it with GetCurrentStream or give it an index"});
  auto* negative = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{-1}));
  EXPECT_HOSTIR_ERROR(scheduler_.synchronizeWith(negative, ee_),
                      {"evaluates to index -1; stream indices must be non-negative"});
}

}  // namespace
}  // namespace hostir::test
