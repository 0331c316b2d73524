#pragma once

#include <string>

namespace hostir::runtime {

// What a thread is allocating tensor memory for, when the tensor-memory
// trace asks (runtime/tensor_memory.h: the breakdown of a step's peak,
// docs/training.md). ATen-free, so that a stream can name its work items.
//
// Sites are recorded only while recordAllocationSites(true) is in effect
// (traceTensorMemory turns it on); otherwise an AllocationSite costs a flag
// load.
void recordAllocationSites(bool on);
bool recordingAllocationSites();

// While one lives, the thread's allocations are made at `site` (nested
// sites are joined outermost first: "backward > T7 = matmul(...)"). A null
// site adds nothing; `site` must outlive this object. A stream's work item
// is a site of its own kind: not where a tensor is bound (the program that
// queued the work is).
class AllocationSite {
 public:
  enum class Kind { kCaller, kWorkItem };
  explicit AllocationSite(const std::string* site, Kind kind = Kind::kCaller);
  ~AllocationSite();
  AllocationSite(const AllocationSite&) = delete;
  AllocationSite& operator=(const AllocationSite&) = delete;

 private:
  bool pushed_;
};

// This thread's sites, outermost first, each on one line (whitespace runs
// made one space, cut after 140 characters: a printed expr spans lines, a
// loop its whole body), joined by " > "; "" outside any.
std::string currentAllocationSite();
// The same without the work items' sites: who binds a tensor ("" on a
// stream's worker).
std::string currentCallerSite();

}  // namespace hostir::runtime
