#include "hostir/runtime/buffer_pool.h"

#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <climits>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
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
#include "hostir/ir/options.h"
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
  constexpr int kGlibcDefaultTrim = 128 << 10;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(BufferPool::kLargestHeapBlock));
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

c10::DataPtr newPoolMemory(int64_t bytes) {
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
    return {data, data, &freeBlock, c10::Device(c10::kCPU)};
  }
#endif
  // The default allocator, not c10::GetCPUAllocator(): that one may be the
  // counting allocator (tensor_memory.h), and a block in the reserve is
  // not tensor memory.
  return c10::GetDefaultCPUAllocator()->allocate(static_cast<size_t>(bytes));
}

// What the pool and its leases share: a lease may come back after its pool
// is gone (an output the caller keeps), and then frees its block.
struct BufferPool::Shelf {
  struct Block {
    c10::DataPtr memory;
    int64_t last_run = 0;  // the run that last asked for it
  };
  // How often runs asked for a size in bytes: a size asked for by more than
  // one run is kept in the reserve when a request misses.
  struct Asked {
    int64_t runs = 0;
    int64_t last_run = -1;
  };

  mutable std::mutex mutex;
  std::multimap<int64_t, Block> reserve;  // by size in bytes
  std::map<int64_t, Asked> asked;
  int64_t reserve_bytes = 0;
  int64_t leased_bytes = 0;
  int64_t runs = 0;        // recycle() calls
  int64_t generation = 0;  // release() calls: older leases are freed on return
  int64_t limit = -1;      // HOSTIR_BUFFER_POOL_MB's bytes, as the last request read it
  int64_t reused = 0;
  int64_t made = 0;

  // Under mutex. Moves the blocks `drop` picks out of the reserve into
  // `freed` (freed by the caller, after unlocking).
  template <typename Drop>
  void dropBlocks(std::vector<c10::DataPtr>& freed, Drop drop) {
    for (auto block = reserve.begin(); block != reserve.end();) {
      if (drop(block->first, block->second)) {
        reserve_bytes -= block->first;
        freed.push_back(std::move(block->second.memory));
        block = reserve.erase(block);
      } else {
        ++block;
      }
    }
  }

  // Under mutex: the reserve's least recently asked-for blocks go until
  // `bytes` more fit under the limit.
  void makeRoomFor(int64_t bytes, std::vector<c10::DataPtr>& freed) {
    while (!reserve.empty() && reserve_bytes + leased_bytes + bytes > limit) {
      auto oldest = std::ranges::min_element(
          reserve, {}, [](const auto& entry) { return entry.second.last_run; });
      reserve_bytes -= oldest->first;
      freed.push_back(std::move(oldest->second.memory));
      reserve.erase(oldest);
    }
  }

  void noteAsked(int64_t bytes) {
    Asked& size = asked[bytes];
    if (size.last_run != runs) {
      ++size.runs;
      size.last_run = runs;
    }
  }
};

namespace {

// A block handed out: the DataPtr context of a lease's storage.
struct Lease {
  std::shared_ptr<BufferPool::Shelf> shelf;
  c10::DataPtr block;
  int64_t bytes = 0;
  int64_t run = 0;
  int64_t generation = 0;
};

// The lease's storage is gone: its block goes back to the reserve (or is
// freed: the pool was released since, or is off).
void endLease(void* context) {
  std::unique_ptr<Lease> lease(static_cast<Lease*>(context));
  BufferPool::Shelf& shelf = *lease->shelf;
  std::lock_guard<std::mutex> lock(shelf.mutex);
  shelf.leased_bytes -= lease->bytes;
  if (lease->generation == shelf.generation && shelf.reserve_bytes + lease->bytes <= shelf.limit) {
    shelf.reserve_bytes += lease->bytes;
    shelf.reserve.emplace(lease->bytes,
                          BufferPool::Shelf::Block{std::move(lease->block), lease->run});
  }
  // Else the block is freed with the lease, under the lock: freeing takes
  // no lock of the pool's.
}

std::string mib(int64_t bytes) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return text.str();
}

// HOSTIR_DUMP=buffers: a block the pool makes, memory the process faults in
// anew (docs/streams.md, "Buffers across runs"), with what the request let
// go first.
std::string describeNewBlock(int64_t bytes, const BufferPool::Shelf& shelf,
                             const std::vector<c10::DataPtr>& let_go) {
  std::ostringstream text;
  text << "=== buffer pool, run " << shelf.runs << ": a new block of " << mib(bytes)
       << " (no free block of its size; reserve " << mib(shelf.reserve_bytes) << ", leased "
       << mib(shelf.leased_bytes) << "; " << let_go.size() << " free block"
       << (let_go.size() == 1 ? "" : "s") << " let go for it)\n";
  return text.str();
}

}  // namespace

BufferPool::BufferPool() : shelf_(std::make_shared<Shelf>()) {}

