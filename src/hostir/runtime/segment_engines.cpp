#include "hostir/runtime/segment_engines.h"

#include "hostir/host_ir/host_unit.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/compiled_segment.h"

namespace hostir {

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
  for (HostUnit* unit : program.postedHostUnits()) {
    unit->setEngine(decideSegmentEngine(*unit->fusion()));
  }
}

}  // namespace hostir
