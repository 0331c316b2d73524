// Issue 22, items 6 and 7: what a run leaves behind when a stream worker
// cannot start, or when the host's wait for the workers times out.

#include <chrono>
#include <optional>
#include <thread>

#include "hostir/runtime/streams/stream_queue.h"
#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

using std::chrono::milliseconds;

// out = relu(x) * 2 with a Stream axis of 4 chunks: one worker per chunk's
// stream beside the caller's stream.
void buildStreamSplitFusion(Fusion& fusion) {
  FusionGuard guard(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* out = mul(relu(x), 2.0);
  out->split(0, 4, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(out);
}

// Restores unlimited worker starts however the test ends.
struct WorkerStartLimit {
  explicit WorkerStartLimit(int64_t starts) {
    runtime::limitWorkerStartsForTesting(starts);
  }
  ~WorkerStartLimit() {
    runtime::limitWorkerStartsForTesting(std::nullopt);
  }
  WorkerStartLimit(const WorkerStartLimit&) = delete;
  WorkerStartLimit& operator=(const WorkerStartLimit&) = delete;
};

// Before: the failed start left an empty slot in the stream pool, and the
// run's error path (synchronizeAll) dereferenced it: SIGSEGV. Now the run
// raises a hostir::Error naming the stream and the thread limit, and the
// executor runs correctly once threads can start again.
TEST(WorkerStartFailure, IsAnErrorAndTheExecutorStaysUsable) {
  Fusion fusion;
  buildStreamSplitFusion(fusion);
  HostExecutor executor(fusion, HostIrEvaluatorParams{.number_of_streams = 1000});
  at::Tensor x = at::randn({8, 5});
  {
    WorkerStartLimit limit(2);
    EXPECT_HOSTIR_ERROR(executor.run({x}), {"cannot start the worker thread of stream",
                                            "thread limit", "number_of_streams"});
  }
  EXPECT_TRUE(allClose(executor.run({x})[0], at::relu(x) * 2));
}

TEST(WorkerStartFailure, TheExecutorIsDestructibleAfterIt) {
  Fusion fusion;
  buildStreamSplitFusion(fusion);
  auto executor =
      std::make_unique<HostExecutor>(fusion, HostIrEvaluatorParams{.number_of_streams = 1000});
  WorkerStartLimit limit(1);
  EXPECT_HOSTIR_ERROR(executor->run({at::randn({8, 5})}), {"cannot start the worker thread"});
  executor.reset();
}


// Before: run raised at the timeout while the segment went on and wrote
// into the caller's output afterwards. Now, once run has raised, the
// output no longer changes.
TEST(TimedOutRun, NoWorkerWritesIntoTheCallersOutputAfterRunRaises) {
  Fusion fusion;
  buildLongSegmentFusion(fusion);
  HostExecutor executor(fusion);
  at::Tensor x = at::randn({1500, 1500});
  at::Tensor output = at::zeros({1500, 1500});
  {
    ScopedWaitTimeout short_timeout(milliseconds(1));
    EXPECT_HOSTIR_ERROR(executor.run({x}, {output}), {"timed out"});
  }
  at::Tensor when_raised = output.clone();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(at::equal(output, when_raised));
}

}  // namespace
}  // namespace hostir::test
