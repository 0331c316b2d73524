// The tensor-memory counter behind the peak memory of a training step
// (`hostir sp-mlp --train`, hostir.memory): bytes allocated through c10's CPU
// allocator, alive at once, above those alive before.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "hostir/runtime/tensor_memory.h"

namespace hostir::test {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(TensorMemoryTest, ThePeakCountsWhatWasAliveAtOnce) {
  const at::Tensor before = at::empty({kMiB / 4});  // may predate counting: not in the peak
  const int64_t peak = runtime::peakTensorBytesOf([] {
    at::Tensor kept = at::empty({2 * kMiB / 4});         // 2 MiB, alive to the end
    { at::Tensor dropped = at::empty({4 * kMiB / 4}); }  // 4 MiB, then freed
    at::Tensor again = at::empty({3 * kMiB / 4});        // 3 MiB: 5 alive, less than 6
  });
  EXPECT_EQ(peak, 6 * kMiB);
  EXPECT_TRUE(runtime::countingTensorMemory());
  // Everything made inside is freed again; memory made before counting
  // started is freed uncounted.
  const int64_t live = runtime::liveTensorBytes();
  { at::Tensor more = at::empty({kMiB / 4}); }
  EXPECT_EQ(runtime::liveTensorBytes(), live);
}

TEST(TensorMemoryTest, ScratchMemoryOfAtenKernelsIsFreedThroughTheCounter) {
  runtime::countTensorMemory();
  // gelu's TensorIterator may take scratch memory with raw_allocate, whose
  // DataPtr must keep its address as its context.
  at::Tensor x = at::randn({512, 1024});
  const int64_t peak = runtime::peakTensorBytesOf([&] { at::gelu(x.t()).sum(); });
  EXPECT_GE(peak, 2 * kMiB);
}

}  // namespace
}  // namespace hostir::test
