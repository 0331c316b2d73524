#pragma once

#include <string>

namespace hostir {

// The library that carries a job's collectives (docs/multidevice.md,
// "Collective backends"). Gloo works under every launcher; MPI needs ranks
// that an MPI launcher (mpirun, srun) started, and uses the MPI library's
// transports (shared memory between ranks of one machine).
enum class CommBackend { Gloo, Mpi };

// "gloo" or "mpi".
std::string toString(CommBackend backend);

// A backend by its name; throws hostir::Error naming `source` (where the
// name came from) and listing the valid names for any other.
CommBackend parseCommBackend(const std::string& name, const std::string& source);

// HOSTIR_COMM_BACKEND, or Gloo when it is unset or empty.
CommBackend commBackendFromEnvironment();

}  // namespace hostir
