#include "hostir/runtime/pack_cache.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/packed_gemm.h"

namespace hostir {

namespace {

using WeakStorage = c10::weak_intrusive_ptr<c10::StorageImpl>;

// Storages that running programs hold as inputs: per storage, the scope
// that made it read-only (ids are never reused) and how many holds it has.
struct ReadOnlyHold {
  int64_t scope = 0;
  int64_t holders = 0;
};

std::mutex read_only_mutex;
std::unordered_map<const void*, ReadOnlyHold> read_only;
int64_t next_scope = 1;

// The scope `storage` is read-only in, or 0.
int64_t readOnlyScopeOf(const void* storage) {
  std::lock_guard<std::mutex> lock(read_only_mutex);
  auto hold = read_only.find(storage);
  return hold == read_only.end() ? 0 : hold->second.scope;
}

struct CacheEntry {
  explicit CacheEntry(WeakStorage weak) : storage(std::move(weak)) {}
  WeakStorage storage;
  const void* data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  Layout layout;
  // The plain bits `packed` was made from, contiguous; undefined for a
  // program's own buffer, whose bits are known by its count of writes.
  at::Tensor snapshot;
  int64_t writes = 0;
  at::Tensor packed;
  // The read-only scope in which it was last found equal (0: none).
  int64_t checked_in_scope = 0;

