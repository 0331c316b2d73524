#pragma once

#include "hostir/ir/pass_pipeline.h"

namespace hostir {

class HostIrContainer;

// The host IR stage of the one pass pipeline (ir/pass_pipeline.h).
using HostIrPass = Pass<HostIrContainer>;
using HostIrPassManager = PassPipeline<HostIrContainer>;

}  // namespace hostir
