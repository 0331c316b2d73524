// BufferPool: the large buffers of a host program's earlier runs serve later
// runs, but only once nothing else references their memory: an output the
// caller keeps (or a view of it) is never handed out again.

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <c10/core/CPUAllocator.h>

#include "common/scoped_env.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

const std::vector<int64_t> kBig{512, 1024};  // 2 MiB of float

TEST(BufferPoolTest, AnUnreferencedBufferIsReused) {
  BufferPool pool;
  const void* first = nullptr;
  {
    at::Tensor buffer = pool.take(kBig, at::kFloat);
    first = buffer.data_ptr();
  }
  pool.recycle();
  at::Tensor again = pool.take(kBig, at::kFloat);
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(pool.reused(), 1);
  EXPECT_NE(pool.take(kBig, at::kFloat).data_ptr(), first) << "handed out once per run";
  EXPECT_NE(pool.take(kBig, at::kDouble).data_ptr(), first) << "another dtype";
}

// A caller may change the tensor it was given: torch autograd attaches a
// grad_fn to the output of a hostir.autograd Function (the next run's
// `out=` ops then refused the buffer: "functions with out=... arguments
// don't support automatic differentiation"), an in-place transpose changes
// its strides. The pool hands the memory out again as it first did: a
// plain, contiguous tensor of the shape asked for.
TEST(BufferPoolTest, ABufferComesBackPlainWhateverTheCallerDidToItsTensor) {
  BufferPool pool;
  const void* first = nullptr;
  {
    at::Tensor output = pool.take(kBig, at::kFloat);
    first = output.data_ptr();
    output.t_();
    output.requires_grad_();
  }
  pool.recycle();
  at::Tensor again = pool.take(kBig, at::kFloat);
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_FALSE(again.requires_grad());
  EXPECT_EQ(again.sizes().vec(), kBig);
  EXPECT_TRUE(again.is_contiguous());
  at::sum_out(again, at::ones({2, 512, 1024}), {0});  // an out= op accepts it
}

// Only the memory is kept: a request of the same size in bytes gets it,
// whatever the shape or dtype asked for; a shorter one does not.
TEST(BufferPoolTest, AnotherShapeOfTheSameBytesReusesTheMemory) {
  BufferPool pool;
  const void* first = nullptr;
  {
    at::Tensor buffer = pool.take({1024, 1024}, at::kFloat);  // 4 MiB
    first = buffer.data_ptr();
  }
  pool.recycle();
  {
    at::Tensor same_bytes = pool.take({512, 1024}, at::kDouble);
    EXPECT_EQ(same_bytes.data_ptr(), first);
    EXPECT_EQ(same_bytes.sizes().vec(), (std::vector<int64_t>{512, 1024}));
    EXPECT_TRUE(same_bytes.is_contiguous());
    EXPECT_EQ(pool.reused(), 1);
  }
  pool.recycle();
  // Not reused (the count): new memory. A size no run asked for before is
  // a new shape, so the 4 MiB block this run has not asked for goes.
  at::Tensor shorter = pool.take({1023, 1024}, at::kFloat);
  EXPECT_EQ(pool.reused(), 1);
  EXPECT_EQ(pool.heldBytes(), static_cast<int64_t>(shorter.nbytes()));
}

// A request no free buffer fits first lets go of the free ones of sizes
// only one run asked for: in a program's first run, the pool holds no more
// than what the run has alive at once (a 4 MiB buffer let go, then 2 MiB
// asked for: 2 MiB held, not 6).
TEST(BufferPoolTest, ANewBufferIsMadeOnlyAfterTheFreeOnesAreLetGo) {
  BufferPool pool;
  { pool.take({1024, 1024}, at::kFloat); }
  EXPECT_EQ(pool.heldBytes(), 4 << 20) << "let go, kept for a request of its size";
  at::Tensor other = pool.take(kBig, at::kFloat);
  EXPECT_EQ(pool.heldBytes(), 2 << 20);
  { at::Tensor again = pool.take(kBig, at::kFloat); }
  EXPECT_EQ(pool.heldBytes(), 4 << 20) << "the one held and the one let go";
  at::Tensor reused = pool.take(kBig, at::kFloat);
  EXPECT_EQ(pool.reused(), 1);
  EXPECT_EQ(pool.heldBytes(), 4 << 20);
}

