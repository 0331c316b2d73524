// The kernel cache: one kernel per canonical form, on disk across processes
// (two processes, and two at once), bad entries ignored with a warning.

#include <ATen/Parallel.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "common/scoped_env.h"
#include "fresh_cache_dir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/target_detection.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Fusion> scaledRowSums(double factor) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(sum(mul(x, factor), {1}));
  return fusion;
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[256];
  while (pipe != nullptr && fgets(buffer, sizeof(buffer), pipe) != nullptr) {
    output += buffer;
  }
  if (pipe != nullptr) {
    pclose(pipe);
  }
  return output;
}

std::vector<fs::path> kernelLibraries(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".so" && name.rfind("runtime-", 0) != 0) {
      found.push_back(entry.path());
    }
  }
  return found;
}

TEST(KernelCacheTest, CanonicalFormIgnoresNamesAndSizesButNotConstants) {
  auto first = scaledRowSums(2.0);
  Fusion padding;  // shifts the IR's name numbers of the next fusion
  {
    FusionGuard fg(&padding);
    padding.addInput(makeContigTensor(3));
  }
  auto second = scaledRowSums(2.0);
  auto third = scaledRowSums(2.5);
  EXPECT_EQ(analyzeSegment(*first).canonical, analyzeSegment(*second).canonical);
  EXPECT_NE(analyzeSegment(*first).canonical, analyzeSegment(*third).canonical);
}

TEST(KernelCacheTest, SecondProcessLoadsFromDiskWithoutCompiling) {
  FreshCacheDir dir;
  std::string probe = HOSTIR_KERNEL_CACHE_PROBE;
  EXPECT_EQ(run(probe), "compiled=1 loaded=0 ok=1\n");
  EXPECT_EQ(run(probe), "compiled=0 loaded=1 ok=1\n");
  EXPECT_EQ(kernelLibraries(dir.path()).size(), 1u);
}

TEST(KernelCacheTest, TwoProcessesCompilingTheSameKernelAtOnce) {
  FreshCacheDir dir;
  std::string probe = HOSTIR_KERNEL_CACHE_PROBE;
  std::string output = run("(" + probe + " & " + probe + " & wait) 2>&1");
  // One compiled; the other waited on the key's lock file (or came after)
  // and loaded its entry. Both ran correctly and the folder holds one
  // complete entry, no temporary files.
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 2) << output;
  EXPECT_NE(output.find("compiled=1 loaded=0 ok=1\n"), std::string::npos) << output;
  EXPECT_NE(output.find("compiled=0 loaded=1 ok=1\n"), std::string::npos) << output;
  EXPECT_EQ(output.find("ok=0"), std::string::npos) << output;
  EXPECT_EQ(output.find("warning"), std::string::npos) << output;
  EXPECT_EQ(kernelLibraries(dir.path()).size(), 1u);
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    EXPECT_NE(entry.path().filename().string().rfind(".tmp-", 0), 0u) << entry.path();
  }
}

// A corrupt library, or a key of another version, is ignored with a
// warning and replaced; the result is still right.
TEST(KernelCacheTest, BadEntriesAreIgnoredWithAWarningAndRecompiled) {
  FreshCacheDir dir;
  at::Tensor input = at::randn({16, 40});
  at::Tensor expected = (input * 3.0).sum(1);
  {
    FusionExecutor executor(scaledRowSums(3.0));
    EXPECT_TRUE(allClose(executor.run({input}).at(0), expected, 1e-5, 1e-5));
  }
  std::vector<fs::path> libraries = kernelLibraries(dir.path());
  ASSERT_EQ(libraries.size(), 1u);
  fs::path library = libraries[0];
  fs::path key = fs::path(library).replace_extension(".key");

  for (const char* damage : {"library", "key"}) {
    // Damaged through a new file renamed over the entry: this process still
    // has the old library mapped, and rewriting a mapped file in place
    // would fault it.
    fs::path replacement = dir.path() / "replacement";
    if (std::string(damage) == "library") {
      std::ofstream(replacement, std::ios::binary) << "not a shared library";
      fs::rename(replacement, library);
    } else {
      fs::copy_file(key, replacement);
      std::ofstream(replacement, std::ios::app) << "format:v0-somebody-else\n";
      fs::rename(replacement, key);
    }
    KernelCache::global().clearMemory();
    int compiled = KernelCache::global().compiled();
    ::testing::internal::CaptureStderr();
    FusionExecutor executor(scaledRowSums(3.0));
    at::Tensor out = executor.run({input}).at(0);
    std::string warnings = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(warnings.find("does not match its key"), std::string::npos) << damage << warnings;
    EXPECT_EQ(KernelCache::global().compiled(), compiled + 1) << damage;
    EXPECT_TRUE(allClose(out, expected, 1e-5, 1e-5)) << damage;
  }
}

