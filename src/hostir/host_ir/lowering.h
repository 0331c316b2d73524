#pragma once

#include <memory>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/passes/pass_registry.h"

namespace hostir {

// Lowers a fusion to a host program: segments it (read only, no copy) with the
// host-lowering merge policy (segment/host_lowering_policy.h), emits one
// top-level expr per segment in run order — the op itself for a
// host-lowerable segment (after any forwarded chain it reads), its exprs one
// by one for a segment computing Stream-parallel tensors (the stream pass
// slices each of them), and PostOnStream(HostUnit(segment fusion)) for any
// other — then runs `passes` (by default the one-device host IR pipeline of
// passes/pass_registry.h; `hostir passes` lists it). HOSTIR_DUMP=host_ir
// prints the result.
std::unique_ptr<HostIrContainer> lowerToHostIr(
    const Fusion& fusion, HostIrPassManager passes = hostIrPipeline(std::nullopt));

// What the Executor compiles a user's fusion into, for `hostir lower` to
// print the program that runs: the presegmentation passes on `fusion` (in
// place: the caller's copy), then lowerToHostIr with the host IR pipeline.
// Without `multidevice`, the one-device passes of both stages; with it,
// also the multi-device ones, for that rank.
std::unique_ptr<HostIrContainer> presegmentAndLower(
    Fusion& fusion, const std::optional<MultiDeviceLowering>& multidevice = std::nullopt);

// The same without running any pass: the segments as top-level exprs.
std::unique_ptr<HostIrContainer> lowerSegmentsToHostIr(const Fusion& fusion);

}  // namespace hostir
