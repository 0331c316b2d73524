// The kernel cache locks per key (issue 40): distinct kernels compile at
// once on several threads, a second caller of a key in flight waits for the
// first and shares its kernel or its error, and the compile stage compiles a
// program's distinct kernels in parallel. Overlap is proven by a rendezvous
// inside the compile (KernelCacheHooks), not by timing: with one lock held
// while compiling, the second compile could not start while the first waits,
// and the rendezvous would time out.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "fresh_cache_dir.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

// x * factor + 1: one kernel per factor.
std::unique_ptr<Fusion> scaledPlusOne(double factor) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(add(mul(x, factor), 1.0));
  return fusion;
}

// Threads meet here: each arrival counts; arriveAndWait blocks until
// `expected` have arrived, or a minute passed (a failing test does not
// hang), and says whether they all did.
class Rendezvous {
 public:
  explicit Rendezvous(int expected) : expected_(expected) {}

  void arrive() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++arrived_;
    all_arrived_.notify_all();
  }

  bool arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    all_arrived_.notify_all();
    return all_arrived_.wait_for(lock, std::chrono::minutes(1),
                                 [&] { return arrived_ >= expected_; });
  }

 private:
  const int expected_;
  int arrived_ = 0;
  std::mutex mutex_;
  std::condition_variable all_arrived_;
};

// Installs hooks on the global kernel cache for one test.
class WatchedCache {
 public:
  explicit WatchedCache(KernelCacheHooks hooks) {
    KernelCache::global().setHooksForTesting(std::move(hooks));
  }
  ~WatchedCache() {
    KernelCache::global().setHooksForTesting({});
  }
  WatchedCache(const WatchedCache&) = delete;
  WatchedCache& operator=(const WatchedCache&) = delete;
};

struct CompileResult {
  std::unique_ptr<CompiledSegment> segment;
  std::string why_not;
};

CompileResult compileSegment(const Fusion& fusion) {
  CompileResult result;
  result.segment = CompiledSegment::compile(fusion, &result.why_not);
  return result;
}

// Hooks that hold each compile at `rendezvous` and count in `met` the
// compiles that met another there.
KernelCacheHooks countMeetingsInsideTheCompile(Rendezvous& rendezvous, std::atomic<int>& met) {
  return {.compiling =
              [&](const std::string&) {
                if (rendezvous.arriveAndWait()) {
                  ++met;
                }
              },
          .waiting = nullptr};
}

TEST(KernelCacheConcurrencyTest, TwoDistinctKernelsCompileAtOnce) {
  FreshCacheDir cache;
  std::atomic<int> met{0};
  Rendezvous both_compiling(2);
  WatchedCache watched(countMeetingsInsideTheCompile(both_compiling, met));
  auto doubled = scaledPlusOne(2.0);
  auto tripled = scaledPlusOne(3.0);
  const int compiled_before = KernelCache::global().compiled();
  CompileResult first;
  std::thread other([&] { first = compileSegment(*doubled); });
  CompileResult second = compileSegment(*tripled);
  other.join();
  EXPECT_EQ(met.load(), 2) << "the two compiles did not overlap: one waited for the other";
  ASSERT_NE(first.segment, nullptr) << first.why_not;
  ASSERT_NE(second.segment, nullptr) << second.why_not;
  EXPECT_NE(first.segment->kernel().hash(), second.segment->kernel().hash());
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 2);
}

TEST(KernelCacheConcurrencyTest, ASecondCallerOfAKeyInFlightWaitsAndSharesTheKernel) {
  FreshCacheDir cache;
  Rendezvous waiter_arrived(2);
  std::atomic<int> compiles{0};
  std::atomic<bool> waiter_seen{false};
  WatchedCache watched({.compiling =
                            [&](const std::string&) {
                              ++compiles;
                              // Hold the compile until the other caller waits on it.
                              waiter_seen = waiter_arrived.arriveAndWait();
                            },
                        .waiting = [&](const std::string&) { waiter_arrived.arrive(); }});
  auto fusion = scaledPlusOne(2.0);
  auto same = scaledPlusOne(2.0);  // the same canonical form: one key
  const int compiled_before = KernelCache::global().compiled();
  CompileResult first;
  std::thread other([&] { first = compileSegment(*fusion); });
  CompileResult second = compileSegment(*same);
  other.join();
  EXPECT_TRUE(waiter_seen.load()) << "no caller waited on the compile in flight";
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 1);
  ASSERT_NE(first.segment, nullptr) << first.why_not;
  ASSERT_NE(second.segment, nullptr) << second.why_not;
  EXPECT_EQ(&first.segment->kernel(), &second.segment->kernel()) << "one kernel, shared";
}

TEST(KernelCacheConcurrencyTest, AFailedCompileReachesEveryWaiterAndIsNotKept) {
  FreshCacheDir cache;
  auto fusion = scaledPlusOne(2.0);
  auto same = scaledPlusOne(2.0);
  const int compiled_before = KernelCache::global().compiled();
  {
    Rendezvous waiter_arrived(2);
    WatchedCache watched({.compiling =
                              [&](const std::string& hash) {
                                waiter_arrived.arriveAndWait();
                                HOSTIR_THROW("an injected engine failure for kernel ", hash);
                              },
                          .waiting = [&](const std::string&) { waiter_arrived.arrive(); }});
    CompileResult first;
    std::thread other([&] { first = compileSegment(*fusion); });
    CompileResult second = compileSegment(*same);
    other.join();
    for (const CompileResult* result : {&first, &second}) {
      EXPECT_EQ(result->segment, nullptr);
      EXPECT_NE(result->why_not.find("the kernel failed to compile: an injected engine failure"),
                std::string::npos)
          << result->why_not;
    }
    EXPECT_EQ(KernelCache::global().compiled(), compiled_before);
  }
  // The failure was not kept as the key's kernel: the next caller compiles.
  CompileResult retried = compileSegment(*fusion);
  ASSERT_NE(retried.segment, nullptr) << retried.why_not;
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 1);
}

// (2a + 1) @ a, then * 3 + 1: two kernels on either side of an ATen matmul
// (a lone op is no segment of its own). Only compiled, never run.
std::unique_ptr<Fusion> kernelsAroundAMatmul() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addOutput(add(mul(matmul(add(mul(a, 2.0), 1.0), a), 3.0), 1.0));
  return fusion;
}

TEST(KernelCacheConcurrencyTest, TheCompileStageCompilesAProgramsKernelsInParallel) {
  FreshCacheDir cache;
  std::atomic<int> met{0};
  Rendezvous both_compiling(2);
  WatchedCache watched(countMeetingsInsideTheCompile(both_compiling, met));
  auto fusion = kernelsAroundAMatmul();
  const int compiled_before = KernelCache::global().compiled();
  HostExecutor executor(*fusion);
  int kernels = 0;
  for (const HostUnit* unit : executor.hostProgram().postedHostUnits()) {
    kernels += unit->engine()->kind == SegmentEngineKind::Kernel ? 1 : 0;
  }
  ASSERT_EQ(kernels, 2) << executor.hostProgram().toString();
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 2);
  // One thread per core: a machine with one compiles them one after another.
  const int parallel = std::thread::hardware_concurrency() >= 2 ? 2 : 0;
  EXPECT_EQ(met.load(), parallel) << "the kernels were compiled one after another";
}

}  // namespace
}  // namespace hostir::test
