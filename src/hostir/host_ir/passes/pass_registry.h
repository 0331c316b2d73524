#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hostir/host_ir/passes/pass_manager.h"
#include "hostir/multidevice/target.h"

namespace hostir {

class Fusion;

// The compiler's passes, registered in one table (pass_registry.cpp) in the
// order they run: a pass is one file (its function), its test, and one line
// of that table. `hostir passes` prints the table; the docs quote it.

// Which program a pass transforms.
enum class PassStage {
  // The user's fusion, before segmentation (multidevice/presegmentation_passes.h,
  // propagate_stream_axes.h).
  Presegmentation,
  // The lowered host program (this folder).
  HostIr,
};

// Which lowerings run a pass.
enum class PassScope {
  // Every lowering, one device or many.
  Always,
  // Only a multi-device program's, for one rank.
  MultiDevice,
};

// What a multi-device lowering gives its passes.
struct MultiDeviceLowering {
  int64_t my_device = 0;
  // Every device's target (specialize_encodings).
  DeviceTargets targets;
};

struct RegisteredPass {
  std::string name;  // snake_case: HOSTIR_DISABLE_PASS and the dump header use it
  PassStage stage = PassStage::HostIr;
  PassScope scope = PassScope::Always;
  std::string summary;                         // one line, for `hostir passes`
  std::function<void(Fusion&)> run_on_fusion;  // Presegmentation
  std::function<void(HostIrContainer&, const std::optional<MultiDeviceLowering>&)>
      run_on_host_program;  // HostIr
};

// Every pass of every stage, in pipeline order.
const std::vector<RegisteredPass>& registeredPasses();

// Their names, what HOSTIR_DISABLE_PASS may name.
std::vector<std::string> registeredPassNames();

// The presegmentation stage's pipeline over a user's fusion: the Always
// passes, and with `multidevice` also the MultiDevice ones.
PassPipeline<Fusion> presegmentationPipeline(bool multidevice = true);

// The host IR stage's pipeline: the Always passes, and with `multidevice`
// also the MultiDevice ones for that rank.
HostIrPassManager hostIrPipeline(const std::optional<MultiDeviceLowering>& multidevice);

// Runs the presegmentation pipeline on `fusion` (a one-device fusion:
// `multidevice` false, the Always passes only).
void runPresegmentationPasses(Fusion* fusion, bool multidevice = true);

// The table as `hostir passes` prints it: one line per pass, in order, with
// its stage, which lowerings run it and its summary.
std::string describePasses();

}  // namespace hostir
