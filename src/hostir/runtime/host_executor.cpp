#include "hostir/runtime/host_executor.h"

#include "hostir/host_ir/lowering.h"

namespace hostir {

HostExecutor::HostExecutor(const Fusion& fusion, HostIrEvaluatorParams params)
    : evaluator_(lowerToHostIr(fusion), params) {}

}  // namespace hostir
