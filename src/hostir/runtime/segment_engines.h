#pragma once

#include <optional>

#include "hostir/host_ir/gemm_epilogue.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/segment_engine.h"
#include "hostir/ir/fusion.h"

namespace hostir {

// The engine step of the compile stage (issue 40): decides the engine of
// every HostUnit of `program` and records it on the unit (HostUnit::engine,
// printed by `hostir lower` and the textual host IR), and of every
// standalone kernel a LaunchKernel runs (HostIrContainer::kernelEngine),
// compiling the kernels
// ahead of the first run: a kernel takes its extents at run time, so the
// sizes need not be known. The Executor and `hostir lower` call it on the
// program compile() made; the choice needs the kernels layer, which the
// compiler folder does not see.
void decideSegmentEngines(HostIrContainer& program);

// The engine of one segment, as FusionExecutor runs it: its compiled kernel
// (compiled, or loaded from the kernel cache, here), else one GEMM with
// post-ops, else ATen with the reason.
SegmentEngine decideSegmentEngine(const Fusion& segment);

// The linear and epilogue of `segment` FusionExecutor runs as one GEMM with
// post-ops: none where the result is written in panels (packed after the
// ops, through ATen).
std::optional<GemmEpilogue> gemmEpilogueToRun(const Fusion& segment);

}  // namespace hostir
