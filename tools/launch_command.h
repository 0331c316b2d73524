#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hostir {

// `hostir launch -n N [--port P] [--grace-period S] -- COMMAND ARGS...`
//
// Starts N local ranks of COMMAND with the environment torchrun sets (RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1,
// MASTER_PORT) and HOSTIR_STORE_FILE, the file in a private (0700) folder
// where hostir's ranks meet (removed after the job; docs/multidevice.md, "Who
// can join a job"), prefixes every line a rank writes with `[rank K] ` (stdout to
// stdout, stderr to stderr), and, when a rank fails (non-zero exit or a
// signal), terminates the others (SIGTERM, then SIGKILL after the grace
// period). Returns 0 only if every rank exits 0; otherwise the first failing
// rank's exit status (128 + signal number for a signal), or 2 for bad usage.
//
// `argc`/`argv` are the arguments after the word `launch`.
int runLaunchCommand(int argc, char** argv);

// The kernel's range of ephemeral ports (those of outgoing connections and
// of a bind to port 0): /proc/sys/net/ipv4/ip_local_port_range, or Linux's
// default 32768-60999.
std::pair<int, int> ephemeralPortRange();

// The rendezvous port `hostir launch` picks without --port: one nobody
// listens on, below the ephemeral range. Between the pick and rank 0's bind,
// other processes' connections (a concurrent job's Gloo pairs) take ephemeral
// ports and could take this one; outside that range only a process binding
// it on purpose can. Falls back to a port the kernel picks.
std::optional<int> findRendezvousPort();

// Whether a launcher (torchrun / `hostir launch`, mpirun, srun) started this
// process as one of its ranks.
bool launchedAsRank();

// Runs `hostir SUBCOMMAND ARGS...` (this executable) as `ranks` local ranks
// under `hostir launch`; returns the launch's exit status. For commands that
// start their own ranks when run by hand.
int relaunchAsRanks(int64_t ranks, const std::string& subcommand,
                    const std::vector<std::string>& args);

}  // namespace hostir