// The lock file of the key about to compile, made and locked by `hold` (in
// the cache's `compiling` hook, so the compile's own lock comes after it).
void holdKeyLockWhenCompiling(const std::function<void(const fs::path&)>& hold) {
  KernelCache::global().setHooksForTesting({[hold](const std::string& hash) {
                                              fs::path dir = KernelCache::global().directory();
                                              fs::create_directories(dir);
                                              hold(dir / (hash + ".lock"));
                                            },
                                            nullptr});
}

// Another process holding a key's lock and hanging (alive, never releasing
// it) delays this process's compile only until HOSTIR_KERNEL_LOCK_TIMEOUT,
// then it compiles without the lock and says so. Without the timeout this
// test hangs.
TEST(KernelCacheTest, AHungHolderOfAKeysLockDelaysTheCompileOnlyUntilTheTimeout) {
  FreshCacheDir dir;
  ScopedEnv timeout("HOSTIR_KERNEL_LOCK_TIMEOUT", "1");
  int held = -1;  // another open file description: conflicts as another process's
  holdKeyLockWhenCompiling([&](const fs::path& lock) {
    held = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
    ASSERT_EQ(::write(held, "4242", 4), 4);
  });
  at::Tensor input = at::randn({16, 40});
  int compiled = KernelCache::global().compiled();
  auto start = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  FusionExecutor executor(scaledRowSums(6.0));
  at::Tensor out = executor.run({input}).at(0);
  std::string warnings = ::testing::internal::GetCapturedStderr();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  KernelCache::global().setHooksForTesting({});
  ::close(held);
  EXPECT_TRUE(allClose(out, (input * 6.0).sum(1), 1e-5, 1e-5));
  EXPECT_EQ(KernelCache::global().compiled(), compiled + 1);
  EXPECT_GE(seconds, 1.0);
  EXPECT_NE(warnings.find("is still held by process 4242 after 1 s"), std::string::npos)
      << warnings;
}

// A holder that dies (killed while compiling) releases the key's lock at
// once: the waiting compile goes on without waiting for the timeout, and
// without a warning.
TEST(KernelCacheTest, AKilledHolderOfAKeysLockReleasesItAtOnce) {
  FreshCacheDir dir;
  ScopedEnv timeout("HOSTIR_KERNEL_LOCK_TIMEOUT", "600");
  pid_t holder = -1;
  std::thread killer;
  holdKeyLockWhenCompiling([&](const fs::path& lock) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    holder = ::fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {  // only async-signal-safe calls in the child
      int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0 || ::flock(fd, LOCK_EX) != 0 || ::write(ready[1], "x", 1) != 1) {
        ::_exit(1);
      }
      ::pause();
      ::_exit(0);
    }
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);  // the child holds the lock
    ::close(ready[0]);
    ::close(ready[1]);
    killer = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(holder, SIGKILL);
    });
  });
  at::Tensor input = at::randn({16, 40});
  auto start = std::chrono::steady_clock::now();
  ::testing::internal::CaptureStderr();
  FusionExecutor executor(scaledRowSums(7.0));
  at::Tensor out = executor.run({input}).at(0);
  std::string warnings = ::testing::internal::GetCapturedStderr();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  KernelCache::global().setHooksForTesting({});
  killer.join();
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(allClose(out, (input * 7.0).sum(1), 1e-5, 1e-5));
  EXPECT_LT(seconds, 300.0);  // not the 600 s timeout
  EXPECT_EQ(warnings.find("warning"), std::string::npos) << warnings;
}

