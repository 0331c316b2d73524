#include "hostir/runtime/streams/wait_exposure.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace hostir::runtime {

namespace {

using Interval = std::pair<int64_t, int64_t>;  // [start, end) in µs

// Sorted, disjoint, merged.
std::vector<Interval> unionOf(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> merged;
  for (const Interval& interval : intervals) {
    if (!merged.empty() && interval.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, interval.second);
    } else {
      merged.push_back(interval);
    }
  }
  return merged;
}

int64_t lengthOf(const std::vector<Interval>& disjoint) {
  int64_t total = 0;
  for (const auto& [start, end] : disjoint) {
    total += end - start;
  }
  return total;
}

// The length of `a` (disjoint) not covered by `b` (disjoint, sorted).
int64_t uncoveredLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t covered = 0;
  size_t j = 0;
  for (const auto& [start, end] : a) {
    while (j < b.size() && b[j].second <= start) {
      ++j;
    }
    for (size_t k = j; k < b.size() && b[k].first < end; ++k) {
      covered += std::min(end, b[k].second) - std::max(start, b[k].first);
    }
  }
  return lengthOf(a) - covered;
}

double ms(int64_t us) {
  return static_cast<double>(us) / 1000.0;
}

}  // namespace

RunExposure measureWaitExposure(const std::vector<TraceEvent>& events, int first_other_lane,
                                const std::function<bool(const std::string&)>& selects) {
  std::vector<Interval> compute;
  std::vector<Interval> all_waits;
  std::map<std::string, std::vector<Interval>> waits;
  std::vector<std::pair<int64_t, std::string>> first_wait;  // to order the names
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (const TraceEvent& event : events) {
    if (event.stream_id >= first_other_lane || event.end_us < event.start_us) {
      continue;
    }
    first = std::min(first, event.start_us);
    last = std::max(last, event.end_us);
    const Interval interval{event.start_us, event.end_us};
    if (event.category == "compute") {
      compute.push_back(interval);
    } else if (event.category == "wait" && selects(event.name)) {
      auto [it, inserted] = waits.try_emplace(event.name);
      if (inserted) {
        first_wait.emplace_back(event.start_us, event.name);
      }
      it->second.push_back(interval);
      all_waits.push_back(interval);
    }
  }
  RunExposure run;
  if (first > last) {
    return run;
  }
  const std::vector<Interval> busy = unionOf(std::move(compute));
  run.span_ms = ms(last - first);
  run.compute_ms = ms(lengthOf(busy));
  run.exposed_ms = ms(uncoveredLength(unionOf(std::move(all_waits)), busy));
  std::sort(first_wait.begin(), first_wait.end());
  for (const auto& [start, name] : first_wait) {
    std::vector<Interval>& intervals = waits.at(name);
    const auto count = static_cast<int64_t>(intervals.size());
    const std::vector<Interval> merged = unionOf(std::move(intervals));
    run.waits.push_back({name, count, ms(lengthOf(merged)), ms(uncoveredLength(merged, busy))});
  }
  return run;
}

}  // namespace hostir::runtime
