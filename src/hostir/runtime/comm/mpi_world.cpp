#include "hostir/runtime/comm/mpi_world.h"

#include <cstdio>
#include <functional>
#include <thread>

#include "hostir/ir/device_mesh.h"
#include "hostir/ir/error.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/mpi_process_group.h"
#include "hostir/runtime/comm/mpi_work.h"

namespace hostir {
namespace {

std::string threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// The tag of a group's rendezvous and MPI_Comm_create_group: the same on
// every member, and distinct between groups (concurrent creations of
// overlapping groups must not share one).
int groupTag(const std::vector<int64_t>& sorted_team, int64_t stream_key) {
  int* tag_upper_bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_upper_bound, &found);
  const int64_t bound = found ? *tag_upper_bound : 32767;  // the standard's minimum
  const std::string key = teamToString(sorted_team) + "/" + std::to_string(stream_key);
  return static_cast<int>(std::hash<std::string>{}(key) % static_cast<size_t>(bound));
}

double seconds(std::chrono::milliseconds duration) {
  return static_cast<double>(duration.count()) / 1000.0;
}

c10::intrusive_ptr<c10d::Work> postWork(MpiProgress& progress, std::vector<MPI_Request> requests,
                                        std::vector<at::Tensor> buffers) {
  auto work =
      c10::make_intrusive<MpiWork>(c10d::OpType::UNKNOWN, std::move(requests), std::move(buffers));
  progress.add(work);
  return work;
}

}  // namespace

MpiWorld::MpiWorld(int64_t rank, int64_t world_size, const std::string& description) {
  const std::string where = "the mpi collective backend (" + description + "): ";
  // Checked before MPI starts: a bad value must not leave MPI unfinalised.
  const std::chrono::microseconds poll_interval = MpiProgress::pollInterval();
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  HOSTIR_CHECK(!finalized, where,
               "MPI was already finalised in this process (a Communicator was shut down) and "
               "cannot start again; create one Communicator per process");
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    HOSTIR_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS,
                 where, "MPI_Init_thread failed");
    owns_library_ = true;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (owns_library_) {
      MPI_Finalize();
    }
    HOSTIR_THROW(where, "the MPI library provides ", threadLevelName(provided),
                 ", not MPI_THREAD_MULTIPLE: hostir posts collectives from several threads. Use "
                 "an MPI built with thread support, or HOSTIR_COMM_BACKEND=gloo");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  HOSTIR_CHECK(rank_ == rank && size_ == world_size, where, "MPI's world is rank ", rank_, " of ",
               size_, ", not the launch environment's; start every rank with one mpirun (or srun)");
  progress_ = std::make_unique<MpiProgress>(poll_interval);
}

