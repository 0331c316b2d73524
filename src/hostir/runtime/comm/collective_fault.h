#pragma once

#include <cstdint>
#include <string>

namespace hostir::runtime {

// Fault injection for tests only (docs/reliability.md, "Faults during
// training"): the process dies or hangs when its host programs are about to
// post their `nth` collective from now on (1: the next one), so a test can
// stop a rank in the middle of a program, between two of its collectives.
// `kind`: "exit" (std::_Exit(0): no word to the others, no failing status),
// "kill" (SIGKILL), "stop" (SIGSTOP) or "sleep" (sleeps for ever). `nth` 0
// disarms it. Python: hostir._C._testing.fault_at_collective(nth, kind).
void injectFaultAtCollectiveForTesting(std::int64_t nth, const std::string& kind);

// Called by the host evaluator before it posts a collective: does the
// armed fault when its turn has come, else nothing (one relaxed atomic
// read when disarmed).
void maybeInjectCollectiveFault();

}  // namespace hostir::runtime
