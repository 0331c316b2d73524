// The tensor-memory counter behind the peak memory of a training step
// (`hostir sp-mlp --train`, hostir.memory): bytes allocated through c10's CPU
// allocator, alive at once, above those alive before.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "hostir/ir/encoding.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/pack_cache.h"
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

// The buffer pool's blocks of 2 MiB or more are its own allocations, aligned
// for huge pages (newPoolMemory), not c10's: a lease of one counts all the
// same, or a step's peak would leave out every pooled intermediate. Back in
// the pool's reserve, the block is nobody's tensor: it counts no more, as
// the memory malloc keeps for later does not (the pool says how much it
// keeps: reserveBytes).
TEST(TensorMemoryTest, ThePoolsLeasedBlocksCountAsTensorMemoryItsReserveDoesNot) {
  runtime::countTensorMemory();
  BufferPool pool;
  const int64_t live = runtime::liveTensorBytes();
  const int64_t peak = runtime::peakTensorBytesOf([&] {
    at::Tensor block = pool.take({3 * kMiB / 4}, at::kFloat);  // 3 MiB
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data_ptr()) % BufferPool::kHugePageBytes, 0u);
    block.fill_(1.0F);
    EXPECT_EQ(runtime::liveTensorBytes(), live + 3 * kMiB);
  });
  EXPECT_EQ(peak, 3 * kMiB);
  EXPECT_EQ(runtime::liveTensorBytes(), live) << "let go: in the reserve, not a tensor's";
  EXPECT_EQ(pool.reserveBytes(), 3 * kMiB);
  {
    at::Tensor again = pool.take({3 * kMiB / 4}, at::kFloat);
    EXPECT_EQ(runtime::liveTensorBytes(), live + 3 * kMiB) << "leased again";
  }
  pool.release();
  EXPECT_EQ(pool.reserveBytes(), 0);
  EXPECT_EQ(runtime::liveTensorBytes(), live);
}

TEST(TensorMemoryTest, TheTraceListsWhatIsAliveAtThePeakBySiteAndTensor) {
  runtime::traceTensorMemory(true);
  const std::string outer = "backward", forward = "forward",
                    inner = "T7_l_float[iS0{i0}]\n   = matmul( T6, T2 )";
  at::Tensor kept;
  const int64_t peak = runtime::peakTensorBytesOf([&] {
    const runtime::AllocationSite in_backward(&outer);
    kept = at::empty({2 * kMiB / 4});  // 2 MiB, alive to the end
    runtime::nameTensorMemory(kept.storage().data(), "T3");
    {
      const runtime::AllocationSite in_matmul(&inner, runtime::AllocationSite::Kind::kWorkItem);
      runtime::nameTensorMemory(kept.storage().data(), "T4");  // the same caller binds it
      const runtime::AllocationSite in_forward(&forward);
      runtime::nameTensorMemory(kept.storage().data(), "T5");  // another caller binds it
      at::Tensor dropped = at::empty({4 * kMiB / 4});          // the peak: 6 MiB
      runtime::nameTensorMemory(dropped.storage().data(), "T7");
      runtime::nameTensorMemory(dropped.storage().data(), "T7");  // named once
    }
    const runtime::AllocationSite none(nullptr);             // adds nothing
    at::Tensor later = at::empty({3 * kMiB / 4});            // 5 MiB: not the peak
    runtime::nameTensorMemory(kept.storage().data(), "T9");  // after the peak
  });
  runtime::traceTensorMemory(false);
  EXPECT_EQ(peak, 6 * kMiB);
  const std::vector<runtime::LiveAllocation> live = runtime::liveAtPeak();
  ASSERT_EQ(live.size(), 2U);
  EXPECT_EQ(live[0].bytes, 4 * kMiB);
  EXPECT_EQ(live[0].site, "backward > T7_l_float[iS0{i0}] = matmul( T6, T2 ) > forward");
  EXPECT_EQ(live[0].tensors, "T7");
  EXPECT_EQ(live[1].bytes, 2 * kMiB);
  EXPECT_EQ(live[1].site, "backward");
  EXPECT_EQ(live[1].tensors, "T3 T4 backward > forward: T5");
  const std::string described = runtime::describeLiveAtPeak();
  EXPECT_NE(described.find("4.0 MiB   1 x  backward > T7_l_float[iS0{i0}] = matmul( T6, T2 ) > "
                           "forward: T7"),
            std::string::npos)
      << described;
  EXPECT_NE(described.find("6.0 MiB in all"), std::string::npos) << described;
}

TEST(TensorMemoryTest, WithoutTracingNoSiteIsRecorded) {
  runtime::traceTensorMemory(false);
  const std::string site = "forward";
  runtime::peakTensorBytesOf([&] {
    const runtime::AllocationSite in_forward(&site);
    at::Tensor buffer = at::empty({kMiB / 4});
  });
  EXPECT_TRUE(runtime::liveAtPeak().empty());
}

// A GEMM's computed right operand is packed and kept with a plain snapshot
// in the pack cache; once the operand's memory is gone the entry is stale,
// but packMatmulRhsCached frees it only at its next call. Measured from
// there, a step would have that memory subtracted from its peak (the MLP
// training step's figure was 96 MiB low); dropStalePackCacheEntries frees
// it before the step.
TEST(TensorMemoryTest, StalePackCacheEntriesAreFreedBeforeAStepIsMeasured) {
  runtime::countTensorMemory();
  const Layout blocked = Layout::dnnlBlocked(64, /*n_axis=*/0);
  dropStalePackCacheEntries();
  const int64_t entries = packCacheEntries();
  const int64_t live = runtime::liveTensorBytes();
  {
    at::Tensor operand = at::randn({256, 1024});  // 1 MiB, computed per step
    packMatmulRhsCached(operand, blocked);
  }
  EXPECT_EQ(packCacheEntries(), entries + 1) << "stale, not dropped yet";
  EXPECT_GE(runtime::liveTensorBytes() - live, 2 * kMiB) << "its packing and snapshot";
  EXPECT_EQ(dropStalePackCacheEntries(), 1);
  EXPECT_EQ(packCacheEntries(), entries);
  // The packing's memory is the buffer pool's (packMatmulRhs), which the
  // measure lets go of too.
  BufferPool::shared().release();
  EXPECT_EQ(runtime::liveTensorBytes(), live);
}

}  // namespace
}  // namespace hostir::test
