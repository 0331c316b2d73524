// Work on the caller's stream runs inline on the calling thread until the
// program first leaves that stream (docs/streams.md, "Inline on the
// caller"). What a user can tell: such a run has no stream wait, so the
// stream timeout cannot cut a long computation short; a failure reads as
// the caller's stream failing, as before; and a program that moves on to
// worker streams afterwards still orders them after the inline work.

#include <chrono>

#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

using std::chrono::milliseconds;

// Before: the one segment went to the caller stream's worker and the host
// waited for it, so a run longer than the stream timeout raised "timed out".
TEST(InlineOnTheCaller, AOneStreamRunHasNoWaitToTimeOut) {
  Fusion fusion;
  buildLongSegmentFusion(fusion, /*on_worker_streams=*/false);
  HostExecutor executor(fusion);
  ASSERT_FALSE(exprsOfKind<PostOnStream>(executor.hostProgram()).empty())
      << executor.hostProgram().toString();
  at::Tensor x = at::randn({1500, 1500});
  at::Tensor expected = x;
  for (int i = 0; i < 12; ++i) {
    expected = i % 2 == 0 ? at::exp(-expected) : at::sigmoid(expected);
  }
  ScopedWaitTimeout short_timeout(milliseconds(1));
  EXPECT_TRUE(allClose(executor.run({x})[0], expected));
}

// The inline failure gives the message the caller's stream (stream 0) gave.
TEST(InlineOnTheCaller, AFailureNamesTheCallersStream) {
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  hic->addInput(a);
  hic->addInput(b);
  TensorView* product = matmul(a, b);
  hic->pushBackTopLevelExpr(product->definition());
  hic->addOutput(product);
  HostIrEvaluator evaluator(std::move(hic));
  std::string message = errorMessage([&] {
    evaluator.run({at::randn({2, 3}), at::randn({4, 5})});
  });
  EXPECT_EQ(message.find("mat1 and mat2 shapes cannot be multiplied"), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"(stream 0 failed running", "= matmul("})) << message;
  // The evaluator stays usable.
  at::Tensor x = at::randn({2, 3});
  at::Tensor y = at::randn({3, 4});
  EXPECT_TRUE(allClose(evaluator.run({x, y})[0], at::matmul(x, y)));
}

// Inline work first, then a worker stream that synchronizes with the
// caller's stream and reads what the inline work wrote.
TEST(InlineOnTheCaller, WorkAfterTheSwitchSeesTheInlineResults) {
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* x = makeContigTensor(2);
  hic->addInput(x);
  TensorView* doubled = mul(x, 2.0);
  hic->pushBackTopLevelExpr(doubled->definition());  // inline, on the caller
  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  hic->pushBackTopLevelExpr(get_caller);
  auto* worker = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}));
  hic->pushBackTopLevelExpr(IrBuilder::create<SetCurrentStream>(worker));
  hic->pushBackTopLevelExpr(IrBuilder::create<Synchronize>(get_caller->stream()));
  TensorView* shifted = add(doubled, 1.0);
  hic->pushBackTopLevelExpr(shifted->definition());  // on the worker
  hic->pushBackTopLevelExpr(IrBuilder::create<SetCurrentStream>(get_caller->stream()));
  hic->pushBackTopLevelExpr(IrBuilder::create<Synchronize>(worker));
  TensorView* result = mul(shifted, 3.0);
  hic->pushBackTopLevelExpr(result->definition());  // back on the caller, queued
  hic->addOutput(result);
  HostIrEvaluator evaluator(std::move(hic));
  for (int run = 0; run < 20; ++run) {
    at::Tensor in = at::randn({64, 64});
    EXPECT_TRUE(allClose(evaluator.run({in})[0], (in * 2 + 1) * 3));
  }
}

}  // namespace
}  // namespace hostir::test