// A training step runs two programs in turn, whose buffers differ in size
// (the forward's and the backward's). A size that runs ask for again and
// again stays in the reserve when the other program's request misses, so
// from the third step on, neither allocates: every request is served from
// the reserve, at the same address as the step before. (Before, the first
// miss of a run let every free buffer go: each program freed the other's,
// and a layer step made ~600 MiB of new memory per rank: docs/
// performance.md, "The buffer pool across a training step's programs".)
TEST(BufferPoolTest, TwoProgramsRunInTurnKeepEachOthersBuffers) {
  BufferPool pool;
  const std::vector<std::vector<int64_t>> forward{{1024, 1024}, {512, 1024}};    // 4, 2 MiB
  const std::vector<std::vector<int64_t>> backward{{2048, 1024}, {1536, 1024}};  // 8, 6 MiB
  auto run = [&pool](const std::vector<std::vector<int64_t>>& shapes) {
    pool.recycle();
    std::vector<at::Tensor> alive;
    std::vector<const void*> addresses;
    for (const std::vector<int64_t>& shape : shapes) {
      alive.push_back(pool.take(shape, at::kFloat));
      addresses.push_back(alive.back().data_ptr());
    }
    return addresses;
  };
  std::vector<const void*> forward_addresses, backward_addresses;
  for (int step = 0; step < 2; ++step) {
    forward_addresses = run(forward);
    backward_addresses = run(backward);
  }
  const int64_t reused = pool.reused();
  const int64_t held = pool.heldBytes();
  for (int step = 2; step < 5; ++step) {
    EXPECT_EQ(run(forward), forward_addresses) << "step " << step;
    EXPECT_EQ(run(backward), backward_addresses) << "step " << step;
  }
  EXPECT_EQ(pool.reused(), reused + 3 * 4) << "every request of steps 2-4 from the reserve";
  EXPECT_EQ(pool.heldBytes(), held);
  EXPECT_EQ(held, int64_t{20} << 20) << "both programs' buffers, 4 + 2 + 8 + 6 MiB";
}

// A program's second run makes no block its first run had. Its first run
// keeps what it has alive at once: a miss lets go of the blocks that run
// let go before (here the 4 MiB one, for the second 8 MiB buffer). The
// second run's first request then misses too; the 8 MiB blocks, of sizes
// the first run asked for, stay for the second run's requests. (Before,
// that miss let them go as well, and the second run made them again: ~600
// MiB of new memory, faulted in, for the transformer layer at 2,048 tokens,
// docs/performance.md, "The first run at the layer size".)
TEST(BufferPoolTest, ASecondRunRemakesNoBlockOfTheFirstRun) {
  BufferPool pool;
  auto run = [&pool] {
    pool.recycle();
    { pool.take({1024, 1024}, at::kFloat); }                 // 4 MiB, let go
    at::Tensor first = pool.take({2048, 1024}, at::kFloat);  // 8 MiB
    at::Tensor second = pool.take({2048, 1024}, at::kFloat);
  };
  run();
  EXPECT_EQ(pool.made(), 3);
  EXPECT_EQ(pool.heldBytes(), int64_t{16} << 20) << "the 4 MiB block let go at the second miss";
  run();
  EXPECT_EQ(pool.made(), 4) << "only the 4 MiB block, which the first run let go, made again";
  EXPECT_EQ(pool.heldBytes(), int64_t{20} << 20);
  run();
  EXPECT_EQ(pool.made(), 4) << "a third run makes nothing";
}