BufferPool::~BufferPool() {
  release();
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
  const int64_t limit = bufferPoolLimitBytes();
  // Off (HOSTIR_BUFFER_POOL_MB=0), the pool holds nothing: not even the
  // memory it hands out, which a program lets go after its last use.
  if (bytes < kMinBytes || limit == 0) {
    return at::empty({bytes}, at::TensorOptions().dtype(at::kByte)).storage();
  }
  auto lease = std::make_unique<Lease>();
  lease->shelf = shelf_;
  lease->bytes = bytes;
  std::vector<c10::DataPtr> freed;  // freed after unlocking, as this returns
  std::string dump;                 // HOSTIR_DUMP=buffers, printed after unlocking
  {
    Shelf& shelf = *shelf_;
    std::lock_guard<std::mutex> lock(shelf.mutex);
    shelf.limit = limit;
    shelf.noteAsked(bytes);
    if (auto found = shelf.reserve.find(bytes); found != shelf.reserve.end()) {
      lease->block = std::move(found->second.memory);
      shelf.reserve_bytes -= bytes;
      shelf.reserve.erase(found);
      ++shelf.reused;
    } else {
      // A size no earlier run asked for is a new shape (a length that
      // changed): the reserve's blocks this run has not asked for are
      // another shape's, and go to malloc, whose heap hands their pages to
      // the new sizes. Else only the blocks of sizes this run is the first
      // to ask for go (what a program's first run holds is what it has
      // alive at once); an earlier run's sizes stay for the rest of this
      // run, which asks for them again (letting them go at the second run's
      // first miss made it allocate ~600 MiB anew for the transformer
      // layer: docs/performance.md, "The first run at the layer size").
      const bool new_shape = shelf.asked[bytes].runs == 1;
      shelf.dropBlocks(freed, [&](int64_t size, const Shelf::Block&) {
        const auto asked = shelf.asked.find(size);
        if (asked == shelf.asked.end()) {
          return true;
        }
        // A block of kLargestHeapBlock or more is a mapping of its own:
        // freeing it gives no page to the request, and this run or the next
        // would fault a new one in.
        const bool heap_block_of_this_run = asked->second.runs <= 1 &&
                                            asked->second.last_run == shelf.runs &&
                                            size < kLargestHeapBlock;
        return heap_block_of_this_run || (new_shape && asked->second.last_run != shelf.runs);
      });
      shelf.makeRoomFor(bytes, freed);
      ++shelf.made;
      if (isDumpEnabled("buffers")) {
        dump = describeNewBlock(bytes, shelf, freed);
      }
    }
    shelf.leased_bytes += bytes;
    lease->run = shelf.runs;
    lease->generation = shelf.generation;
  }
  if (!lease->block) {
    lease->block = newPoolMemory(bytes);
  }
  if (!dump.empty()) {
    std::cout << dump << std::flush;
  }
  void* data = lease->block.get();
  c10::DataPtr leased(data, lease.release(), &endLease, c10::Device(c10::kCPU));
  return {c10::Storage::use_byte_size_t(), static_cast<size_t>(bytes),
          runtime::countAsTensorMemory(std::move(leased), static_cast<size_t>(bytes)),
          c10::GetCPUAllocator(), /*resizable=*/true};
}

int64_t BufferPool::heldBytes() const {
  std::lock_guard<std::mutex> lock(shelf_->mutex);
  return shelf_->reserve_bytes + shelf_->leased_bytes;
}

int64_t BufferPool::reserveBytes() const {
  std::lock_guard<std::mutex> lock(shelf_->mutex);
  return shelf_->reserve_bytes;
}

int64_t BufferPool::reused() const {
  std::lock_guard<std::mutex> lock(shelf_->mutex);
  return shelf_->reused;
}

int64_t BufferPool::made() const {
  std::lock_guard<std::mutex> lock(shelf_->mutex);
  return shelf_->made;
}

void BufferPool::release() {
  std::vector<c10::DataPtr> freed;
  std::lock_guard<std::mutex> lock(shelf_->mutex);
  shelf_->dropBlocks(freed, [](int64_t, const Shelf::Block&) { return true; });
  shelf_->asked.clear();
  ++shelf_->generation;
}

void BufferPool::recycle() {
  const int64_t limit = bufferPoolLimitBytes();
  keepFreedMemoryMapped(limit);
  std::vector<c10::DataPtr> freed;
  Shelf& shelf = *shelf_;
  std::lock_guard<std::mutex> lock(shelf.mutex);
  shelf.limit = limit;
  ++shelf.runs;
  shelf.dropBlocks(freed, [&](int64_t, const Shelf::Block& block) {
    return shelf.runs - block.last_run > kIdleRuns || shelf.reserve_bytes > limit;
  });
  // Sizes no recent run asked for are forgotten: a length seen long ago
  // is as good as new.
  std::erase_if(shelf.asked,
                [&](const auto& entry) { return shelf.runs - entry.second.last_run > kIdleRuns; });
}

}  // namespace hostir
