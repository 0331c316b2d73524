#include "hostir/runtime/buffer_pool.h"

#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdlib>

#include "hostir/ir/error.h"
#include "hostir/runtime/environment_count.h"
#include "hostir/runtime/tensor_memory.h"

namespace hostir {

int64_t bufferPoolLimitBytes() {
  return countFromEnvironment("HOSTIR_BUFFER_POOL_MB", 2048, 0, int64_t{1} << 30,
                              "MiB the buffer pool may hold between runs (0: off)")
         << 20;
}

void keepFreedMemoryMapped(int64_t limit_bytes) {
#if defined(__GLIBC__)
  static std::mutex mutex;
  static int64_t applied = -1;
  std::lock_guard<std::mutex> lock(mutex);
  if (applied == limit_bytes || (applied == -1 && limit_bytes == 0)) {
    return;
  }
  applied = limit_bytes;
  constexpr int kLargestHeapBlock = 32 << 20;  // glibc's DEFAULT_MMAP_THRESHOLD_MAX
  constexpr int kGlibcDefaultTrim = 128 << 10;
  mallopt(M_MMAP_THRESHOLD, kLargestHeapBlock);
  mallopt(M_TRIM_THRESHOLD, limit_bytes == 0
                                ? kGlibcDefaultTrim
                                : static_cast<int>(std::min<int64_t>(limit_bytes, INT_MAX)));
#else
  (void)limit_bytes;
#endif
}

namespace {

void freeBlock(void* data) {
  std::free(data);  // NOLINT(cppcoreguidelines-no-malloc): posix_memalign's
}

}  // namespace

bool poolHugePages() {
  const char* text = std::getenv("HOSTIR_HUGE_PAGES");
  const std::string value = text == nullptr ? "" : text;
  HOSTIR_CHECK(value.empty() || value == "0" || value == "1", "HOSTIR_HUGE_PAGES='", value,
               "' is not 0 or 1: 1 (the default) gives the buffer pool's blocks of 2 MiB or more "
               "huge pages, 0 leaves them 4 KiB pages");
  return value != "0";
}

c10::Storage newPoolMemory(int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  void* data = nullptr;
  if (bytes >= BufferPool::kHugePageBytes && poolHugePages() &&
      posix_memalign(&data, BufferPool::kHugePageBytes, static_cast<size_t>(bytes)) == 0) {
    // Whole pages of the block only: the page its end falls in is shared
    // with the next block's memory, and a huge page is only ever made of a
    // 2 MiB range the advice covers whole. Advice refused (a kernel without
    // THP) leaves plain pages: nothing to report.
    const int64_t page = sysconf(_SC_PAGESIZE);
    (void)madvise(data, static_cast<size_t>(bytes / page * page), MADV_HUGEPAGE);
    c10::DataPtr memory(data, data, &freeBlock, c10::Device(c10::kCPU));
    return c10::Storage(c10::Storage::use_byte_size_t(), static_cast<size_t>(bytes),
                        runtime::countAsTensorMemory(std::move(memory), static_cast<size_t>(bytes)),
                        c10::GetCPUAllocator(), /*resizable=*/true);
  }
#endif
  return at::empty({bytes}, at::TensorOptions().dtype(at::kByte)).storage();
}

BufferPool& BufferPool::shared() {
  static auto* pool = new BufferPool();  // never destroyed: buffers may be let go at exit
  return *pool;
}

at::Tensor BufferPool::take(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  const auto bytes = static_cast<int64_t>(c10::multiply_integers(shape) * c10::elementSize(dtype));
  at::Tensor buffer = at::empty({0}, at::TensorOptions().dtype(dtype));
  buffer.set_(takeMemory(bytes), 0, shape);
  return buffer;
}

c10::Storage BufferPool::takeMemory(int64_t bytes) {
  auto fresh = [bytes] { return newPoolMemory(bytes); };
  // Off (HOSTIR_BUFFER_POOL_MB=0), the pool holds nothing: not even the
  // memory it hands out, which a program lets go after its last use.
  if (bytes < kMinBytes || bufferPoolLimitBytes() == 0) {
    return fresh();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<c10::Storage> memory;
  if (auto found = free_.find(bytes); found != free_.end()) {
    memory = std::move(found->second.memory);
    free_bytes_ -= found->first;
    free_.erase(found);
  } else {
    // A buffer handed out earlier that nobody refers to any more (the
    // program let it go after its last use): its memory serves this
    // request instead of new memory.
    auto earlier = std::ranges::find_if(handed_out_, [&](const HandedOut& handed) {
      return static_cast<int64_t>(handed.memory.nbytes()) == bytes && unreferenced(handed.memory);
    });
    if (earlier != handed_out_.end()) {
      memory = std::move(earlier->memory);
      handed_out_.erase(earlier);
    }
  }
  if (memory.has_value()) {
    ++reused_;
  } else {
    releaseUnreferencedLocked();
    memory = fresh();
  }
  handed_out_.push_back({*memory, runs_});
  return std::move(*memory);
}

void BufferPool::releaseUnreferencedLocked() {
  free_.clear();
  free_bytes_ = 0;
  std::erase_if(handed_out_, [](const HandedOut& handed) { return unreferenced(handed.memory); });
}

bool BufferPool::unreferenced(const c10::Storage& memory) {
  // One reference to the memory: the pool's. An output the caller kept, a
  // view of it, or queued work holding it has another.
  return memory.use_count() == 1;
}

int64_t BufferPool::heldBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t held = free_bytes_;
  for (const HandedOut& handed : handed_out_) {
    held += static_cast<int64_t>(handed.memory.nbytes());
  }
  return held;
}

void BufferPool::release() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.clear();
  free_bytes_ = 0;
  handed_out_.clear();
}

void BufferPool::recycle() {
  const int64_t limit = bufferPoolLimitBytes();
  keepFreedMemoryMapped(limit);
  std::lock_guard<std::mutex> lock(mutex_);
  ++runs_;
  // Sizes that no recent run asked for do not stay.
  std::erase_if(free_, [&](const auto& entry) {
    const bool idle = runs_ - entry.second.last_run > kIdleRuns || free_bytes_ > limit;
    free_bytes_ -= idle ? entry.first : 0;
    return idle;
  });
  std::vector<HandedOut> still_held;
  for (HandedOut& handed : handed_out_) {
    const auto bytes = static_cast<int64_t>(handed.memory.nbytes());
    if (!unreferenced(handed.memory)) {
      // Another run's binding, or the caller's: watched for a while (a run
      // in flight lets it go), then forgotten (an output kept for good).
      if (runs_ - handed.run <= kIdleRuns) {
        still_held.push_back(std::move(handed));
      }
      continue;
    }
    if (free_bytes_ + bytes > limit) {
      continue;
    }
    free_bytes_ += bytes;
    free_.emplace(bytes, Free{std::move(handed.memory), handed.run});
  }
  handed_out_ = std::move(still_held);
}

}  // namespace hostir