// A block of 32 MiB or more is a mapping of its own (glibc's), whose pages
// no other allocation gets once it is freed: a first run's miss keeps it,
// for the run's next request of its size, where a smaller block goes to
// malloc's heap for the missing request.
TEST(BufferPoolTest, AFirstRunKeepsItsBlocksOf32MiBThroughAMiss) {
  BufferPool pool;
  pool.recycle();
  const void* big = nullptr;
  {
    at::Tensor scores = pool.take({8192, 1024}, at::kFloat);  // 32 MiB
    big = scores.data_ptr();
  }
  { pool.take({512, 1024}, at::kFloat); }                  // 2 MiB, let go
  at::Tensor other = pool.take({1024, 1024}, at::kFloat);  // 4 MiB: a miss
  EXPECT_EQ(pool.heldBytes(), int64_t{36} << 20) << "the 2 MiB block let go, the 32 MiB one kept";
  at::Tensor again = pool.take({8192, 1024}, at::kFloat);
  EXPECT_EQ(again.data_ptr(), big);
  EXPECT_EQ(pool.made(), 3);
}

// HOSTIR_DUMP=buffers says when the pool makes a block (memory the process
// faults in anew), which run made it and what it let go first; a request
// the reserve serves says nothing. (Finding the second run's 596 MiB of new
// blocks above took a probe compiled in; this is that probe.)
TEST(BufferPoolTest, TheDumpNamesEachNewBlockAndItsRun) {
  ScopedEnv dump("HOSTIR_DUMP", "buffers");
  BufferPool pool;
  testing::internal::CaptureStdout();
  pool.recycle();
  { pool.take({1024, 1024}, at::kFloat); }
  pool.recycle();
  { pool.take({1024, 1024}, at::kFloat); }  // from the reserve
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_EQ(text,
            "=== buffer pool, run 1: a new block of 4.0 MiB (no free block of its size; reserve "
            "0.0 MiB, leased 0.0 MiB; 0 free blocks let go for it)\n");
}

// Three training steps run in turn (each a forward and a backward program:
// `hostir sp-layer --train` times its pipelined and unchunked steps
// alternately, with its check step between): a program's sizes come back
// every sixth run, and stay in the reserve meanwhile. (With kIdleRuns 4
// they were freed at the fifth and made again: HOSTIR_DUMP=buffers showed
// the layer's pipelined step making its causal chunks' 6-16 MiB blocks
// anew every round.)
TEST(BufferPoolTest, ThreeTrainingStepsInTurnKeepTheirBlocks) {
  BufferPool pool;
  auto run = [&pool](int64_t rows) {
    pool.recycle();
    at::Tensor buffer = pool.take({rows, 1024}, at::kFloat);
  };
  const std::vector<int64_t> programs_rows{512, 640, 768, 896, 1024, 1152};  // 2 to 4.5 MiB
  auto round = [&] {
    for (int64_t rows : programs_rows) {
      run(rows);
    }
  };
  // The first two rounds make them (each program's first run looks like a
  // new shape to the pool and lets the others' blocks go).
  round();
  round();
  const int64_t made = pool.made();
  for (int step = 2; step < 6; ++step) {
    round();
  }
  EXPECT_EQ(pool.made(), made) << "rounds 3 to 6 make nothing";
  EXPECT_EQ(pool.reserveBytes(), int64_t{39} << 19) << "every program's block, 19.5 MiB";
}

// A length that changes after several runs: its first request, a size no
// run asked for before, lets the old length's blocks go (to malloc, whose
// heap gives their pages to the new sizes), though runs asked for them
// again and again; a size this run already asked for stays.
TEST(BufferPoolTest, ANewShapeLetsTheOldShapesBlocksGo) {
  BufferPool pool;
  for (int run = 0; run < 3; ++run) {
    pool.recycle();
    at::Tensor old_length = pool.take({1024, 1024}, at::kFloat);  // 4 MiB
    at::Tensor weight_grad = pool.take({512, 1024}, at::kFloat);  // 2 MiB
  }
  EXPECT_EQ(pool.reserveBytes(), int64_t{6} << 20);
  pool.recycle();
  at::Tensor weight_grad = pool.take({512, 1024}, at::kFloat);
  at::Tensor new_length = pool.take({1536, 1024}, at::kFloat);  // 6 MiB
  EXPECT_EQ(pool.reserveBytes(), 0) << "the old length's 4 MiB block let go";
  EXPECT_EQ(pool.heldBytes(), int64_t{8} << 20);
}

