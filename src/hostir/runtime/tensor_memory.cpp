#include "hostir/runtime/tensor_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace hostir::runtime {

namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};
std::atomic<bool> counting{false};

void raisePeak(int64_t live) {
  int64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

// A counted allocation: the base allocator's DataPtr, which frees it, its
// size, and, tracing, when and where it was made.
struct Allocation {
  c10::DataPtr base;
  int64_t bytes = 0;
  int64_t order = 0;
  std::string site;
  std::string caller;   // the site without work items' (currentCallerSite)
  std::string tensors;  // "T5 T8": the tensors of a program bound to it, in order
};

// Every counted allocation by its address (which is also its DataPtr's
// context, as c10's raw_allocate requires).
struct Allocations {
  std::mutex mutex;
  // Frees memory allocated before counting started but handed back through
  // this allocator's raw_deleter (a raw_allocate'd scratch buffer).
  c10::DeleterFnPtr base_raw_deleter = nullptr;
  std::unordered_map<void*, Allocation> by_address;
  // Tracing: allocations are numbered; those numbered from `traced_from`
  // on (made since the last resetPeakTensorBytes) and alive at the highest
  // live count since then, `traced_peak`, are `at_peak`.
  int64_t next_order = 0;
  int64_t traced_from = 0;
  int64_t traced_peak = 0;
  std::vector<LiveAllocation> at_peak;

  void keepIfPeak(int64_t live) {
    if (live <= traced_peak) {
      return;
    }
    traced_peak = live;
    at_peak.clear();
    for (const auto& [address, allocation] : by_address) {
      if (allocation.order >= traced_from) {
        at_peak.push_back(
            {allocation.bytes, allocation.order, allocation.site, allocation.tensors});
      }
    }
  }
};
Allocations& allocations() {
  static auto* all = new Allocations();  // never destroyed: frees may come at exit
  return *all;
}

void freeCounted(void* data) {
  c10::DataPtr base;
  {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto found = all.by_address.find(data);
    if (found == all.by_address.end()) {
      all.base_raw_deleter(data);
      return;
    }
    live_bytes.fetch_sub(found->second.bytes, std::memory_order_relaxed);
    base = std::move(found->second.base);
    all.by_address.erase(found);
  }
  // `base` frees the memory through the base allocator's deleter here.
}

// Records `base` (from c10's CPU allocator, or the buffer pool's own) as
// live tensor memory; the DataPtr returned frees it through freeCounted.
c10::DataPtr countAllocation(c10::DataPtr base, size_t bytes) {
  void* data = base.get();
  const c10::Device device = base.device();
  if (data == nullptr) {
    return base;  // zero bytes: nothing to count or free
  }
  const auto size = static_cast<int64_t>(bytes);
  {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    Allocation allocation{std::move(base), size, all.next_order++, {}, {}, {}};
    const bool traced = recordingAllocationSites();
    if (traced) {
      allocation.site = currentAllocationSite();
      allocation.caller = currentCallerSite();
    }
    all.by_address.emplace(data, std::move(allocation));
    const int64_t live = live_bytes.fetch_add(size, std::memory_order_relaxed) + size;
    raisePeak(live);
    if (traced) {
      all.keepIfPeak(live);
    }
  }
  return {data, data, &freeCounted, device};
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {
    allocations().base_raw_deleter = base->raw_deleter();
  }

  c10::DataPtr allocate(size_t bytes) const override {
    return countAllocation(base_->allocate(bytes), bytes);
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &freeCounted;
  }

 private:
  c10::Allocator* base_;
};

}  // namespace

c10::DataPtr countAsTensorMemory(c10::DataPtr memory, size_t bytes) {
  return counting ? countAllocation(std::move(memory), bytes) : std::move(memory);
}

void countTensorMemory() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    // Lives as long as the process: storages made through it may outlive
    // any scope.
    static CountingAllocator allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&allocator, /*priority=*/255);
    counting = true;
  });
}

bool countingTensorMemory() {
  return counting;
}

int64_t liveTensorBytes() {
  return live_bytes.load(std::memory_order_relaxed);
}

int64_t peakTensorBytes() {
  return peak_bytes.load(std::memory_order_relaxed);
}

