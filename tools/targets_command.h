#pragma once

#include <string>
#include <vector>

namespace hostir::tools {

// `hostir targets [--ranks N] [--targets LIST] [--tokens S] [--hidden H]
// [--ffn F] [--runs R]` (docs/targets.md): runs a Megatron MLP whose weights carry
// matmul_rhs on a heterogeneous mesh (LIST is HOSTIR_TARGET's value: rank r
// gets entry r % length; default cpu:avx512,cpu:avx2), prints rank 0's host
// program and the executables each device runs, and checks every rank's
// result against plain ATen, and times it (median of R runs) against the
// same program with plain weights. Outside a launch it starts N local ranks of
// itself (default 2); under `hostir launch` it runs on the rank.
int runTargetsCommand(const std::vector<std::string>& args);

}  // namespace hostir::tools