// The reserve and the leases stay under the byte limit: a request that
// would pass it first frees the reserve's least recently asked-for blocks,
// even of sizes runs ask for again.
TEST(BufferPoolTest, ARequestOverTheLimitFreesTheLeastRecentlyAskedFor) {
  ScopedEnv limit("HOSTIR_BUFFER_POOL_MB", "12");
  BufferPool pool;
  pool.recycle();
  {
    at::Tensor four = pool.take({1024, 1024}, at::kFloat);
    at::Tensor two = pool.take({512, 1024}, at::kFloat);
  }
  pool.recycle();
  { pool.take({1024, 1024}, at::kFloat); }  // 4 MiB: two runs asked for it
  pool.recycle();
  { pool.take({512, 1024}, at::kFloat); }  // 2 MiB: two runs, the latest
  EXPECT_EQ(pool.reserveBytes(), 6 << 20);
  at::Tensor big = pool.take({2048, 1024}, at::kFloat);  // 8 MiB: 14 > 12
  EXPECT_EQ(pool.heldBytes(), 10 << 20) << "the 4 MiB block, asked for longest ago, freed";
  EXPECT_EQ(pool.reserveBytes(), 2 << 20);
}

// A buffer may outlive its pool (an output the caller keeps): it is freed
// when it goes, not given back to a pool that is gone.
TEST(BufferPoolTest, ABufferOutlivesItsPool) {
  at::Tensor kept;
  {
    BufferPool pool;
    kept = pool.take(kBig, at::kFloat).fill_(2.0F);
  }
  EXPECT_TRUE(at::equal(kept, at::full(kBig, 2.0F)));
  kept = at::Tensor();  // the lease ends after the pool: freed, no crash (sanitizer suite)
}

// A free buffer that kIdleRuns runs in a row did not ask for is released.
TEST(BufferPoolTest, ABufferRecentRunsDidNotAskForIsReleased) {
  BufferPool pool;
  { pool.take(kBig, at::kFloat); }
  for (int64_t run = 0; run <= BufferPool::kIdleRuns; ++run) {
    EXPECT_EQ(pool.heldBytes(), 2 << 20) << "after " << run << " runs";
    pool.recycle();  // the first pools it; the next ones ask for nothing
  }
  EXPECT_EQ(pool.heldBytes(), 0);
  { pool.take(kBig, at::kFloat); }
  EXPECT_EQ(pool.reused(), 0);
}

// A buffer the program let go of during a run serves a later request of the
// same run: what the pool holds is what was alive at once, not every buffer
// the run asked for. (Before, a run's buffers came back only at the next
// run: ten take-and-drop rounds held ten buffers.)
TEST(BufferPoolTest, ABufferLetGoDuringARunServesTheSameRun) {
  BufferPool pool;
  const void* first = nullptr;
  for (int i = 0; i < 10; ++i) {
    at::Tensor buffer = pool.take(kBig, at::kFloat);
    if (i == 0) {
      first = buffer.data_ptr();
    }
    EXPECT_EQ(buffer.data_ptr(), first) << "take " << i;
  }
  EXPECT_EQ(pool.reused(), 9);
  EXPECT_EQ(pool.heldBytes(), 2 << 20);
  at::Tensor held = pool.take(kBig, at::kFloat);
  EXPECT_NE(pool.take(kBig, at::kFloat).data_ptr(), held.data_ptr()) << "one still held";
  EXPECT_EQ(pool.heldBytes(), 4 << 20);
}

// Every evaluator takes from the one pool of the process: a buffer one
// program let go serves the next program's run (a training step's backward
// reuses its forward's), and the pool's bytes stay those of one run.
TEST(BufferPoolTest, ProgramsShareThePoolOfTheProcess) {
  auto program = [](Fusion& fusion) {
    FusionGuard fg(&fusion);
    addStreamSplitIntermediateProgram();
  };
  Fusion first_fusion;
  Fusion second_fusion;
  program(first_fusion);
  program(second_fusion);
  HostExecutor first(first_fusion);
  HostExecutor second(second_fusion);
  BufferPool::shared().release();
  const at::Tensor x = at::randn(kBig);
  first.run({x});
  const int64_t held = BufferPool::shared().heldBytes();
  EXPECT_GT(held, 0) << "the program pools its intermediate";
  const int64_t reused = BufferPool::shared().reused();
  for (int run = 0; run < 3; ++run) {
    EXPECT_TRUE(allClose(second.run({x}).at(0), at::exp(-(at::relu(x) + x))));
    EXPECT_TRUE(allClose(first.run({x}).at(0), at::exp(-(at::relu(x) + x))));
  }
  EXPECT_EQ(BufferPool::shared().heldBytes(), held);
  EXPECT_GE(BufferPool::shared().reused(), reused + 6);
}

