#include "hostir/runtime/comm/launch_environment.h"

#include <charconv>
#include <cstdlib>
#include <vector>

#include "hostir/ir/error.h"

namespace hostir {
namespace {

// The names one launcher uses for the four coordinates of a rank.
struct VariableNames {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  const char* local_world_size;
};

const std::vector<VariableNames>& knownLaunchers() {
  static const std::vector<VariableNames> launchers = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
  };
  return launchers;
}

int64_t parseInteger(const std::string& name, const std::string& text, const char* launcher) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  HOSTIR_CHECK(ec == std::errc() && end == text.data() + text.size(), "bad launch environment (",
               launcher, "): ", name, "='", text, "' is not a whole number");
  return value;
}

std::optional<int64_t> readInteger(const LaunchEnvironment::Lookup& lookup, const char* name,
                                   const char* launcher) {
  std::optional<std::string> text = lookup(name);
  if (!text) {
    return std::nullopt;
  }
  return parseInteger(name, *text, launcher);
}

}  // namespace

LaunchEnvironment LaunchEnvironment::fromEnvironment() {
  return fromLookup([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
}

LaunchEnvironment LaunchEnvironment::fromLookup(const Lookup& lookup) {
  LaunchEnvironment environment;
  for (const VariableNames& names : knownLaunchers()) {
    std::optional<std::string> rank_text = lookup(names.rank);
    std::optional<std::string> world_text = lookup(names.world_size);
    if (!rank_text && !world_text) {
      continue;
    }
    HOSTIR_CHECK(rank_text && world_text, "bad launch environment (", names.launcher,
                 "): ", rank_text ? names.rank : names.world_size, " is set but ",
                 rank_text ? names.world_size : names.rank,
                 " is not; a launcher sets both (or neither, for a world of one)");
    environment.launcher = names.launcher;
    environment.rank = parseInteger(names.rank, *rank_text, names.launcher);
    environment.world_size = parseInteger(names.world_size, *world_text, names.launcher);
    environment.local_rank =
        readInteger(lookup, names.local_rank, names.launcher).value_or(environment.rank);
    // Slurm writes SLURM_NTASKS_PER_NODE as "2(x3)" on uneven jobs: use it
    // only when it is a plain number.
    std::optional<std::string> local_size_text = lookup(names.local_world_size);
    environment.local_world_size = environment.world_size;
    if (local_size_text) {
      int64_t value = 0;
      auto [end, ec] = std::from_chars(local_size_text->data(),
                                       local_size_text->data() + local_size_text->size(), value);
      if (ec == std::errc() && end == local_size_text->data() + local_size_text->size()) {
        environment.local_world_size = value;
      } else {
        HOSTIR_CHECK(environment.launcher == "Slurm", "bad launch environment (", names.launcher,
                     "): ", names.local_world_size, "='", *local_size_text,
                     "' is not a whole number");
      }
    }
    break;
  }
  if (std::optional<std::string> addr = lookup("MASTER_ADDR"); addr && !addr->empty()) {
    environment.master_addr = *addr;
  }
  if (std::optional<std::string> port = lookup("MASTER_PORT"); port && !port->empty()) {
    environment.master_port = static_cast<int>(parseInteger("MASTER_PORT", *port, "rendezvous"));
    HOSTIR_CHECK(environment.master_port >= 1 && environment.master_port <= 65535,
                 "bad launch environment: MASTER_PORT=", *port, " is not a port (1..65535)");
  }
  environment.store_file = lookup("HOSTIR_STORE_FILE").value_or("");
  environment.validate();
  return environment;
}

void LaunchEnvironment::validate() const {
  const std::string where = "bad launch environment (" + launcher + "): ";
  HOSTIR_CHECK(world_size >= 1, where, "the world size is ", world_size,
               "; it must be at least 1 (the number of ranks)");
  HOSTIR_CHECK(rank >= 0 && rank < world_size, where, "rank ", rank, " is outside the world of ",
               world_size, " ranks; a rank is in [0, ", world_size, ")");
  HOSTIR_CHECK(local_world_size >= 1 && local_world_size <= world_size, where,
               "the local world size is ", local_world_size, "; it must be in [1, ", world_size,
               "] (the world size)");
  HOSTIR_CHECK(local_rank >= 0 && local_rank < local_world_size, where, "local rank ", local_rank,
               " is outside the ", local_world_size, " local ranks; a local rank is in [0, ",
               local_world_size, ")");
  HOSTIR_CHECK(master_port >= 1 && master_port <= 65535, where, "master port ", master_port,
               " is not a port (1..65535)");
}

bool LaunchEnvironment::isLocalOnly() const {
  const bool loopback_master =
      master_addr == "localhost" || master_addr == "::1" || master_addr.rfind("127.", 0) == 0;
  return isSingleProcess() || loopback_master || local_world_size == world_size;
}

std::string LaunchEnvironment::toString() const {
  return detail::concat("rank ", rank, " of ", world_size, " (local rank ", local_rank, " of ",
                        local_world_size, ", ", launcher, ", master ", master_addr, ":",
                        master_port, ")");
}

}  // namespace hostir
