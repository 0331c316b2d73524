#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "hostir/multidevice/target.h"
#include "hostir/runtime/comm/comm_backend.h"
#include "hostir/runtime/comm/job_store.h"
#include "hostir/runtime/comm/launch_environment.h"

namespace gloo::transport {
class Device;
}

namespace hostir {

class MpiWorld;

// This process's membership in a multi-process job: one rank is one device
// (device id == rank). Ranks meet through a c10d TCPStore hosted by rank 0
// at MASTER_ADDR:MASTER_PORT and talk through Gloo process groups, one per
// (team, key), created on first use and cached. Every rank must issue one
// group's collectives in the same order; the host IR evaluator posts all of
// a team's collectives from one channel in program order, with key 0 (the
// communicator's own barrier uses another key). A group starts its
// collectives in posting order, at most collectivesInFlight() at once
// (docs/streams.md, "Communication channels").
//
// A world of one needs no network: its store is in memory.
//
// The groups are Gloo's by default; with the mpi backend
// (HOSTIR_COMM_BACKEND=mpi, ranks started by mpirun or srun) they are
// ProcessGroupMpi over MPI communicators, and MPI, not a TCPStore, is the
// rendezvous (docs/multidevice.md, "Collective backends").
//
// Every collective posted through this communicator, and the rendezvous
// itself, is bounded by timeout(): HOSTIR_COMM_TIMEOUT_S (seconds, may be
// fractional) or 60 s, changeable with setTimeout().
class Communicator {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{60'000};

  // Joins the job `environment` describes; throws hostir::Error when the
  // other ranks cannot be reached within the timeout. nullopt: the timeout
  // from the environment (HOSTIR_COMM_TIMEOUT_S) or the default.
  // nullopt backend: HOSTIR_COMM_BACKEND, or Gloo.
  explicit Communicator(const LaunchEnvironment& environment,
                        std::optional<std::chrono::milliseconds> timeout = std::nullopt,
                        std::optional<CommBackend> backend = std::nullopt);
  // Shuts down (see shutdown()).
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // The process's communicator, built from the environment on first use.
  // Create at most one Communicator per job: rank 0 hosts the store on
  // MASTER_PORT.
  static Communicator& getInstance();
  // The communicator getInstance() built, or nullptr before its first call;
  // does not build one (building joins the job).
  static Communicator* existingInstance();

  // How many collectives of one process group may be on the link at once
  // (they start in posting order): HOSTIR_COLLECTIVES_IN_FLIGHT, 1 to 16, or
  // kDefaultCollectivesInFlight. Throws for another value.
  static constexpr int64_t kDefaultCollectivesInFlight = 2;
  static int64_t collectivesInFlight();

  // Into how many concurrent pieces (stripes) a large allgather or
  // reduce-scatter is cut, each on a group (hence TCP connections) of its
  // own: HOSTIR_COMM_STRIPES, 1 to kMaxCollectiveStripes, or
  // kDefaultCollectiveStripes. Throws for another value. A piece carries at
  // least kMinStripeBytes, so small collectives take fewer stripes.
  static constexpr int64_t kDefaultCollectiveStripes = 1;
  static constexpr int64_t kMaxCollectiveStripes = 16;
  static constexpr int64_t kMinStripeBytes = int64_t{256} << 10;
  static int64_t collectiveStripes();
  // The key of stripe `stripe` (>= 1) of the group of `stream_key`; stripe
  // 0 is the stream's own group. Stripe keys are below -1, where neither
  // streams (>= 0) nor the communicator's own collectives (-1) are.
  static int64_t stripeKey(int64_t stream_key, int64_t stripe);

  // HOSTIR_COMM_TIMEOUT_S, or kDefaultTimeout when unset; throws for a value
  // that is not a positive number.
  static std::chrono::milliseconds timeoutFromEnvironment();

  // This rank, which is also this process's device id.
  int64_t deviceId() const {
    return environment_.rank;
  }
  int64_t size() const {
    return environment_.world_size;
  }
  // Every rank of the job, 0 to size() - 1: the team of job-wide collectives.
  std::vector<int64_t> worldTeam() const;
  int64_t localRank() const {
    return environment_.local_rank;
  }
  const LaunchEnvironment& environment() const {
    return environment_;
  }
  CommBackend backend() const {
    return backend_;
  }

  // Every device's target (docs/targets.md), exchanged through the store
  // when the communicator is created: each rank publishes localTarget().
  const DeviceTargets& deviceTargets() const {
    return device_targets_;
  }

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(timeout_ms_.load());
  }
  // Applies to collectives posted from now on. Groups created from now on
  // also rendezvous within it.
  void setTimeout(std::chrono::milliseconds timeout);

  // The process group of `team` (device ids, any order, each in [0, size()))
  // for collectives posted from the stream with `stream_key`. Every member
  // must ask for it (creation is a rendezvous of the team); later calls
  // return the cached group. Inside it, a device's rank is its position in
  // the sorted team (rankInTeam). Thread-safe: creating one group does not
  // block the creation or use of another.
  c10d::ProcessGroup& processGroup(const std::vector<int64_t>& team, int64_t stream_key = 0);
  // Position of `device` in the sorted `team`; throws if absent.
  static int64_t rankInTeam(const std::vector<int64_t>& team, int64_t device);
  // How many groups have been created so far.
  int64_t numProcessGroups() const;

  // Blocks until every rank reaches this call (on its own group), within the
  // timeout.
  void barrier();

  // Destroys the process groups, then, once every rank has reached
  // shutdown (or the timeout has passed), the store. Safe to call twice;
  // nothing may be posted afterwards.
  void shutdown();
  bool isShutDown() const {
    return shut_down_;
  }

 private:
  struct GroupEntry {
    std::mutex creation_mutex;
    c10::intrusive_ptr<c10d::ProcessGroup> group;
  };
  using GroupKey = std::pair<std::vector<int64_t>, int64_t>;  // sorted team, stream key

  c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroup(const std::vector<int64_t>& team,
                                                            int64_t stream_key);
  void connectStore();
  void exchangeTargets();
  void createGlooDevice();

  LaunchEnvironment environment_;
  CommBackend backend_;
  std::atomic<int64_t> timeout_ms_;
  // How this job's ranks reach their store (job_store.h).
  JobStoreAccess store_access_;
  c10::intrusive_ptr<c10d::Store> store_;
  DeviceTargets device_targets_;
  std::shared_ptr<gloo::transport::Device> gloo_device_;
  std::unique_ptr<MpiWorld> mpi_;  // the mpi backend only

  mutable std::mutex groups_mutex_;
  std::map<GroupKey, std::shared_ptr<GroupEntry>> groups_;
  bool shut_down_ = false;
};

}  // namespace hostir