TEST(BufferPoolTest, AHeldBufferOrAViewOfItIsNotReused) {
  BufferPool pool;
  at::Tensor held = pool.take(kBig, at::kFloat);
  at::Tensor view;
  {
    at::Tensor viewed = pool.take(kBig, at::kFloat);
    view = viewed.narrow(0, 0, 4);
  }
  pool.recycle();
  at::Tensor next = pool.take(kBig, at::kFloat);
  EXPECT_NE(next.data_ptr(), held.data_ptr());
  EXPECT_NE(next.data_ptr(), view.data_ptr());
  EXPECT_EQ(pool.reused(), 0);
}

TEST(BufferPoolTest, SmallBuffersAndAZeroLimitAreNotPooled) {
  BufferPool pool;
  { pool.take({16, 16}, at::kFloat); }
  {
    ScopedEnv off("HOSTIR_BUFFER_POOL_MB", "0");
    { pool.take(kBig, at::kFloat); }
    // Off, it holds nothing, not even what it handed out in this run: a
    // let-go intermediate's memory is freed at once (peak memory of a step).
    EXPECT_EQ(pool.heldBytes(), 0);
    pool.recycle();
    pool.take({16, 16}, at::kFloat);
    pool.take(kBig, at::kFloat);
    EXPECT_EQ(pool.reused(), 0);
  }
  ScopedEnv bad("HOSTIR_BUFFER_POOL_MB", "lots");
  try {
    pool.recycle();
    ADD_FAILURE() << "expected hostir::Error";
  } catch (const Error& error) {
    EXPECT_EQ(
        std::string(error.what())
            .rfind("HOSTIR_BUFFER_POOL_MB='lots' is not a number of MiB the buffer pool may hold",
                   0),
        0u)
        << error.what();
  }
}

// Whether malloc is glibc's: AddressSanitizer (the sanitizer job, which
// runs this suite for the pool's leases) brings an allocator of its own,
// which neither keeps freed memory mapped nor has glibc's heap top.
#if defined(__SANITIZE_ADDRESS__)
#define HOSTIR_MALLOC_IS_GLIBCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOSTIR_MALLOC_IS_GLIBCS 0
#endif
#endif
#ifndef HOSTIR_MALLOC_IS_GLIBCS
#define HOSTIR_MALLOC_IS_GLIBCS 1
#endif
constexpr const char* kNotGlibcsMalloc =
    "AddressSanitizer's malloc replaces glibc's, whose keeping of freed memory this measures "
    "(it runs in every other build)";

// The minor page faults of the calling thread so far: a page of new memory
// faults in on its first touch, memory malloc kept mapped does not.
int64_t minorFaultsOfThisThread() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// One "run" of a program whose buffers are `rows` long: 10 buffers of
// rows x 2048 floats (8 MiB at 1024 rows) alive at once, each written whole,
// then let go. Returns the pages it wrote.
int64_t runWithBuffersOf(BufferPool& pool, int64_t rows) {
  pool.recycle();
  std::vector<at::Tensor> alive;
  int64_t bytes = 0;
  for (int i = 0; i < 10; ++i) {
    alive.push_back(pool.take({rows, 2048}, at::kFloat).fill_(1.0F));
    bytes += static_cast<int64_t>(alive.back().nbytes());
  }
  return bytes / 4096;
}

