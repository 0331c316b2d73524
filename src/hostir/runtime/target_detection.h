#pragma once

#include <string>

#include "hostir/multidevice/target.h"

namespace hostir {

// This process's target: HOSTIR_TARGET when set, else detected from
// /proc/cpuinfo (docs/targets.md). HOSTIR_TARGET is one target
// ("cpu:avx2") or a comma-separated list, entry `rank % length` for each
// rank ("cpu:avx512,cpu:avx2": even ranks avx512, odd ranks avx2), so one
// launch builds a heterogeneous mesh on one machine. A bad value is an error
// listing the valid targets. Computed once per process.
const Target& localTarget();

// The same from explicit values (for tests): `env` as HOSTIR_TARGET (empty:
// unset), `rank` for a list, `cpuinfo` as /proc/cpuinfo's text.
Target chooseTarget(const std::string& env, int64_t rank, const std::string& cpuinfo);

// This process's target and CPU, as the benchmarks print them:
// "cpu:avx512 (AMD EPYC 9R14)", the model from /proc/cpuinfo ("cpu:avx2
// (HOSTIR_TARGET; AMD EPYC)" when HOSTIR_TARGET sets the target).
std::string describeLocalMachine();

// The "flags" (x86) or "Features" (Arm) line of /proc/cpuinfo's text.
std::string cpuFlags(const std::string& cpuinfo);

}  // namespace hostir
