#include "hostir/runtime/comm/comm_backend.h"

#include <cstdlib>

#include "hostir/ir/error.h"

namespace hostir {

std::string toString(CommBackend backend) {
  return backend == CommBackend::Mpi ? "mpi" : "gloo";
}

CommBackend parseCommBackend(const std::string& name, const std::string& source) {
  if (name == "gloo") {
    return CommBackend::Gloo;
  }
  if (name == "mpi") {
    return CommBackend::Mpi;
  }
  HOSTIR_THROW("unknown collective backend '", name, "' (", source,
               "); the valid backends are gloo (the default, any launcher) and mpi (ranks "
               "started by mpirun or srun)");
}

CommBackend commBackendFromEnvironment() {
  const char* text = std::getenv("HOSTIR_COMM_BACKEND");
  if (text == nullptr || *text == '\0') {
    return CommBackend::Gloo;
  }
  return parseCommBackend(text, "HOSTIR_COMM_BACKEND");
}

}  // namespace hostir