// A sequence whose length changes between calls: no buffer has the new
// length's size, so the pool lets its free ones go and makes new ones. Their
// memory is the let-go buffers', which malloc kept mapped
// (keepFreedMemoryMapped): a length no longer than the one before does not
// fault its pages in again. (Before, glibc gave the 80 MiB let go at once
// back to the system: every page of every new length faulted in.)
TEST(BufferPoolTest, AShorterLengthsBuffersUseMemoryAlreadyFaultedIn) {
  if (!HOSTIR_MALLOC_IS_GLIBCS) {
    GTEST_SKIP() << kNotGlibcsMalloc;
  }
  BufferPool pool;
  runWithBuffersOf(pool, 1024);  // 80 MiB
  int64_t pages = 0;
  const int64_t faults_before = minorFaultsOfThisThread();
  for (int64_t rows : {1016, 1000, 990, 960}) {
    pages += runWithBuffersOf(pool, rows);
  }
  const int64_t faults = minorFaultsOfThisThread() - faults_before;
  EXPECT_LT(faults, pages / 10) << faults << " page faults writing " << pages
                                << " pages of 4 new lengths' buffers";
  EXPECT_EQ(pool.reused(), 0) << "no buffer of the same size: all new memory";
}

// On the main thread (glibc's main heap, whose top is the program break):
// frees a 30 MiB block that ends the heap and returns how far the break came
// down. Blocks that filled a hole lower in the heap are kept until then.
int64_t breakDropFreeingTheHeapsTop() {
  constexpr size_t kBlock = size_t{30} << 20;
  std::vector<void*> lower;
  void* top = nullptr;
  for (int i = 0; i < 8 && top == nullptr; ++i) {
    void* block = std::malloc(kBlock);
    // The block's chunk ends where glibc's top chunk starts, and the top
    // ends at the break: nothing (a small block carved later from a hole
    // near the top) sits between the block and the top.
    const auto* chunk_end = static_cast<char*>(block) + malloc_usable_size(block) - sizeof(size_t);
    const auto* program_break = static_cast<char*>(sbrk(0));
    if (chunk_end + mallinfo2().keepcost == program_break) {
      top = block;
    } else {
      lower.push_back(block);
    }
  }
  EXPECT_NE(top, nullptr) << "no 30 MiB block came from the heap's top";
  const auto* before = static_cast<char*>(sbrk(0));
  std::free(top);
  const int64_t drop = before - static_cast<char*>(sbrk(0));
  for (void* block : lower) {
    std::free(block);
  }
  return drop;
}

// What malloc keeps free at the top of its heap is bounded by the pool's
// limit (HOSTIR_BUFFER_POOL_MB): 30 MiB let go is kept under the default
// 2 GiB and given back to the system under 16 MiB.
TEST(BufferPoolTest, MemoryLetGoStaysMappedUpToThePoolsLimit) {
  if (!HOSTIR_MALLOC_IS_GLIBCS) {
    GTEST_SKIP() << kNotGlibcsMalloc;
  }
  {
    ScopedEnv limit("HOSTIR_BUFFER_POOL_MB", "2048");
    BufferPool().recycle();  // every run's start applies the limit
    EXPECT_EQ(breakDropFreeingTheHeapsTop(), 0) << "kept mapped";
  }
  ScopedEnv limit("HOSTIR_BUFFER_POOL_MB", "16");
  BufferPool().recycle();
  EXPECT_GE(breakDropFreeingTheHeapsTop(), int64_t{14} << 20) << "above the limit: given back";
}

// The mode in brackets in a THP switch file ("always", "madvise", "never",
// "inherit"), or `absent` where the kernel has no such file.
std::string bracketedMode(const char* path, const std::string& absent) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  const auto open = line.find('[');
  const auto close = line.find(']');
  return open == std::string::npos || close < open ? absent
                                                   : line.substr(open + 1, close - open - 1);
}

// The kernel's THP switch, or "" where it has no transparent huge pages.
std::string transparentHugePageMode() {
  return bracketedMode("/sys/kernel/mm/transparent_hugepage/enabled", "");
}

// What /proc/self/smaps says of the mapping that holds `address`.
struct Mapping {
  bool found = false;
  std::string vm_flags;  // "VmFlags:", two letters a flag ("hg": MADV_HUGEPAGE)
};

