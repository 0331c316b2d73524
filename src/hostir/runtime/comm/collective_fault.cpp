#include "hostir/runtime/comm/collective_fault.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {

enum class Fault : int { kNone, kExit, kKill, kStop, kSleep };

std::atomic<std::int64_t> g_collectives_left{0};
std::atomic<Fault> g_fault{Fault::kNone};

}  // namespace

void injectFaultAtCollectiveForTesting(std::int64_t nth, const std::string& kind) {
  HOSTIR_CHECK(nth >= 0, "fault_at_collective: nth must be >= 0 (0 disarms), got ", nth);
  Fault fault = kind == "exit"    ? Fault::kExit
                : kind == "kill"  ? Fault::kKill
                : kind == "stop"  ? Fault::kStop
                : kind == "sleep" ? Fault::kSleep
                                  : Fault::kNone;
  HOSTIR_CHECK(fault != Fault::kNone, "fault_at_collective: kind '", kind,
               "' is not one of exit, kill, stop, sleep");
  g_fault.store(nth == 0 ? Fault::kNone : fault);
  g_collectives_left.store(nth);
}

void maybeInjectCollectiveFault() {
  if (g_fault.load(std::memory_order_relaxed) == Fault::kNone ||
      g_collectives_left.fetch_sub(1) != 1) {
    return;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  switch (g_fault.load()) {
    case Fault::kExit: std::_Exit(0);
    case Fault::kKill: ::raise(SIGKILL); break;
    case Fault::kStop: ::raise(SIGSTOP); break;
    case Fault::kSleep:
      while (true) {
        ::pause();
      }
    case Fault::kNone: break;
  }
}

}  // namespace hostir::runtime
