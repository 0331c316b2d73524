#include "hostir/runtime/segment_engines.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <unordered_map>

#include "hostir/host_ir/host_unit.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/kernels/kernel_signature.h"
#include "hostir/runtime/compiled_segment.h"

namespace hostir {

namespace {

// Runs task(0) .. task(count - 1) on up to hardware_concurrency threads (the
// caller's among them); rethrows the first exception once all are done.
template <typename Task>
void forEachConcurrently(size_t count, const Task& task) {
  const size_t threads =
      std::min<size_t>(count, std::max<size_t>(1, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (failure == nullptr) {
          failure = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) {
    helpers.emplace_back(work);
  }
  work();
  for (std::thread& helper : helpers) {
    helper.join();
  }
  if (failure != nullptr) {
    std::rethrow_exception(failure);
  }
}

// A segment of a program: a posted HostUnit's fusion, or a standalone
// kernel's (LaunchKernel; `unit` null).
struct Segment {
  const Fusion* fusion;
  HostUnit* unit;
  int64_t kernel_id;
};

// The segments of `program` by the kernel they would compile to: segments
// of one canonical form share one kernel, so one engine decision; one the
// kernels do not take is a group of its own.
std::vector<std::vector<Segment>> segmentsByKernel(const HostIrContainer& program) {
  std::vector<Segment> segments;
  for (HostUnit* unit : program.postedHostUnits()) {
    segments.push_back({unit->fusion(), unit, -1});
  }
  for (int64_t id = 0; id < program.numKernels(); ++id) {
    segments.push_back({program.kernel(id), nullptr, id});
  }
  std::vector<std::vector<Segment>> groups;
  std::unordered_map<std::string, size_t> group_of;
  for (const Segment& segment : segments) {
    KernelSignature signature = analyzeSegment(*segment.fusion);
    if (signature.unsupported.has_value()) {
      groups.push_back({segment});
      continue;
    }
    auto [it, inserted] = group_of.try_emplace(signature.canonical, groups.size());
    if (inserted) {
      groups.emplace_back();
    }
    groups[it->second].push_back(segment);
  }
  return groups;
}

}  // namespace

std::optional<GemmEpilogue> gemmEpilogueToRun(const Fusion& segment) {
  std::optional<GemmEpilogue> gemm = matchGemmEpilogue(segment);
  if (!gemm.has_value()) {
    return std::nullopt;
  }
  const auto* out = gemm->out;
  if (out->hasEncoding() && out->encoding()->isResolved() &&
      !out->encoding()->resolved->isIdentity()) {
    return std::nullopt;  // a result written in panels is packed after the ops
  }
  return gemm;
}

SegmentEngine decideSegmentEngine(const Fusion& segment) {
  std::string why_not;
  if (std::unique_ptr<CompiledSegment> compiled = CompiledSegment::compile(segment, &why_not)) {
    return {.kind = SegmentEngineKind::Kernel,
            .detail = compiled->kernel().hash() + " for " + compiled->kernel().target().toString()};
  }
  if (kernelsEnabled()) {
    if (std::optional<GemmEpilogue> gemm = gemmEpilogueToRun(segment)) {
      return {.kind = SegmentEngineKind::GemmWithPostOps, .detail = describe(*gemm)};
    }
  }
  return {.kind = SegmentEngineKind::Aten, .detail = why_not};
}

void decideSegmentEngines(HostIrContainer& program) {
  // The distinct kernels compile at once, one per thread (the kernel cache
  // locks per key; Halide's ahead-of-time compile is thread-safe,
  // docs/kernels.md, "The cache"). The program's standalone kernels
  // (LaunchKernel) are decided with its units.
  const std::vector<std::vector<Segment>> groups = segmentsByKernel(program);
  std::vector<SegmentEngine> engines(groups.size());
  forEachConcurrently(groups.size(), [&](size_t g) {
    engines[g] = decideSegmentEngine(*groups[g].front().fusion);
  });
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const Segment& segment : groups[g]) {
      if (segment.unit != nullptr) {
        segment.unit->setEngine(engines[g]);
      } else {
        program.setKernelEngine(segment.kernel_id, engines[g]);
      }
    }
  }
}

}  // namespace hostir
