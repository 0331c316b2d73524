#include "hostir/runtime/thread_budget.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "hostir/ir/error.h"

namespace hostir::runtime {

std::string ThreadBudget::describe() const {
  std::string text = std::to_string(intra_op_threads) + " intra-op thread(s) per stream (";
  if (from_environment) {
    return text + "HOSTIR_INTRAOP_THREADS; " + std::to_string(cores) + " cores, " +
           std::to_string(concurrent_streams) + " streams)";
  }
  return text + std::to_string(cores) + " cores / " + std::to_string(concurrent_streams) +
         " streams)";
}

int availableCores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    return std::max(1, CPU_COUNT(&allowed));
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ThreadBudget computeThreadBudget(int concurrent_streams, int cores, const char* intra_op_override) {
  HOSTIR_CHECK(concurrent_streams >= 1, "the thread budget needs at least 1 stream, got ",
               concurrent_streams);
  HOSTIR_CHECK(cores >= 1, "the thread budget needs at least 1 core, got ", cores);
  ThreadBudget budget;
  budget.cores = cores;
  budget.concurrent_streams = concurrent_streams;
  if (intra_op_override != nullptr && *intra_op_override != '\0') {
    char* end = nullptr;
    const long threads = std::strtol(intra_op_override, &end, 10);
    HOSTIR_CHECK(end != intra_op_override && *end == '\0' && threads >= 1 && threads <= 4096,
                 "HOSTIR_INTRAOP_THREADS must be a positive integer, got '", intra_op_override,
                 "'");
    budget.intra_op_threads = static_cast<int>(threads);
    budget.from_environment = true;
    return budget;
  }
  budget.intra_op_threads = std::max(1, cores / concurrent_streams);
  return budget;
}

ThreadBudget computeThreadBudget(int concurrent_streams) {
  return computeThreadBudget(concurrent_streams, availableCores(),
                             std::getenv("HOSTIR_INTRAOP_THREADS"));
}

}  // namespace hostir::runtime