void resetPeakTensorBytes() {
  Allocations& all = allocations();
  std::lock_guard<std::mutex> lock(all.mutex);
  const int64_t live = live_bytes.load(std::memory_order_relaxed);
  peak_bytes.store(live, std::memory_order_relaxed);
  all.traced_from = all.next_order;
  all.traced_peak = live;
  all.at_peak.clear();
}

int64_t peakTensorBytesOf(const std::function<void()>& body) {
  countTensorMemory();
  const int64_t before = liveTensorBytes();
  resetPeakTensorBytes();
  body();
  return peakTensorBytes() - before;
}

void traceTensorMemory(bool on) {
  countTensorMemory();
  recordAllocationSites(on);
}

bool tracingTensorMemory() {
  return recordingAllocationSites();
}

void nameTensorMemory(const void* data, const std::string& tensor) {
  if (!tracingTensorMemory()) {
    return;
  }
  Allocations& all = allocations();
  std::lock_guard<std::mutex> lock(all.mutex);
  auto found = all.by_address.find(const_cast<void*>(data));
  if (found == all.by_address.end()) {
    return;  // not counted, or made before counting started
  }
  // Bound by another caller than the one that made it (a pooled buffer of
  // the forward reused by the backward): the name says which.
  const std::string site = currentCallerSite();
  const bool same_caller = site.empty() || site == found->second.caller;
  const std::string name = same_caller ? tensor : site + ": " + tensor;
  std::string& tensors = found->second.tensors;
  // Named once: a tensor bound again (a loop's body each iteration, a
  // worker binding what its caller bound) adds nothing.
  const std::string padded = " " + tensors + " ";
  if (padded.find(" " + name + " ") != std::string::npos ||
      (site.empty() && padded.find(": " + tensor + " ") != std::string::npos)) {
    return;
  }
  tensors += (tensors.empty() ? "" : " ") + name;
  // The peak may have been reached by this very allocation, the latest,
  // before the program bound it. (A name an older allocation gets later is
  // not one it had at the peak.)
  auto at_peak = std::ranges::find(all.at_peak, found->second.order, &LiveAllocation::order);
  if (found->second.order == all.next_order - 1 && at_peak != all.at_peak.end()) {
    at_peak->tensors = tensors;
  }
}

std::vector<LiveAllocation> liveAtPeak() {
  std::vector<LiveAllocation> live;
  {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    live = all.at_peak;
  }
  std::ranges::stable_sort(
      live, [](const LiveAllocation& a, const LiveAllocation& b) { return a.bytes > b.bytes; });
  return live;
}

std::string describeLiveAtPeak() {
  struct Site {
    int64_t bytes = 0;
    int64_t count = 0;
  };
  auto named = [](const LiveAllocation& allocation) {
    std::string name = allocation.site.empty() ? "(no site: c10d/Gloo's threads)" : allocation.site;
    return allocation.tensors.empty() ? name : name + ": " + allocation.tensors;
  };
  std::map<std::string, Site> by_site;
  int64_t total = 0;
  const std::vector<LiveAllocation> live = liveAtPeak();
  for (const LiveAllocation& allocation : live) {
    Site& site = by_site[named(allocation)];
    site.bytes += allocation.bytes;
    ++site.count;
    total += allocation.bytes;
  }
  std::vector<std::pair<std::string, Site>> sites(by_site.begin(), by_site.end());
  std::ranges::stable_sort(
      sites, [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  constexpr double kMiB = 1 << 20;
  std::string text;
  if (!live.empty()) {
    text = "  reached allocating " +
           named(*std::ranges::max_element(live, {}, &LiveAllocation::order)) + "\n";
  }
  char line[64];
  for (const auto& [name, site] : sites) {
    std::snprintf(line, sizeof(line), "%8.1f MiB %3lld x  ", static_cast<double>(site.bytes) / kMiB,
                  static_cast<long long>(site.count));
    text += line + name + "\n";
  }
  std::snprintf(line, sizeof(line), "%8.1f MiB in all\n", static_cast<double>(total) / kMiB);
  return text + line;
}

}  // namespace hostir::runtime
