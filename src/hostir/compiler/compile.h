#pragma once

#include <memory>
#include <optional>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/fusion.h"

namespace hostir {

// How to compile a user's fusion: for one device (no `multidevice`), or for
// one rank of a sharded run (its device and the ranks' targets).
struct CompileOptions {
  std::optional<MultiDeviceLowering> multidevice;
};

// What compile makes of a user's fusion: `fusion` is a copy of it after the
// presegmentation passes (what the run-time checks and the ranks' agreement
// read), `program` the host program lowered from that copy (what runs).
struct CompiledProgram {
  std::unique_ptr<Fusion> fusion;
  std::unique_ptr<HostIrContainer> program;
};

// The one compile path of a fusion, which the Executor, `hostir lower` and
// the tests all go through, so that what `hostir lower` prints is what runs:
// copy (the caller's fusion is left as it is) → presegmentation passes (the
// multi-device ones too when sharded) → segmentation → host IR passes.
CompiledProgram compile(const Fusion& fusion, const CompileOptions& options = {});

// The same on a copy the caller already made and keeps (the Executor plans
// automatic stream splits from it before it compiles), so that a definition
// is copied once: the presegmentation passes change `copy` in place, and the
// caller still owns it should they throw.
std::unique_ptr<HostIrContainer> compileInPlace(Fusion& copy, const CompileOptions& options = {});

}  // namespace hostir