// A timeout that is not a number fails the compile with an error naming
// the variable (the segment then runs through ATen, with that warning).
TEST(KernelCacheTest, AKernelLockTimeoutThatIsNotANumberFailsTheCompile) {
  FreshCacheDir dir;
  ScopedEnv timeout("HOSTIR_KERNEL_LOCK_TIMEOUT", "soon");
  at::Tensor input = at::randn({4, 4});
  ::testing::internal::CaptureStderr();
  FusionExecutor executor(scaledRowSums(8.0));
  at::Tensor out = executor.run({input}).at(0);
  std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("HOSTIR_KERNEL_LOCK_TIMEOUT=soon is not a number of seconds"),
            std::string::npos)
      << warnings;
  EXPECT_TRUE(allClose(out, (input * 8.0).sum(1), 1e-5, 1e-5));
}

TEST(KernelCacheTest, DumpPrintsEachKernelsLoopNestOnce) {
  FreshCacheDir dir;
  ScopedEnv dump("HOSTIR_DUMP", "kernels");
  ::testing::internal::CaptureStdout();
  for (int i = 0; i < 2; ++i) {
    FusionExecutor executor(scaledRowSums(4.0));
    executor.run({at::randn({8, 8})});
  }
  std::string printed = ::testing::internal::GetCapturedStdout();
  size_t first = printed.find("=== kernel ");
  ASSERT_NE(first, std::string::npos) << printed;
  EXPECT_EQ(printed.find("=== kernel ", first + 1), std::string::npos) << "printed twice";
  EXPECT_NE(printed.find("produce out0"), std::string::npos) << printed;
  EXPECT_NE(printed.find("halide_do_par_for"), std::string::npos) << printed;
}

// A compiled kernel says where its compile went (each phase timed, their sum
// within the total); one loaded from the disk cache compiled nothing.
TEST(KernelCacheTest, ACompiledKernelReportsItsCompilePhases) {
  FreshCacheDir dir;
  auto fusion = scaledRowSums(5.0);
  KernelSignature signature = analyzeSegment(*fusion);
  KernelTarget target = kernelTargetFor(localTarget());
  std::shared_ptr<const CompiledKernel> compiled =
      KernelCache::global().get(*fusion, signature, target);
  ASSERT_FALSE(compiled->fromDisk());
  const KernelCompileTimes& times = compiled->compileTimes();
  for (double phase : {times.to_engine, times.engine_lowering, times.code_generation, times.link}) {
    EXPECT_GT(phase, 0.0);
  }
  EXPECT_LE(times.to_engine + times.engine_lowering + times.code_generation + times.link +
                times.engine_runtime,
            compiled->seconds());

  KernelCache::global().clearMemory();
  std::shared_ptr<const CompiledKernel> loaded =
      KernelCache::global().get(*fusion, signature, target);
  ASSERT_TRUE(loaded->fromDisk());
  EXPECT_EQ(loaded->compileTimes().code_generation, 0.0);
  EXPECT_EQ(loaded->compileTimes().link, 0.0);
}