  bool holds(const c10::StorageImpl* plain_storage, const at::Tensor& plain,
             const Layout& wanted) const {
    return storage._unsafe_get_target() == plain_storage && data == plain.data_ptr() &&
           layout == wanted && sizes == plain.sizes().vec() && strides == plain.strides().vec();
  }
};

std::mutex cache_mutex;
std::vector<CacheEntry> cache;
std::atomic<int64_t> cache_hits{0};
std::atomic<int64_t> cache_comparisons{0};
constexpr size_t kMaxCacheEntries = 64;

// Whether `plain` has exactly the bits of `snapshot` (its contiguous copy):
// -0.0 is not 0.0 and a NaN equals itself, as the GEMM would see them.
bool sameBits(const at::Tensor& plain, const at::Tensor& snapshot) {
  ++cache_comparisons;
  if (plain.is_contiguous()) {
    return std::memcmp(plain.data_ptr(), snapshot.data_ptr(), plain.nbytes()) == 0;
  }
  return at::equal(plain.detach().view(at::kInt), snapshot.view(at::kInt));
}

// Program buffers a GEMM read once, unpacked (readOnceUnpacked): where,
// and at which count of writes.
struct Sighting {
  WeakStorage storage;
  const void* data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t writes = 0;
};
std::vector<Sighting> sightings;  // under cache_mutex
constexpr size_t kMaxSightings = 64;

}  // namespace

bool readOnceUnpacked(const at::Tensor& plain, const Layout& layout) {
  const c10::StorageImpl* storage =
      plain.has_storage() ? plain.storage().unsafeGetStorageImpl() : nullptr;
  const std::optional<int64_t> writes =
      storage != nullptr ? runBufferWrites(storage) : std::nullopt;
  if (!writes.has_value()) {
    return false;
  }
  auto same = [&](const Sighting& seen) {
    return seen.storage._unsafe_get_target() == storage && seen.data == plain.data_ptr() &&
           seen.sizes == plain.sizes().vec() && seen.strides == plain.strides().vec();
  };
  std::lock_guard<std::mutex> lock(cache_mutex);
  for (const CacheEntry& entry : cache) {
    if (entry.holds(storage, plain, layout) && !entry.snapshot.defined() &&
        entry.writes == *writes) {
      return false;  // packed already: reused
    }
  }
  std::erase_if(sightings, [](const Sighting& seen) { return seen.storage.expired(); });
  for (Sighting& seen : sightings) {
    if (same(seen)) {
      const bool again = seen.writes == *writes;
      seen.writes = *writes;
      return !again;  // a second read of the same bits packs
    }
  }
  if (sightings.size() >= kMaxSightings) {
    sightings.erase(sightings.begin());
  }
  sightings.push_back(Sighting{plain.storage().getWeakStorageImpl(), plain.data_ptr(),
                               plain.sizes().vec(), plain.strides().vec(), *writes});
  return true;
}

ReadOnlyRunInputs::ReadOnlyRunInputs(const std::vector<at::Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(read_only_mutex);
  for (const at::Tensor& input : inputs) {
    if (!input.defined() || !input.has_storage()) {
      continue;
    }
    const void* storage = input.storage().unsafeGetStorageImpl();
    ReadOnlyHold& hold = read_only[storage];
    if (hold.holders++ == 0) {
      hold.scope = next_scope++;
    }
    storages_.push_back(storage);
  }
}

ReadOnlyRunInputs::~ReadOnlyRunInputs() {
  std::lock_guard<std::mutex> lock(read_only_mutex);
  for (const void* storage : storages_) {
    auto hold = read_only.find(storage);
    if (hold != read_only.end() && --hold->second.holders == 0) {
      read_only.erase(hold);
    }
  }
}

at::Tensor packMatmulRhsCached(const at::Tensor& plain, const Layout& layout) {
  const c10::StorageImpl* storage =
      plain.has_storage() ? plain.storage().unsafeGetStorageImpl() : nullptr;
  const int64_t scope = storage != nullptr ? readOnlyScopeOf(storage) : 0;
  // A buffer of a running program (a computed operand, e.g. the attention's
  // merged K read by every chunk's GEMM): no plain snapshot, its writes are
  // counted instead (deferred_memory.h), and the entry goes with its memory.
  const std::optional<int64_t> run_buffer_writes =
      storage != nullptr ? runBufferWrites(storage) : std::nullopt;
  // Read once into plain values: GCC 12 warns falsely (-Wmaybe-uninitialized)
  // on the optional's dereference inside the loop below.
  const bool is_run_buffer = run_buffer_writes.has_value();
  const int64_t writes = run_buffer_writes.value_or(0);
  at::Tensor snapshot;
  at::Tensor packed;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    std::erase_if(cache, [](const CacheEntry& entry) { return entry.storage.expired(); });
    for (const CacheEntry& entry : cache) {
      if (storage != nullptr && entry.holds(storage, plain, layout)) {
        if (is_run_buffer && !entry.snapshot.defined()) {
          if (entry.writes != writes) {
            break;  // rewritten since: packed again below
          }
          ++cache_hits;
          return entry.packed;
        }
        if (!entry.snapshot.defined()) {
          break;  // the program's buffer no longer: its bits are unknown
        }
        if (scope != 0 && entry.checked_in_scope == scope) {
          ++cache_hits;
          return entry.packed;  // compared earlier in this run
        }
        snapshot = entry.snapshot;
        packed = entry.packed;
        break;
      }
    }
  }
  // Compared outside the lock: ranks in threads pack their own weights.
  if (packed.defined() && sameBits(plain, snapshot)) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (CacheEntry& entry : cache) {
      if (entry.packed.is_same(packed)) {
        entry.checked_in_scope = scope;
      }
    }
    ++cache_hits;
    return packed;
  }
  at::Tensor fresh = packMatmulRhs(plain, layout);
  if (storage == nullptr) {
    return fresh;
  }
  CacheEntry entry{plain.storage().getWeakStorageImpl()};
  entry.data = plain.data_ptr();
  entry.sizes = plain.sizes().vec();
  entry.strides = plain.strides().vec();
  entry.layout = layout;
  if (is_run_buffer) {
    entry.writes = writes;
  } else {
    entry.snapshot = plain.detach().clone(at::MemoryFormat::Contiguous);
  }
  entry.packed = fresh;
  entry.checked_in_scope = scope;
  std::lock_guard<std::mutex> lock(cache_mutex);
  // What the same memory held before can never be read again: its entry
  // goes, so an operand rewritten per call (a matmul's computed right
  // operand) holds one entry, not one per call crowding the weights out.
  std::erase_if(cache, [&](const CacheEntry& old) { return old.holds(storage, plain, layout); });
  if (cache.size() >= kMaxCacheEntries) {
    cache.erase(cache.begin());
  }
  cache.push_back(std::move(entry));
  return fresh;
}

int64_t dropStalePackCacheEntries() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return static_cast<int64_t>(
      std::erase_if(cache, [](const CacheEntry& entry) { return entry.storage.expired(); }));
}

int64_t packCacheHits() {
  return cache_hits.load();
}

int64_t packCacheComparisons() {
  return cache_comparisons.load();
}

int64_t packCacheEntries() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  return static_cast<int64_t>(cache.size());
}

}  // namespace hostir
