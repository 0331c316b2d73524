#include "hostir/runtime/streams/allocation_site.h"

#include <atomic>
#include <utility>
#include <vector>

namespace hostir::runtime {

namespace {

std::atomic<bool> recording{false};
// The AllocationSites alive on this thread, outermost first.
thread_local std::vector<std::pair<const std::string*, AllocationSite::Kind>> sites;

std::string condensed(const std::string& site) {
  constexpr size_t kSiteChars = 140;
  std::string line;
  for (char c : site) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (space && (line.empty() || line.back() == ' ')) {
      continue;
    }
    line += space ? ' ' : c;
    if (line.size() >= kSiteChars) {
      return line + "...";
    }
  }
  return line;
}

}  // namespace

void recordAllocationSites(bool on) {
  recording.store(on, std::memory_order_relaxed);
}

bool recordingAllocationSites() {
  return recording.load(std::memory_order_relaxed);
}

AllocationSite::AllocationSite(const std::string* site, Kind kind) : pushed_(site != nullptr) {
  if (pushed_) {
    sites.emplace_back(site, kind);
  }
}

AllocationSite::~AllocationSite() {
  if (pushed_) {
    sites.pop_back();
  }
}

namespace {
std::string joined(bool with_work_items) {
  std::string path;
  for (const auto& [site, kind] : sites) {
    if (with_work_items || kind == AllocationSite::Kind::kCaller) {
      path += (path.empty() ? "" : " > ") + condensed(*site);
    }
  }
  return path;
}
}  // namespace

std::string currentAllocationSite() {
  return joined(/*with_work_items=*/true);
}

std::string currentCallerSite() {
  return joined(/*with_work_items=*/false);
}

}  // namespace hostir::runtime
