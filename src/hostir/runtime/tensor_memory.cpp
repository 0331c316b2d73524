#include "hostir/runtime/tensor_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <atomic>
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

// Every counted allocation by its address (which is also its DataPtr's
// context, as c10's raw_allocate requires): the base allocator's DataPtr,
// which frees it, and its size.
struct Allocations {
  std::mutex mutex;
  // Frees memory allocated before counting started but handed back through
  // this allocator's raw_deleter (a raw_allocate'd scratch buffer).
  c10::DeleterFnPtr base_raw_deleter = nullptr;
  std::unordered_map<void*, std::pair<c10::DataPtr, int64_t>> by_address;
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
    live_bytes.fetch_sub(found->second.second, std::memory_order_relaxed);
    base = std::move(found->second.first);
    all.by_address.erase(found);
  }
  // `base` frees the memory through the base allocator's deleter here.
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {
    allocations().base_raw_deleter = base->raw_deleter();
  }

  c10::DataPtr allocate(size_t bytes) const override {
    c10::DataPtr base = base_->allocate(bytes);
    void* data = base.get();
    const c10::Device device = base.device();
    if (data == nullptr) {
      return base;  // zero bytes: nothing to count or free
    }
    {
      Allocations& all = allocations();
      std::lock_guard<std::mutex> lock(all.mutex);
      all.by_address.emplace(data, std::make_pair(std::move(base), static_cast<int64_t>(bytes)));
    }
    raisePeak(live_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
              static_cast<int64_t>(bytes));
    return {data, data, &freeCounted, device};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &freeCounted;
  }

 private:
  c10::Allocator* base_;
};

}  // namespace

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
  peak_bytes.store(live_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

int64_t peakTensorBytesOf(const std::function<void()>& body) {
  countTensorMemory();
  const int64_t before = liveTensorBytes();
  resetPeakTensorBytes();
  body();
  return peakTensorBytes() - before;
}

}  // namespace hostir::runtime
