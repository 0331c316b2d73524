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
struct ThreadBudget {
  int cores = 1;
  int concurrent_streams = 1;
  int intra_op_threads = 1;
  bool from_environment = false;  // HOSTIR_INTRAOP_THREADS decided it

  // "4 intra-op threads per stream (16 cores / 4 streams)".
  std::string describe() const;
};

// CPUs available to this process (at least 1).
int availableCores();

// The policy above; `intra_op_override` is HOSTIR_INTRAOP_THREADS's text or
// null. Throws hostir::Error if the override is not a positive integer.
ThreadBudget computeThreadBudget(int concurrent_streams, int cores, const char* intra_op_override);

// The policy for this process: availableCores() and HOSTIR_INTRAOP_THREADS.
ThreadBudget computeThreadBudget(int concurrent_streams);

}  // namespace hostir::runtime
