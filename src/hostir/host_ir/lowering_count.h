#pragma once

#include <cstdint>

namespace hostir {

// How many fusions this process has lowered to host programs
// (lowerSegmentsToHostIr, which lowerToHostIr calls; lowering.h); tests
// count the lowerings an entry point makes per definition.
int64_t hostIrLoweringCount();

}  // namespace hostir