MpiWorld::~MpiWorld() {
  const int64_t unfinished = progress_->numUnfinished();
  progress_.reset();
  if (unfinished > 0 || gave_up_) {
    // MPI cannot cancel a collective and still owns its buffers; finalising
    // would wait for a peer that may never come.
    std::fprintf(stderr,
                 "hostir: rank %d: %lld MPI operation(s) never completed (a peer is gone or "
                 "stuck elsewhere); MPI_Abort ends the whole job\n",
                 rank_, static_cast<long long>(unfinished));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (owns_library_) {
    MPI_Finalize();
  }
}

bool MpiWorld::drain(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (progress_->numUnfinished() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return progress_->numUnfinished() == 0;
}

void MpiWorld::waitFor(const c10::intrusive_ptr<c10d::Work>& work,
                       std::chrono::milliseconds timeout, const std::string& what) {
  try {
    work->wait(timeout);
  } catch (const std::exception& error) {
    gave_up_ = true;
    HOSTIR_THROW(what, " did not complete within the communication timeout of ", seconds(timeout),
                 " s: a rank did not take part (it may have exited or be stuck elsewhere); raise "
                 "HOSTIR_COMM_TIMEOUT_S if it is only slow. Cause: ",
                 c10ErrorMessage(error));
  }
}

c10::intrusive_ptr<c10d::ProcessGroup> MpiWorld::createGroup(
    const std::vector<int64_t>& sorted_team, int64_t stream_key,
    std::chrono::milliseconds timeout) {
  const int tag = groupTag(sorted_team, stream_key);
  const std::string what = "creating the MPI communicator of team " + teamToString(sorted_team) +
                           " for stream key " + std::to_string(stream_key);
  // MPI_Comm_create_group blocks without a timeout: first every member
  // greets every other one, a bounded wait, so that a member that never
  // comes is an error here instead of a hang there.
  const auto members = static_cast<int64_t>(sorted_team.size());
  at::Tensor greetings = at::zeros({members + 1}, at::kByte);
  std::vector<MPI_Request> requests;
  for (int64_t i = 0; i < members; ++i) {
    const int peer = static_cast<int>(sorted_team[i]);
    if (peer == rank_) {
      continue;
    }
    MPI_Request sent = MPI_REQUEST_NULL;
    MPI_Request received = MPI_REQUEST_NULL;
    checkMpi(MPI_Isend(greetings.data_ptr<uint8_t>() + members, 1, MPI_BYTE, peer, tag,
                       MPI_COMM_WORLD, &sent),
             "MPI_Isend");
    checkMpi(MPI_Irecv(greetings.data_ptr<uint8_t>() + i, 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                       &received),
             "MPI_Irecv");
    requests.push_back(sent);
    requests.push_back(received);
  }
  waitFor(postWork(*progress_, std::move(requests), {greetings}), timeout, what);

  std::vector<int> ranks(sorted_team.begin(), sorted_team.end());
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Group team_group = MPI_GROUP_NULL;
  MPI_Comm communicator = MPI_COMM_NULL;
  try {
    checkMpi(MPI_Comm_group(MPI_COMM_WORLD, &world_group), "MPI_Comm_group");
    checkMpi(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &team_group),
             "MPI_Group_incl");
    checkMpi(MPI_Comm_create_group(MPI_COMM_WORLD, team_group, tag, &communicator),
             "MPI_Comm_create_group");
    checkMpi(MPI_Comm_set_errhandler(communicator, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  } catch (const std::exception& error) {
    HOSTIR_THROW(what, " failed: ", error.what());
  }
  MPI_Group_free(&team_group);
  MPI_Group_free(&world_group);
  return c10::make_intrusive<ProcessGroupMpi>(communicator, *progress_);
}

std::vector<std::string> MpiWorld::allgatherStrings(const std::string& mine,
                                                    std::chrono::milliseconds timeout) {
  at::Tensor lengths = at::empty({size_}, at::kInt);
  at::Tensor my_length = at::full({1}, static_cast<int>(mine.size()), at::kInt);
  MPI_Request request = MPI_REQUEST_NULL;
  checkMpi(MPI_Iallgather(my_length.data_ptr(), 1, MPI_INT, lengths.data_ptr(), 1, MPI_INT,
                          MPI_COMM_WORLD, &request),
           "MPI_Iallgather");
  waitFor(postWork(*progress_, {request}, {lengths, my_length}), timeout,
          "exchanging the ranks' targets over MPI");

  std::vector<int> counts(lengths.data_ptr<int>(), lengths.data_ptr<int>() + size_);
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  for (int rank = 1; rank < size_; ++rank) {
    offsets[rank] = offsets[rank - 1] + counts[rank - 1];
  }
  at::Tensor text = at::empty({offsets.back() + counts.back() + 1}, at::kChar);
  at::Tensor sent = at::empty({static_cast<int64_t>(mine.size()) + 1}, at::kChar);
  std::copy(mine.begin(), mine.end(), sent.data_ptr<int8_t>());
  checkMpi(MPI_Iallgatherv(sent.data_ptr(), counts[rank_], MPI_CHAR, text.data_ptr(), counts.data(),
                           offsets.data(), MPI_CHAR, MPI_COMM_WORLD, &request),
           "MPI_Iallgatherv");
  waitFor(postWork(*progress_, {request}, {text, sent}), timeout,
          "exchanging the ranks' targets over MPI");

  std::vector<std::string> all;
  const char* characters = reinterpret_cast<const char*>(text.data_ptr<int8_t>());
  for (int rank = 0; rank < size_; ++rank) {
    all.emplace_back(characters + offsets[rank], static_cast<size_t>(counts[rank]));
  }
  return all;
}

}  // namespace hostir
