#pragma once

#include <pybind11/pybind11.h>

namespace hostir::python {

// The job-level functions of `hostir._C` that hostir.distributed and
// hostir.tracing wrap: the launch environment, joining the job, barrier,
// collectives on plain tensors, the thread budget, the chunk-count model and
// the trace of a stretch of a run.
void bindDistributed(pybind11::module_& m);

}  // namespace hostir::python
