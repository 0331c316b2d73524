#include "hostir/runtime/streams/thread_budget.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "hostir/ir/error.h"

namespace hostir::runtime {

std::string ThreadBudget::describe() const {
  std::string text = std::to_string(intra_op_threads) + " intra-op thread(s) per op, ";
  text += compute_slots >= concurrent_streams
              ? std::to_string(concurrent_streams) + " streams computing at once"
              : std::to_string(compute_slots) + " op(s) at a time in program order";
  text += " (" + std::to_string(cores) + " cores for this rank";
  return text + (from_environment ? "; HOSTIR_INTRAOP_THREADS)" : ")");
}

int availableCores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    return std::max(1, CPU_COUNT(&allowed));
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

namespace {

int parsePositive(const char* name, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  HOSTIR_CHECK(end != text && *end == '\0' && value >= 1 && value <= 4096, name,
               " must be a positive integer (at most 4096), got '", text, "'");
  return static_cast<int>(value);
}

bool isSet(const char* text) {
  return text != nullptr && *text != '\0';
}

}  // namespace

ThreadBudget computeThreadBudget(const ThreadBudgetInputs& inputs) {
  HOSTIR_CHECK(inputs.concurrent_streams >= 1, "the thread budget needs at least 1 stream, got ",
               inputs.concurrent_streams);
  HOSTIR_CHECK(inputs.cores >= 1, "the thread budget needs at least 1 core, got ", inputs.cores);
  HOSTIR_CHECK(inputs.ranks_sharing_cores >= 1,
               "the thread budget needs at least 1 rank sharing the cores, got ",
               inputs.ranks_sharing_cores);
  ThreadBudget budget;
  budget.cores = std::max(1, inputs.cores / inputs.ranks_sharing_cores);
  budget.concurrent_streams = inputs.concurrent_streams;
  if (inputs.communicates) {
    budget.compute_slots = 1;
    budget.intra_op_threads = budget.cores >= 4 ? budget.cores - 1 : budget.cores;
  } else {
    budget.compute_slots = inputs.concurrent_streams;
    budget.intra_op_threads = std::max(1, budget.cores / inputs.concurrent_streams);
  }
  if (isSet(inputs.compute_slots_override)) {
    budget.compute_slots = parsePositive("HOSTIR_COMPUTE_SLOTS", inputs.compute_slots_override);
  }
  if (isSet(inputs.intra_op_override)) {
    budget.intra_op_threads = parsePositive("HOSTIR_INTRAOP_THREADS", inputs.intra_op_override);
    budget.from_environment = true;
  }
  return budget;
}

ThreadBudget computeThreadBudget(int concurrent_streams, int cores, const char* intra_op_override) {
  return computeThreadBudget(ThreadBudgetInputs{.concurrent_streams = concurrent_streams,
                                                .cores = cores,
                                                .intra_op_override = intra_op_override});
}

ThreadBudget computeThreadBudget(int concurrent_streams, bool communicates,
                                 int ranks_sharing_cores) {
  return computeThreadBudget(
      ThreadBudgetInputs{.concurrent_streams = concurrent_streams,
                         .cores = availableCores(),
                         .ranks_sharing_cores = ranks_sharing_cores,
                         .communicates = communicates,
                         .intra_op_override = std::getenv("HOSTIR_INTRAOP_THREADS"),
                         .compute_slots_override = std::getenv("HOSTIR_COMPUTE_SLOTS")});
}

}  // namespace hostir::runtime
