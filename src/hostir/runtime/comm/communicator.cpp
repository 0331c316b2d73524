#include "hostir/runtime/comm/communicator.h"
#include "hostir/ir/device_mesh.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <sstream>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/mpi_world.h"
#include "hostir/runtime/environment_count.h"
#include "hostir/runtime/streams/stream_timeout.h"
#include "hostir/runtime/target_detection.h"
#include "hostir/runtime/thread_budget_aten.h"

namespace hostir {
namespace {

// Stream keys of user streams are >= 0; the communicator's own collectives
// (barrier) use a key of their own so they never interleave with a stream's.
constexpr int64_t kInternalStreamKey = -1;

double seconds(std::chrono::milliseconds duration) {
  return static_cast<double>(duration.count()) / 1000.0;
}

// A Gloo group whose worker threads take the thread budget's count before
// their first collective: otherwise the first ATen call on each (a copy in
// the collective) runs ATen's lazy init, which re-creates caffe2's
// pthreadpool and leaves a new thread spinning through the first run
// (docs/performance.md, "Where a first run's time goes now").
class GlooGroup : public c10d::ProcessGroupGloo {
 public:
  GlooGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
            const c10::intrusive_ptr<Options>& options)
      : ProcessGroupGloo(store, rank, size, options) {
    // One item per worker, each held until all have started one, so every
    // worker runs exactly one; queued before any collective.
    auto started = std::make_shared<Arrivals>();
    for (int i = 0; i < options->threads; ++i) {
      enqueue(c10::make_intrusive<AdoptBudget>(started, options->threads));
    }
  }

 private:
  struct Arrivals {
    std::mutex mutex;
    std::condition_variable all_in;
    int count = 0;
  };

  class AdoptBudget : public AsyncWork {
   public:
    AdoptBudget(std::shared_ptr<Arrivals> arrivals, int workers)
        : AsyncWork(std::vector<std::vector<at::Tensor>>{}),
          arrivals_(std::move(arrivals)),
          workers_(workers) {}
    void run() override {
      runtime::adoptBudgetOnForeignThread();
      std::unique_lock<std::mutex> lock(arrivals_->mutex);
      if (++arrivals_->count == workers_) {
        arrivals_->all_in.notify_all();
      }
      arrivals_->all_in.wait(lock, [this] { return arrivals_->count >= workers_; });
    }

   private:
    std::shared_ptr<Arrivals> arrivals_;
    int workers_;
  };
};

}  // namespace

std::chrono::milliseconds Communicator::timeoutFromEnvironment() {
  const char* text = std::getenv("HOSTIR_COMM_TIMEOUT_S");
  if (text == nullptr || *text == '\0') {
    return kDefaultTimeout;
  }
  // The same rule as HOSTIR_STREAM_TIMEOUT_S (docs/reliability.md).
  return runtime::parseTimeoutSeconds("HOSTIR_COMM_TIMEOUT_S", text);
}

int64_t Communicator::collectivesInFlight() {
  return countFromEnvironment("HOSTIR_COLLECTIVES_IN_FLIGHT", kDefaultCollectivesInFlight, 1, 16,
                              "collectives");
}

int64_t Communicator::collectiveStripes() {
  return countFromEnvironment("HOSTIR_COMM_STRIPES", kDefaultCollectiveStripes, 1,
                              kMaxCollectiveStripes, "stripes");
}

int64_t Communicator::stripeKey(int64_t stream_key, int64_t stripe) {
  HOSTIR_ASSERT(stream_key >= 0 && stripe >= 1 && stripe < kMaxCollectiveStripes,
                "stripe keys are for user streams' stripes 1 to ", kMaxCollectiveStripes - 1);
  return kInternalStreamKey - 1 - stream_key * kMaxCollectiveStripes - (stripe - 1);
}

