// Deferred memory (deferred_memory.h): a host program's large buffers get
// their memory when a stream reaches the work that uses them, not when the
// host walks past, so a run holds what its streams need at once, not every
// buffer the host has decided so far (docs/training.md, "Peak memory of a
// step").

#include <chrono>
#include <future>
#include <thread>

#include "common/scoped_env.h"
#include "host_ir_eval/host_ir_eval_test_utils.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/pack_cache.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/run_buffers.h"
#include "hostir/runtime/tensor_memory.h"

namespace hostir::test {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// A view made before the memory exists runs over it once the storage is
// materialized, through any view; writes are counted until the memory
// leaves the program.
TEST(DeferredMemoryTest, ViewsMadeBeforeTheMemoryRunOverIt) {
  for (BufferPool* pool : {static_cast<BufferPool*>(nullptr), &BufferPool::shared()}) {
    at::Tensor buffer = deferredEmpty({512, 1024}, at::kFloat, pool);
    at::Tensor rows = buffer.narrow(0, 256, 256);
    at::Tensor transposed = buffer.t();
    EXPECT_TRUE(isDeferred(buffer));
    EXPECT_TRUE(isDeferred(rows));
    EXPECT_FALSE(runBufferWrites(buffer.storage().unsafeGetStorageImpl()).has_value());

    materialize(rows, /*written=*/true);
    EXPECT_FALSE(isDeferred(buffer));
    rows.fill_(2.0F);
    buffer.narrow(0, 0, 256).fill_(1.0F);
    EXPECT_EQ(transposed.sum().item<double>(), 3.0 * 256 * 1024);
    EXPECT_EQ(rows.data_ptr<float>(), buffer.data_ptr<float>() + 256 * 1024);
    EXPECT_EQ(runBufferWrites(buffer.storage().unsafeGetStorageImpl()), 1);
    materialize(transposed);  // read: not counted, the memory stays
    EXPECT_EQ(runBufferWrites(buffer.storage().unsafeGetStorageImpl()), 1);
    EXPECT_EQ(rows.data_ptr<float>(), buffer.data_ptr<float>() + 256 * 1024);

    markEscaped(buffer);
    EXPECT_FALSE(runBufferWrites(buffer.storage().unsafeGetStorageImpl()).has_value());
  }
  at::Tensor ordinary = at::ones({4});
  materialize(ordinary, /*written=*/true);
  EXPECT_FALSE(isDeferred(ordinary));
  EXPECT_FALSE(runBufferWrites(ordinary.storage().unsafeGetStorageImpl()).has_value());
}

using DeferredRunTest = HostIrEvalTest;

// A chain of sixteen ops on 4 MiB tensors on a worker stream, the stream
// held back until the host has walked the whole program (as a busy stream
// would be): each buffer is needed only from its op to the next. Allocated
// by the host as it walked past, all sixteen were alive at once (64 MiB);
// deferred, the run holds two or three at a time, whether the pool is on or
// off.
TEST_F(DeferredRunTest, ARunHoldsWhatItsStreamNeedsNotWhatTheHostDecided) {
  constexpr int kOps = 8;
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  push(get_caller);
  auto* worker = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{0}));
  push(IrBuilder::create<SetCurrentStream>(worker));
  TensorView* value = in;
  for (int op = 0; op < kOps; ++op) {
    value = add(mul(value, 0.5), 1.0);
    push(value->definition()->input(0)->definition());
    push(value->definition());
  }
  push(IrBuilder::create<SetCurrentStream>(get_caller->stream()));
  push(IrBuilder::create<Synchronize>(worker));
  hic().addOutput(value);
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/1);

  runtime::countTensorMemory();
  const at::Tensor x = at::randn({1024, 1024});  // 4 MiB
  at::Tensor expected = x;
  for (int op = 0; op < kOps; ++op) {
    expected = expected * 0.5 + 1.0;
  }
  for (const char* pool_mb : {"2048", "0"}) {
    ScopedEnv pool("HOSTIR_BUFFER_POOL_MB", pool_mb);
    BufferPool::shared().release();
    std::promise<void> host_done;
    std::shared_future<void> released = host_done.get_future().share();
    hie.streamPool().stream(1).enqueue("held back",
                                       [released] { released.wait_for(std::chrono::seconds(10)); });
    std::thread release([&host_done] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      host_done.set_value();
    });
    std::vector<at::Tensor> outputs;
    const int64_t peak = runtime::peakTensorBytesOf([&] { outputs = hie.run({x}); });
    release.join();
    EXPECT_TRUE(allClose(outputs.at(0), expected)) << "pool " << pool_mb;
    // Two ops' buffers (an op's input and its output) and a third being let
    // go; the output is one of them.
    EXPECT_LE(peak, 3 * x.nbytes()) << "pool " << pool_mb << " MiB: " << peak / kMiB
                                    << " MiB alive at once, of " << 2 * kOps << " buffers";
  }
}

