// Issue 11, items 1 and 2: several threads calling run on one executor, and
// destroying an executor while its streams still hold work (after a
// timeout, after a failure, with work queued).

#include <atomic>
#include <chrono>
#include <string>

#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

using std::chrono::milliseconds;

// out = relu(x + x * w_row) with a Stream axis on the rows, then a
// stream-chunked matmul with `b`: views, allocations, loops and streams,
// all of which are per-run state of the evaluator.
void buildPipelinedFusion(Fusion& fusion) {
  FusionGuard guard(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addInput(b);
  TensorView* scaled = mul(x, broadcast(w, {true, false}));
  TensorView* summed = add(x, scaled);
  summed->axis(0)->parallelize(ParallelType::Stream);
  scaled->axis(0)->parallelize(ParallelType::Stream);
  TensorView* product = matmul(summed, b);
  product->split(0, 3, /*inner_split=*/false);
  product->axis(0)->parallelize(ParallelType::Stream);
  fusion.addOutput(product);
  fusion.addOutput(summed);
}

at::Tensor expectedProduct(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::matmul(x + x * w.unsqueeze(0), b);
}

TEST(ConcurrentRuns, ThreadsSharingOneHostExecutorEachGetTheirOwnResult) {
  Fusion fusion;
  buildPipelinedFusion(fusion);
  HostExecutor executor(fusion, HostIrEvaluatorParams{.number_of_streams = 3});

  constexpr int kThreads = 6;
  constexpr int kRunsPerThread = 25;
  std::atomic<int> wrong{0};
  std::atomic<int> failed{0};
  onThreads(kThreads, [&](int thread) {
    for (int run = 0; run < kRunsPerThread; ++run) {
      // Each thread (and run) has its own shapes and values.
      const int64_t rows = 5 + thread + run % 3;
      at::Tensor x = at::full({rows, 8}, static_cast<float>(thread + 1)) +
                     at::arange(rows * 8, at::kFloat).view({rows, 8}) * 0.01f;
      at::Tensor w = at::full({8}, static_cast<float>(run % 4));
      at::Tensor b = at::eye(8).narrow(1, 0, 4 + thread % 3).contiguous();
      try {
        std::vector<at::Tensor> outs = executor.run({x, w, b});
        if (!at::allclose(outs[0], expectedProduct(x, w, b), 1e-4, 1e-5) ||
            !at::allclose(outs[1], x + x * w.unsqueeze(0))) {
          ++wrong;
        }
      } catch (const std::exception& error) {
        ADD_FAILURE() << "thread " << thread << " run " << run << ": " << error.what();
        ++failed;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
}

TEST(ConcurrentRuns, AFailingRunDoesNotDisturbAnotherThreadsRun) {
  Fusion fusion;
  buildPipelinedFusion(fusion);
  HostExecutor executor(fusion);
  std::atomic<int> wrong{0};
  std::atomic<int> errors{0};
  onThreads(4, [&](int thread) {
    for (int run = 0; run < 20; ++run) {
      at::Tensor x = at::randn({6, 8});
      at::Tensor w = at::randn({8});
      // Odd threads pass a b whose rows do not match x's columns.
      at::Tensor b = at::randn({thread % 2 == 0 ? 8 : 7, 5});
      try {
        std::vector<at::Tensor> outs = executor.run({x, w, b});
        if (thread % 2 != 0 || !at::allclose(outs[0], expectedProduct(x, w, b), 1e-4, 1e-5)) {
          ++wrong;
        }
      } catch (const Error& error) {
        if (thread % 2 == 0) {
          ADD_FAILURE() << error.what();
        }
        ++errors;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 40);
}

TEST(ConcurrentRuns, ThreadsSharingOneHostIrEvaluator) {
  Fusion fusion;
  buildPipelinedFusion(fusion);
  HostIrEvaluator evaluator(lowerToHostIr(fusion));
  std::atomic<int> wrong{0};
  onThreads(4, [&](int thread) {
    for (int run = 0; run < 20; ++run) {
      at::Tensor x = at::randn({4 + thread, 8});
      at::Tensor w = at::randn({8});
      at::Tensor b = at::randn({8, 3});
      std::vector<at::Tensor> outs = evaluator.run({x, w, b});
      if (!at::allclose(outs[0], expectedProduct(x, w, b), 1e-4, 1e-5)) {
        ++wrong;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}


TEST(Destruction, DestroyingTheExecutorAfterAStreamTimeoutIsSafe) {
  Fusion fusion;
  buildLongSegmentFusion(fusion);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto executor = std::make_unique<HostExecutor>(fusion);
    ASSERT_FALSE(exprsOfKind<PostOnStream>(executor->hostProgram()).empty())
        << executor->hostProgram().toString();
    at::Tensor x = at::randn({1500, 1500});
    {
      ScopedWaitTimeout short_timeout(milliseconds(1));
      EXPECT_HOSTIR_ERROR(executor->run({x}), {"timed out"});
    }
    // The segment is still running on a stream: destroy everything now.
    executor.reset();
  }
}

TEST(Destruction, DestroyingTheExecutorWithWorkQueuedOnManyStreamsIsSafe) {
  Fusion fusion;
  buildPipelinedFusion(fusion);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto executor = std::make_unique<HostExecutor>(fusion);
    at::Tensor x = at::randn({64, 256});
    at::Tensor w = at::randn({256});
    at::Tensor b = at::randn({256, 512});
    {
      ScopedWaitTimeout short_timeout(milliseconds(1));
      try {
        executor->run({x, w, b});
      } catch (const Error&) {  // a timeout, or none on a fast machine
      }
    }
    executor.reset();
  }
}

TEST(Destruction, TheEvaluatorIsUsableAfterATimeout) {
  Fusion fusion;
  buildLongSegmentFusion(fusion);
  HostExecutor executor(fusion);
  at::Tensor x = at::randn({1500, 1500});
  {
    ScopedWaitTimeout short_timeout(milliseconds(1));
    EXPECT_HOSTIR_ERROR(executor.run({x}), {"timed out"});
  }
  at::Tensor small = at::randn({4, 4});
  at::Tensor expected = small;
  for (int i = 0; i < 12; ++i) {
    expected = i % 2 == 0 ? at::exp(-expected) : at::sigmoid(expected);
  }
  // The timed-out run's work drains first (it is ahead on the streams).
  EXPECT_TRUE(allClose(executor.run({small})[0], expected));
}

}  // namespace
}  // namespace hostir::test