Communicator::Communicator(const LaunchEnvironment& environment,
                           std::optional<std::chrono::milliseconds> timeout,
                           std::optional<CommBackend> backend)
    : environment_(environment),
      backend_(backend.value_or(commBackendFromEnvironment())),
      timeout_ms_(timeout.value_or(timeoutFromEnvironment()).count()) {
  environment_.validate();
  HOSTIR_CHECK(timeout_ms_.load() > 0, "the communication timeout must be positive, got ",
               timeout_ms_.load(), " ms");
  if (backend_ == CommBackend::Mpi) {
    // MPI's launcher is the rendezvous: no store, no Gloo device.
    HOSTIR_CHECK(environment_.launcher != "torchrun" || environment_.isSingleProcess(),
                 "the mpi collective backend (", environment_.toString(),
                 "): ranks started by `hostir launch` or torchrun cannot form an MPI world; "
                 "start them with mpirun (or srun), or use HOSTIR_COMM_BACKEND=gloo");
    mpi_ = std::make_unique<MpiWorld>(environment_.rank, environment_.world_size,
                                      environment_.toString());
    exchangeTargets();
    return;
  }
  connectStore();
  exchangeTargets();
  createGlooDevice();
}

void Communicator::createGlooDevice() {
  try {
    if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
      gloo_device_ = c10d::ProcessGroupGloo::createDeviceForInterface(interface);
    } else if (environment_.isLocalOnly()) {
      gloo_device_ = c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
    } else {
      gloo_device_ = c10d::ProcessGroupGloo::createDefaultDevice();
    }
  } catch (const std::exception& error) {
    HOSTIR_THROW("Communicator (", environment_.toString(),
                 "): cannot create the Gloo network device: ", c10ErrorMessage(error),
                 "; set GLOO_SOCKET_IFNAME to the network interface to use");
  }
}

void Communicator::connectStore() {
  if (environment_.isSingleProcess()) {
    store_ = c10::make_intrusive<c10d::HashStore>();
    store_->setTimeout(timeout());
    return;
  }
  store_access_ = JobStoreAccess::fromEnvironment(environment_.store_file);
  if (!store_access_.file.empty()) {
    // hostir launch's private rendezvous file: nothing listens on a port.
    try {
      store_ = store_access_.guard(c10::make_intrusive<c10d::FileStore>(
          store_access_.file, static_cast<int>(environment_.world_size)));
      store_->setTimeout(timeout());
    } catch (const std::exception& error) {
      HOSTIR_THROW("Communicator (", environment_.toString(),
                   "): cannot open the rendezvous file HOSTIR_STORE_FILE=", store_access_.file,
                   ": ", c10ErrorMessage(error));
    }
    return;
  }
  // torchrun's agent already hosts a store at MASTER_ADDR:MASTER_PORT and
  // says so; then every rank, rank 0 included, joins it as a client (as
  // PyTorch's own env:// rendezvous does).
  const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  const bool hosts =
      environment_.rank == 0 && !(agent_store != nullptr && std::string(agent_store) == "True");
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(environment_.master_port);
  options.isServer = hosts;
  options.numWorkers = static_cast<std::size_t>(environment_.world_size);
  options.waitWorkers = true;
  options.timeout = timeout();
  try {
    store_ =
        store_access_.guard(c10::make_intrusive<c10d::TCPStore>(environment_.master_addr, options));
  } catch (const std::exception& error) {
    HOSTIR_THROW("Communicator (", environment_.toString(), "): ",
                 hosts ? "could not host the rendezvous store on port "
                       : "could not reach the rendezvous store at ",
                 hosts ? "" : environment_.master_addr + ":", environment_.master_port,
                 " with all ", environment_.world_size, " ranks joining within ",
                 seconds(timeout()),
                 " s (rank 0 hosts it at MASTER_ADDR:MASTER_PORT; check that every rank was "
                 "started with the same address and that the port is free): ",
                 c10ErrorMessage(error));
  }
}

void Communicator::exchangeTargets() {
  const std::string prefix = "hostir/target/";
  std::string mine = localTarget().toString();
  if (mpi_) {
    std::vector<std::string> all = mpi_->allgatherStrings(mine, timeout());
    for (int64_t rank = 0; rank < environment_.world_size; ++rank) {
      device_targets_[rank] = parseTarget(all[static_cast<size_t>(rank)]);
    }
    return;
  }
  store_->set(prefix + std::to_string(environment_.rank),
              std::vector<uint8_t>(mine.begin(), mine.end()));
  for (int64_t rank = 0; rank < environment_.world_size; ++rank) {
    std::vector<uint8_t> value;
    try {
      value = store_->get(prefix + std::to_string(rank));
    } catch (const std::exception& error) {
      HOSTIR_THROW("Communicator (", environment_.toString(), "): rank ", rank,
                   " did not publish its target within ", seconds(timeout()), " s",
                   store_access_.key_prefix.empty()
                       ? ""
                       : " (the job has a HOSTIR_JOB_SECRET: every rank must carry the same)",
                   ": ", c10ErrorMessage(error));
    }
    device_targets_[rank] = parseTarget(std::string(value.begin(), value.end()));
  }
}

