#pragma once

#include <string>

namespace hostir::runtime {

// How the machine's cores are shared between stream workers and ATen's
// intra-op threads.
//
// Policy: a program keeps up to numberOfStreams streams busy at once (stream
// indices are `StreamIdx % numberOfStreams`, stream 0 among them), and each
// busy stream runs one ATen op whose intra-op pool may fan out further. To
// keep streams * intra-op threads within the cores, each op gets
//     intra_op_threads = max(1, cores / numberOfStreams)
// where cores is the number of CPUs this process may run on (its affinity
// mask, so taskset and container limits are respected). A worker blocked on
// an event or a collective uses no core, so the budget errs on the side of
// idle cores, never oversubscription. HOSTIR_INTRAOP_THREADS=N overrides it
// (e.g. 1 for many small ops, or cores when a program uses a single stream).
//
// A program that communicates follows another rule (docs/streams.md, "Thread
// budget"): its compute runs in program order, one op at a time
// (compute_slots = 1, see compute_gate.h), each op with all of this rank's
// cores (the process's CPUs divided among the ranks that share them,
// LOCAL_WORLD_SIZE), so chunk i's compute finishes before chunk i+1's starts
// and chunk i's communication overlaps chunk i+1's compute. Gloo's transfer
// thread gets no reserved core below 4 cores per rank: on a slow link it
// mostly waits. HOSTIR_COMPUTE_SLOTS=N overrides the slots.
struct ThreadBudget {
  int cores = 1;
  int concurrent_streams = 1;
  int intra_op_threads = 1;
  // Compute ops that may run at once; fewer than concurrent_streams means
  // they are admitted in program order (ComputeGate).
  int compute_slots = 1;
  bool from_environment = false;  // HOSTIR_INTRAOP_THREADS decided it

  // "4 intra-op threads per stream (16 cores / 4 streams)".
  std::string describe() const;
};

// CPUs available to this process (at least 1).
int availableCores();

struct ThreadBudgetInputs {
  int concurrent_streams = 1;
  int cores = 1;                            // CPUs this process may run on
  int ranks_sharing_cores = 1;              // ranks of the job on those CPUs (LOCAL_WORLD_SIZE)
  bool communicates = false;                // the program posts collectives
  const char* intra_op_override = nullptr;  // HOSTIR_INTRAOP_THREADS's text
  const char* compute_slots_override = nullptr;  // HOSTIR_COMPUTE_SLOTS's text
};

// The policy above. Throws hostir::Error if an override is not a positive
// integer.
ThreadBudget computeThreadBudget(const ThreadBudgetInputs& inputs);

// The single-device policy; `intra_op_override` is HOSTIR_INTRAOP_THREADS's
// text or null.
ThreadBudget computeThreadBudget(int concurrent_streams, int cores, const char* intra_op_override);

// The policy for this process: availableCores(), HOSTIR_INTRAOP_THREADS and
// HOSTIR_COMPUTE_SLOTS.
ThreadBudget computeThreadBudget(int concurrent_streams, bool communicates = false,
                                 int ranks_sharing_cores = 1);

}  // namespace hostir::runtime