// A process's first kernel in a fresh folder also builds the engine's
// runtime (about a second), which the dump names apart from the kernel's
// own phases; the process loading it later names no phase.
TEST(KernelCacheTest, TheFirstCompileInAFolderNamesTheEnginesRuntime) {
  FreshCacheDir dir;
  std::string probe = std::string("HOSTIR_DUMP=kernels ") + HOSTIR_KERNEL_CACHE_PROBE;
  std::string first = run(probe);
  EXPECT_NE(first.find("link "), std::string::npos) << first;
  EXPECT_NE(first.find(", the engine's runtime "), std::string::npos) << first;
  std::string second = run(probe);
  EXPECT_NE(second.find("loaded from the disk cache"), std::string::npos) << second;
  EXPECT_EQ(second.find("the engine's runtime"), std::string::npos) << second;
}

// A fresh folder's first kernel copies its target's runtime from those the
// build made (tools/kernel_runtimes) instead of building it; the next
// process finds it in the folder.
TEST(KernelCacheTest, AFreshFolderTakesTheRuntimeTheBuildMade) {
  FreshCacheDir dir;
  // Appended, not `std::string(...) + "..."`: GCC 12 warns -Warray-bounds
  // on the inlined concatenation (a false positive).
  std::string probe = HOSTIR_KERNEL_CACHE_PROBE;
  probe += " --runtime";
  EXPECT_EQ(run(probe), "compiled=1 loaded=0 ok=1 runtime_copied=1\n");
  EXPECT_EQ(run(probe), "compiled=0 loaded=1 ok=1 runtime_copied=0\n");
}

TEST(KernelCacheTest, TheDumpSaysWhereACompilesTimeWent) {
  FreshCacheDir dir;
  ScopedEnv dump("HOSTIR_DUMP", "kernels");
  ::testing::internal::CaptureStdout();
  FusionExecutor executor(scaledRowSums(6.0));
  executor.run({at::randn({8, 8})});
  std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find(", compiled in "), std::string::npos) << printed;
  EXPECT_NE(printed.find("LLVM's optimization and code generation "), std::string::npos) << printed;
}

// A row sum's vector lanes are updated in one place: its loop over the
// row's whole vectors (then the rest one element at a time). As one loop
// with a predicated last vector, Halide wrote the update three times (the
// loop, the last vector full and predicated), which LLVM then compiled.
// Rows of 1000 (31 vectors and 8 elements) still sum right.
TEST(KernelCacheTest, ARowSumUpdatesItsVectorLanesInOnePlace) {
  FreshCacheDir dir;
  ScopedEnv dump("HOSTIR_DUMP", "kernels");
  ::testing::internal::CaptureStdout();
  FusionExecutor executor(scaledRowSums(3.0));
  at::Tensor x = at::randn({5, 1000});
  at::Tensor out = executor.run({x}).at(0);
  std::string printed = ::testing::internal::GetCapturedStdout();
  // Float32 sums of 1000 terms in the kernel's lane order and in ATen's
  // differ by up to ~1000 ulps of the terms (a row summing near 0 has no
  // relative tolerance to spare: 1e-5 failed one run in six); a lane
  // updated twice or not at all is off by a whole term, ~1.
  EXPECT_TRUE(at::allclose(out, (x * 3.0).sum(1), 1e-5, 1e-3))
      << (out - (x * 3.0).sum(1)).abs().max().item<float>();
  std::regex lanes_store(R"(_intm\[ramp\(0, 1, \d+\)\] = )");
  auto stores = std::distance(std::sregex_iterator(printed.begin(), printed.end(), lanes_store),
                              std::sregex_iterator());
  EXPECT_EQ(stores, 2) << "the lanes' initial value and their one update:\n" << printed;
}

// op(x + 1) on rows (a lone transcendental runs through ATen): a kernel
// whose output rows may end in a partial vector.
std::unique_ptr<Fusion> rowsOf(TensorView* (*op)(TensorView*)) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(op(add(x, 1.0)));
  return fusion;
}

std::string loopNestOf(const Fusion& fusion) {
  return KernelCache::global().loopNest(fusion, analyzeSegment(fusion),
                                        kernelTargetFor(localTarget()));
}