Mapping mappingOf(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  Mapping mapping;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (const auto dash = first.find('-'); dash != std::string::npos && first.back() != ':') {
      if (mapping.found) {
        break;  // the next mapping's header
      }
      inside = std::stoull(first.substr(0, dash), nullptr, 16) <= at &&
               at < std::stoull(first.substr(dash + 1), nullptr, 16);
      mapping.found = inside;
    } else if (inside && first == "VmFlags:") {
      std::getline(words, mapping.vm_flags);
      mapping.vm_flags += ' ';
    }
  }
  return mapping;
}

// A block of 2 MiB or more starts on a huge page's boundary and its mapping
// is advised huge pages (MADV_HUGEPAGE: VmFlags "hg"): what the pool does.
// Whether a fault then maps a huge page is the kernel's judgement
// (THPeligible, AnonHugePages) and is not asserted: besides the THP modes,
// a sandbox can turn THP off for a process or judge an advised mapping
// ineligible (CI's did both, in different runs), and free 2 MiB ranges
// vary from moment to moment.
TEST(BufferPoolTest, ALargeBlockIsAdvisedHugePages) {
  const std::string mode = transparentHugePageMode();
  if (mode.empty()) {
    GTEST_SKIP() << "this kernel has no transparent huge pages "
                    "(/sys/kernel/mm/transparent_hugepage/enabled is missing): madvise refuses "
                    "MADV_HUGEPAGE and the pool's blocks keep 4 KiB pages";
  }
  // 12 MiB come from malloc's heap, 40 MiB from a mapping of its own (over
  // glibc's 32 MiB): a fresh mapping, advised or not by this block alone.
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{3, 1024, 1024}, std::vector<int64_t>{10, 1024, 1024}}) {
    BufferPool pool;
    const at::Tensor block = pool.take(shape, at::kFloat);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data_ptr()) % BufferPool::kHugePageBytes, 0u);
    const Mapping mapping = mappingOf(block.data_ptr());
    ASSERT_TRUE(mapping.found) << "no mapping in /proc/self/smaps holds the block";
    EXPECT_NE(mapping.vm_flags.find(" hg "), std::string::npos)
        << block.nbytes() << " bytes, VmFlags:" << mapping.vm_flags << "(THP mode " << mode << ")";
  }
  BufferPool pool;
  {
    // Off, the block is c10's default allocator's: a 40 MiB block is a
    // mapping of its own (over glibc's 32 MiB), not advised.
    ScopedEnv off("HOSTIR_HUGE_PAGES", "0");
    const at::Tensor block = pool.take({10, 1024, 1024}, at::kFloat);
    const Mapping mapping = mappingOf(block.data_ptr());
    ASSERT_TRUE(mapping.found) << "no mapping in /proc/self/smaps holds the block";
    EXPECT_EQ(mapping.vm_flags.find(" hg "), std::string::npos)
        << "HOSTIR_HUGE_PAGES=0, advised anyway: VmFlags:" << mapping.vm_flags;
  }
  ScopedEnv bad("HOSTIR_HUGE_PAGES", "yes");
  try {
    pool.take({11, 1024, 1024}, at::kFloat);  // a size the pool has no block of
    ADD_FAILURE() << "expected hostir::Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("HOSTIR_HUGE_PAGES='yes' is not 0 or 1", 0), 0u)
        << error.what();
  }
}

// A program whose large intermediate is reused run after run: the results
// the caller kept from earlier runs still hold their own values.
TEST(BufferPoolTest, KeptOutputsOfEarlierRunsStayIntact) {
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    addStreamSplitIntermediateProgram();
  }
  HostExecutor executor(fusion);
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> kept;
  for (int run = 0; run < 4; ++run) {
    inputs.push_back(at::randn(kBig));
    kept.push_back(executor.run({inputs.back()}).at(0));
  }
  for (size_t run = 0; run < kept.size(); ++run) {
    const at::Tensor& x = inputs[run];
    EXPECT_TRUE(allClose(kept[run], at::exp(-(at::relu(x) + x)))) << "run " << run;
  }
}

}  // namespace
}  // namespace hostir::test