Communicator::~Communicator() {
  shutdown();
}

namespace {
std::atomic<Communicator*> g_instance{nullptr};
}  // namespace

Communicator& Communicator::getInstance() {
  static Communicator instance(LaunchEnvironment::fromEnvironment());
  g_instance.store(&instance);
  return instance;
}

Communicator* Communicator::existingInstance() {
  return g_instance.load();
}

void Communicator::setTimeout(std::chrono::milliseconds timeout) {
  HOSTIR_CHECK(timeout.count() > 0, "the communication timeout must be positive, got ",
               timeout.count(), " ms");
  timeout_ms_ = timeout.count();
  if (store_) {
    store_->setTimeout(timeout);
  }
}

int64_t Communicator::rankInTeam(const std::vector<int64_t>& team, int64_t device) {
  std::vector<int64_t> sorted = team;
  std::sort(sorted.begin(), sorted.end());
  auto it = std::find(sorted.begin(), sorted.end(), device);
  HOSTIR_CHECK(it != sorted.end(), "device ", device, " is not in the team ", teamToString(team));
  return static_cast<int64_t>(it - sorted.begin());
}

c10d::ProcessGroup& Communicator::processGroup(const std::vector<int64_t>& team,
                                               int64_t stream_key) {
  HOSTIR_CHECK(!shut_down_, "Communicator: asked for the process group of team ",
               teamToString(team), " after shutdown()");
  std::vector<int64_t> sorted = team;
  std::sort(sorted.begin(), sorted.end());
  HOSTIR_CHECK(!sorted.empty(), "Communicator: a process group needs a non-empty team");
  HOSTIR_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
               "Communicator: ", "team ", teamToString(team),
               " lists a device twice; list each device once");
  HOSTIR_CHECK(sorted.front() >= 0 && sorted.back() < size(), "Communicator: team ",
               teamToString(team), " names a device outside the world of ", size(),
               " ranks; device ids are in [0, ", size(), ")");
  HOSTIR_CHECK(std::binary_search(sorted.begin(), sorted.end(), deviceId()),
               "Communicator: ", "device ", deviceId(), " asked for the process group of team ",
               teamToString(team),
               " which it is not a member of; only members may use a team's group");

  std::shared_ptr<GroupEntry> entry;
  {
    std::lock_guard<std::mutex> lock(groups_mutex_);
    auto& slot = groups_[GroupKey(sorted, stream_key)];
    if (!slot) {
      slot = std::make_shared<GroupEntry>();
    }
    entry = slot;
  }
  // Only this entry's lock is held while the team rendezvous: two streams
  // creating their groups in different orders on different ranks must not
  // wait for each other.
  std::lock_guard<std::mutex> creation_lock(entry->creation_mutex);
  if (!entry->group) {
    entry->group = createProcessGroup(sorted, stream_key);
  }
  return *entry->group;
}