// A kernel keeps the engine's run-time checks of its buffers only where it
// may refuse its data (sin, cos: the refusal is one of those checks). The
// others go, and with them computing the bounds they compare, a third of
// the training step's compile; the runtime builds each buffer from the
// segment's shapes. Both still compute what ATen does.
TEST(KernelCacheTest, OnlyAKernelThatMayRefuseItsDataKeepsRunTimeChecks) {
  FreshCacheDir dir;
  const std::string plain = loopNestOf(*rowsOf(exp));
  const std::string trig = loopNestOf(*rowsOf(sin));
  EXPECT_EQ(plain.find("halide_error_access_out_of_bounds"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("_halide_buffer_is_bounds_query"), std::string::npos) << plain;
  EXPECT_NE(trig.find("halide_error_access_out_of_bounds"), std::string::npos) << trig;
  EXPECT_NE(trig.find("halide_error_requirement_failed"), std::string::npos) << trig;
  at::Tensor x = at::randn({3, 100});
  EXPECT_TRUE(at::allclose(FusionExecutor(rowsOf(exp)).run({x}).at(0), at::exp(x + 1), 1e-6, 1e-6));
  x.index_put_({1, 7}, 1e31);  // past the kernel's exact sin: ATen's answer
  EXPECT_TRUE(at::allclose(FusionExecutor(rowsOf(sin)).run({x}).at(0), at::sin(x + 1), 1e-6, 1e-6));
}

// A row's partial last vector is computed once, predicated. Without the
// run-time checks, Halide lost the fact that extents are not negative and
// compiled the last vector as a loop holding a whole and a predicated copy
// of the row's code, until the output's extents said so themselves.
TEST(KernelCacheTest, ARowsPartialLastVectorIsComputedOnce) {
  FreshCacheDir dir;
  const std::string nest = loopNestOf(*rowsOf(exp));
  std::regex vector_store(R"(\bout0(\$\d+)?\[ramp\()");  // Halide may suffix the name
  auto stores = std::distance(std::sregex_iterator(nest.begin(), nest.end(), vector_store),
                              std::sregex_iterator());
  EXPECT_EQ(stores, 2) << "the row's whole vectors and its predicated last one:\n" << nest;
  at::Tensor x = at::randn({4, 1001});
  EXPECT_TRUE(at::allclose(FusionExecutor(rowsOf(exp)).run({x}).at(0), at::exp(x + 1), 1e-5, 1e-6));
}

// The runtime's parallel-loop hook runs a kernel's loop on the rank's
// intra-op threads and returns a failing iteration's status. Every kernel
// ran on one thread before: at::parallel_for, inline in ATen's headers, is
// a serial loop where it is compiled without -fopenmp.
TEST(KernelCacheTest, AKernelsParallelLoopRunsOnTheIntraOpThreads) {
  FusionExecutor executor(scaledRowSums(9.0));  // installs the hook
  executor.run({at::randn({8, 8})});
  KernelParallelFor parallel_for = kernelParallelFor();
  ASSERT_NE(parallel_for, nullptr);
  static std::mutex mutex;
  static std::set<std::thread::id> threads;
  KernelTask record = [](void*, int index, unsigned char*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    return index == 13 ? -7 : 0;
  };
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  const int status = parallel_for(nullptr, record, 0, 16, nullptr);
  at::set_num_threads(before);
  EXPECT_EQ(status, -7);
  EXPECT_EQ(threads.size(), 2u);
}

TEST(KernelCacheTest, CrossCompilesForATargetThisMachineMayLack) {
  KernelTarget avx512 = kernelTargetFor(targetForIsa(Isa::Avx512));
  EXPECT_NE(avx512.engine_target.find("avx512"), std::string::npos);
  EXPECT_EQ(avx512.vector_bits, 512);
  auto fusion = scaledRowSums(5.0);
  KernelSignature signature = analyzeSegment(*fusion);
  EXPECT_GT(KernelCache::global().crossCompile(*fusion, signature, avx512), 0u);
}

}  // namespace
}  // namespace hostir::test
