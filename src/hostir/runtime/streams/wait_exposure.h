#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hostir/runtime/streams/tracer.h"

namespace hostir::runtime {

// How long the streams of one traced run waited for something (a
// collective, say), and how much of that wait no compute hid. On a CPU the
// streams share the cores, so a wait costs the run only while no stream
// computes: that part is "exposed" (issue 36's measured exposed time).
struct WaitExposure {
  std::string name;  // the wait items' trace name
  int64_t waits = 0;
  double waited_ms = 0;   // the union of its wait items' intervals
  double exposed_ms = 0;  // of which no compute item ran on any stream
};

struct RunExposure {
  double span_ms = 0;     // the first stream item's start to the last one's end
  double compute_ms = 0;  // the union of the compute items' intervals
  // The union of every selected wait with no compute running: what the
  // waits cost the run together (less than the sum of theirs where two
  // waits overlap).
  double exposed_ms = 0;
  std::vector<WaitExposure> waits;  // in the order of each name's first wait
};

// From one run's trace events: compute items (category "compute") and the
// wait items `selects` picks (category "wait"), on the stream lanes below
// `first_other_lane` (the link's lanes record transfers, not the streams).
RunExposure measureWaitExposure(const std::vector<TraceEvent>& events, int first_other_lane,
                                const std::function<bool(const std::string&)>& selects);

}  // namespace hostir::runtime
