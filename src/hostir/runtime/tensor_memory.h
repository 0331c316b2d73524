#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <c10/core/Allocator.h>

#include "hostir/runtime/streams/allocation_site.h"

namespace hostir::runtime {

// The bytes of CPU tensor memory a process holds, counted at c10's CPU
// allocator (every at::empty on the CPU, hostir's and torch's alike), for
// reporting the peak memory of a training step (docs/training.md, "Peak
// memory of a step"). Memory allocated outside that allocator (oneDNN's and
// Gloo's own, malloc'd small objects) is not counted.
//
// countTensorMemory() puts a counting allocator in front of c10's CPU
// allocator, once per process; tensors allocated before it are not counted
// (neither when made nor when freed). Thread-safe.
void countTensorMemory();
bool countingTensorMemory();
// Tensor memory allocated beside c10's CPU allocator (the buffer pool's
// blocks aligned for huge pages, buffer_pool.h): counting on, it is counted
// as if that allocator had made it and freed through `memory`'s deleter
// when its storage goes; counting off, `memory` comes back as it was.
c10::DataPtr countAsTensorMemory(c10::DataPtr memory, size_t bytes);
// Bytes allocated since counting started and not freed yet.
int64_t liveTensorBytes();
// The most liveTensorBytes() reached since the last resetPeakTensorBytes().
int64_t peakTensorBytes();
void resetPeakTensorBytes();

// Counting on, the peak live bytes while `body` runs above those live before
// it: what `body` needed at most on top of what existed already.
int64_t peakTensorBytesOf(const std::function<void()>& body);

// What is alive at the peak, by what allocated it (docs/training.md, "Peak
// memory of a step": the breakdown). With tracing on, every counted
// allocation records the site its thread was in (AllocationSite,
// streams/allocation_site.h) and the tensors bound to it, and each new peak
// keeps the list of the allocations alive then; that copy per new peak
// makes tracing a tool for reports (`hostir sp-mlp --train
// --memory-breakdown`), not for timed runs.
void traceTensorMemory(bool on);
bool tracingTensorMemory();
// Tracing: the counted allocation that starts at `data` (a storage's data)
// is bound to `tensor` (e.g. "T7"): a host program's evaluator names the
// memory of every tensor it binds (a pooled buffer reused, or a view: more
// than one name; bound by another caller than the one that made it, the
// name is "<caller's site>: T7"). Does nothing when not tracing.
void nameTensorMemory(const void* data, const std::string& tensor);
struct LiveAllocation {
  int64_t bytes = 0;
  int64_t order = 0;    // allocations are numbered: a later one, a larger number
  std::string site;     // "" when no AllocationSite was set
  std::string tensors;  // "T5 T8": nameTensorMemory's names, in order
};
// Tracing on: the allocations alive at the highest peak since the last
// resetPeakTensorBytes() that were made after it (those before it are not
// in peakTensorBytesOf's figure either), largest first.
std::vector<LiveAllocation> liveAtPeak();
// liveAtPeak() summed by site and tensors, one line each
// ("    32.0 MiB   2 x  backward: T6"), largest first, then the total; first
// the allocation that reached the peak ("  reached allocating backward: T15").
std::string describeLiveAtPeak();

}  // namespace hostir::runtime