c10::intrusive_ptr<c10d::ProcessGroup> Communicator::createProcessGroup(
    const std::vector<int64_t>& sorted_team, int64_t stream_key) {
  if (mpi_) {
    return mpi_->createGroup(sorted_team, stream_key, timeout());
  }
  std::ostringstream prefix;
  prefix << "hostir/group/team=";
  for (size_t i = 0; i < sorted_team.size(); ++i) {
    prefix << (i ? "," : "") << sorted_team[i];
  }
  prefix << "/stream=" << stream_key;

  auto options = c10d::ProcessGroupGloo::Options::create(timeout());
  options->devices = {gloo_device_};
  // A bounded number of a group's collectives on the link at once, started
  // in posting order: a pipeline's chunk i then arrives before chunk i+k
  // instead of all chunks sharing the link and landing together
  // (docs/streams.md, "Communication channels").
  options->threads = static_cast<int>(collectivesInFlight());
  try {
    // A client connection of its own: TCPStore 1.13 serializes a client's
    // operations, so a blocking get of one stream's rendezvous would stall
    // the rendezvous of another stream's group on the shared connection
    // (and the peer waiting for it: a cross-rank deadlock).
    c10::intrusive_ptr<c10d::Store> base = store_;
    if (!environment_.isSingleProcess() && store_access_.file.empty()) {
      c10d::TCPStoreOptions client;
      client.port = static_cast<std::uint16_t>(environment_.master_port);
      client.isServer = false;
      client.waitWorkers = false;
      client.timeout = timeout();
      base = store_access_.guard(
          c10::make_intrusive<c10d::TCPStore>(environment_.master_addr, client));
    }
    auto group_store = c10::make_intrusive<c10d::PrefixStore>(prefix.str(), base);
    group_store->setTimeout(timeout());
    return c10::make_intrusive<GlooGroup>(group_store,
                                          static_cast<int>(rankInTeam(sorted_team, deviceId())),
                                          static_cast<int>(sorted_team.size()), options);
  } catch (const std::exception& error) {
    HOSTIR_THROW("Communicator (", environment_.toString(),
                 "): creating the process group of team ", teamToString(sorted_team),
                 " for stream key ", stream_key, " failed; every member must reach its first ",
                 "collective on that stream within ", seconds(timeout()),
                 " s: ", c10ErrorMessage(error));
  }
}

int64_t Communicator::numProcessGroups() const {
  std::lock_guard<std::mutex> lock(groups_mutex_);
  int64_t count = 0;
  for (const auto& [key, entry] : groups_) {
    count += entry->group ? 1 : 0;
  }
  return count;
}

std::vector<int64_t> Communicator::worldTeam() const {
  std::vector<int64_t> world(static_cast<size_t>(size()));
  std::iota(world.begin(), world.end(), 0);
  return world;
}

void Communicator::barrier() {
  c10d::ProcessGroup& group = processGroup(worldTeam(), kInternalStreamKey);
  c10d::BarrierOptions options;
  options.timeout = timeout();
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = group.barrier(options);
  } catch (const std::exception& error) {
    HOSTIR_THROW("barrier of all ", size(), " ranks failed to start: ", c10ErrorMessage(error));
  }
  waitWork(work, timeout(), "barrier of all " + std::to_string(size()) + " ranks");
}

void Communicator::shutdown() {
  if (shut_down_) {
    return;
  }
  shut_down_ = true;
  // After a failed collective a peer may be gone for good: wait a moment
  // for the live ones, not a whole timeout for the dead one.
  const std::chrono::milliseconds grace =
      collectiveFailed() ? std::min(timeout(), std::chrono::milliseconds(1000)) : timeout();
  if (mpi_) {
    // MPI owns the buffers of operations in flight: let them land first
    // (MpiWorld aborts the job if some never do).
    mpi_->drain(grace);
  }
  std::map<GroupKey, std::shared_ptr<GroupEntry>> groups;
  {
    std::lock_guard<std::mutex> lock(groups_mutex_);
    groups.swap(groups_);
  }
  groups.clear();  // joins each group's worker threads

  // Rank 0 hosts the store that ranks still creating groups depend on, so it
  // leaves last; a rank that never arrives (it died) delays it by at most
  // the timeout.
  if (store_ && !environment_.isSingleProcess()) {
    try {
      const int64_t arrived = store_->add("hostir/shutdown/arrived", 1);
      if (arrived == environment_.world_size) {
        store_->set("hostir/shutdown/all", std::vector<uint8_t>{1});
      }
      if (environment_.rank == 0) {
        store_->wait({"hostir/shutdown/all"}, grace);
      }
    } catch (const std::exception& error) {
      std::fprintf(stderr,
                   "hostir: warning: rank %lld shut down without every rank having shut down "
                   "(within %.3g s): %s\n",
                   static_cast<long long>(environment_.rank), seconds(timeout()),
                   c10ErrorMessage(error).c_str());
    }
  }
  store_.reset();
  gloo_device_.reset();
  mpi_.reset();
}

}  // namespace hostir
