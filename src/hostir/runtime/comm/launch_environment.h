#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace hostir {

// Where this process sits in a multi-process job, as its launcher described
// it in environment variables. Read in this order, the first launcher whose
// rank variable is set wins:
//   torchrun / `hostir launch`: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE
//   Open MPI (mpirun):          OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,
//                               OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_SIZE
//   Slurm (srun):               SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
//                               SLURM_NTASKS_PER_NODE
// The rendezvous address is MASTER_ADDR / MASTER_PORT for all of them
// (default 127.0.0.1:29500; mpirun and srun do not set them, so a job across
// machines must export them). Without any of these variables the process is
// a world of one. A missing local rank / local world size defaults to the
// global one (a job on one machine).
struct LaunchEnvironment {
  static constexpr int kDefaultMasterPort = 29500;

  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  int64_t local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = kDefaultMasterPort;
  // HOSTIR_STORE_FILE: the ranks meet in this file, not at the port
  // (`hostir launch` sets it; job_store.h); empty: the port.
  std::string store_file;
  // "torchrun", "Open MPI", "Slurm" or "none": which variables were read.
  std::string launcher = "none";

  // Reads the process environment; throws hostir::Error for a bad one
  // (world size < 1, rank outside [0, world size), a non-number, ...).
  static LaunchEnvironment fromEnvironment();
  // Same, reading variables through `lookup` (nullopt: not set).
  using Lookup = std::function<std::optional<std::string>(const std::string& name)>;
  static LaunchEnvironment fromLookup(const Lookup& lookup);

  // Throws hostir::Error naming the inconsistent values.
  void validate() const;

  bool isSingleProcess() const {
    return world_size == 1;
  }
  // Whether every rank runs on this machine, so Gloo can use loopback.
  bool isLocalOnly() const;
  // "rank 1 of 4 (local rank 1 of 4, torchrun, master 127.0.0.1:29500)".
  std::string toString() const;
};

}  // namespace hostir