// A zero-initialized buffer (Allocate zero_init, a padded gather's) is
// deferred like any other: its memory is the pool's, taken and zeroed by the
// first work item that touches it, not zeroed by the host over fresh pages
// as it walks past. The pool's buffer held an earlier run's data: it comes
// back zero.
TEST_F(DeferredRunTest, AZeroInitBufferIsDeferredAndZeroedOverPooledMemory) {
  ScopedEnv pool_on("HOSTIR_BUFFER_POOL_MB", "2048");
  TensorView* tv = makeContigTensor(2);
  hic().addInput(tv);
  RunBuffers buffers(hic());
  BufferPool::shared().release();
  void* earlier = nullptr;
  {
    at::Tensor used = BufferPool::shared().take({512, 1024}, at::kFloat);  // 2 MiB
    used.fill_(7.0F);
    earlier = used.data_ptr();
  }
  buffers.startRun();
  at::Tensor zeros = buffers.allocate(tv, {512, 1024}, std::nullopt, /*zero_init=*/true);
  EXPECT_TRUE(isDeferred(zeros)) << "the host made and zeroed its memory";
  materialize(zeros.narrow(0, 256, 16), /*written=*/true);
  EXPECT_FALSE(isDeferred(zeros));
  EXPECT_EQ(zeros.data_ptr(), earlier) << "not the pool's buffer";
  EXPECT_TRUE(at::equal(zeros, at::zeros({512, 1024})));
  // Below BufferPool::kMinBytes: plain zeros at once.
  at::Tensor small = buffers.allocate(tv, {4, 4}, std::nullopt, /*zero_init=*/true);
  EXPECT_FALSE(isDeferred(small));
  EXPECT_TRUE(at::equal(small, at::zeros({4, 4})));
}

// A GEMM's computed right operand, a buffer of the running program, is
// cached without a plain snapshot: its writes are counted instead. Unchanged,
// the packing is reused without comparing bits; written, it is packed again.
TEST(DeferredMemoryTest, AProgramBuffersPackingNeedsNoSnapshot) {
  runtime::countTensorMemory();
  const Layout blocked = Layout::dnnlBlocked(64, /*n_axis=*/0);
  at::Tensor operand = deferredEmpty({256, 1024}, at::kFloat, nullptr);  // 1 MiB
  materialize(operand, /*written=*/true);
  operand.copy_(at::randn({256, 1024}));
  dropStalePackCacheEntries();
  const int64_t live = runtime::liveTensorBytes();
  at::Tensor packed = packMatmulRhsCached(operand, blocked);
  EXPECT_LT(runtime::liveTensorBytes() - live, 2 * operand.nbytes()) << "a snapshot was kept";
  const int64_t comparisons = packCacheComparisons();
  const int64_t hits = packCacheHits();
  EXPECT_TRUE(packMatmulRhsCached(operand, blocked).is_same(packed));
  EXPECT_EQ(packCacheHits(), hits + 1);
  EXPECT_EQ(packCacheComparisons(), comparisons) << "no bits compared";

  materialize(operand, /*written=*/true);  // a work item writes it
  operand.copy_(at::randn({256, 1024}));
  at::Tensor again = packMatmulRhsCached(operand, blocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(again, blocked, {256, 1024}), operand))
      << "the packing of the old bits was served";

  markEscaped(operand);  // a run's output: the caller may write it unseen
  operand.copy_(at::randn({256, 1024}));
  at::Tensor escaped = packMatmulRhsCached(operand, blocked);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(escaped, blocked, {256, 1024}), operand));
}

}  // namespace
}  // namespace hostir::test
