// The launch environment and the Communicator's start-up: what it reads from
// torchrun / Open MPI / Slurm variables, and the clear errors for a bad
// environment. These tests are single-process (each rank runs them alone).
#include <ATen/ATen.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/comm/launch_environment.h"

namespace hostir {
namespace {

using Variables = std::map<std::string, std::string>;

LaunchEnvironment parse(const Variables& variables) {
  return LaunchEnvironment::fromLookup([&](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

// The message of the hostir::Error `body` throws ("" if none).
template <typename Body>
std::string errorOf(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LaunchEnvironmentTest, NoVariablesIsAWorldOfOne) {
  LaunchEnvironment environment = parse({});
  EXPECT_EQ(environment.rank, 0);
  EXPECT_EQ(environment.world_size, 1);
  EXPECT_TRUE(environment.isSingleProcess());
  EXPECT_EQ(environment.launcher, "none");
}

TEST(LaunchEnvironmentTest, ReadsTorchrunVariables) {
  LaunchEnvironment environment = parse({{"RANK", "5"},
                                         {"WORLD_SIZE", "8"},
                                         {"LOCAL_RANK", "1"},
                                         {"LOCAL_WORLD_SIZE", "4"},
                                         {"MASTER_ADDR", "node7"},
                                         {"MASTER_PORT", "1234"}});
  EXPECT_EQ(environment.launcher, "torchrun");
  EXPECT_EQ(environment.rank, 5);
  EXPECT_EQ(environment.world_size, 8);
  EXPECT_EQ(environment.local_rank, 1);
  EXPECT_EQ(environment.local_world_size, 4);
  EXPECT_EQ(environment.master_addr, "node7");
  EXPECT_EQ(environment.master_port, 1234);
  EXPECT_FALSE(environment.isLocalOnly());
}

TEST(LaunchEnvironmentTest, FallsBackToOpenMpiThenSlurm) {
  LaunchEnvironment mpi = parse({{"OMPI_COMM_WORLD_RANK", "2"},
                                 {"OMPI_COMM_WORLD_SIZE", "4"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                 {"SLURM_PROCID", "3"},
                                 {"SLURM_NTASKS", "9"}});
  EXPECT_EQ(mpi.launcher, "Open MPI");
  EXPECT_EQ(mpi.rank, 2);
  EXPECT_EQ(mpi.world_size, 4);
  EXPECT_EQ(mpi.local_world_size, 2);
  EXPECT_EQ(mpi.master_addr, "127.0.0.1");
  EXPECT_EQ(mpi.master_port, LaunchEnvironment::kDefaultMasterPort);

  LaunchEnvironment slurm = parse({{"SLURM_PROCID", "3"},
                                   {"SLURM_NTASKS", "4"},
                                   {"SLURM_LOCALID", "1"},
                                   {"SLURM_NTASKS_PER_NODE", "2(x2)"},
                                   {"MASTER_ADDR", "10.0.0.1"}});
  EXPECT_EQ(slurm.launcher, "Slurm");
  EXPECT_EQ(slurm.rank, 3);
  EXPECT_EQ(slurm.world_size, 4);
  EXPECT_EQ(slurm.local_rank, 1);
  EXPECT_EQ(slurm.local_world_size, 4) << "an uneven per-node count falls back to the world";
  EXPECT_EQ(slurm.master_addr, "10.0.0.1");
}

TEST(LaunchEnvironmentTest, TorchrunWinsOverOthers) {
  LaunchEnvironment environment =
      parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  EXPECT_EQ(environment.launcher, "torchrun");
  EXPECT_EQ(environment.rank, 0);
}

TEST(LaunchEnvironmentTest, WorldSizeZeroIsRejected) {
  std::string message = errorOf([] { parse({{"RANK", "0"}, {"WORLD_SIZE", "0"}}); });
  EXPECT_TRUE(contains(message, "world size is 0")) << message;
  EXPECT_TRUE(contains(message, "at least 1")) << message;
}

TEST(LaunchEnvironmentTest, RankOutsideTheWorldIsRejected) {
  std::string message = errorOf([] { parse({{"RANK", "2"}, {"WORLD_SIZE", "2"}}); });
  EXPECT_TRUE(contains(message, "rank 2 is outside the world of 2 ranks")) << message;
  message = errorOf([] { parse({{"SLURM_PROCID", "-1"}, {"SLURM_NTASKS", "2"}}); });
  EXPECT_TRUE(contains(message, "Slurm")) << message;
}

TEST(LaunchEnvironmentTest, MalformedValuesAreRejected) {
  EXPECT_TRUE(contains(errorOf([] {
                         parse({{"RANK", "one"}, {"WORLD_SIZE", "2"}});
                       }),
                       "RANK='one' is not a whole number"));
  EXPECT_TRUE(contains(errorOf([] { parse({{"RANK", "0"}}); }), "WORLD_SIZE is not"));
  EXPECT_TRUE(contains(errorOf([] {
                         parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}});
                       }),
                       "MASTER_PORT=70000"));
  EXPECT_TRUE(contains(errorOf([] {
                         parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "3"}});
                       }),
                       "local rank 3"));
}

// The process environment, through setenv, as a launcher would leave it.
TEST(LaunchEnvironmentTest, ReadsTheProcessEnvironment) {
  const char* names[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
  std::map<std::string, std::optional<std::string>> saved;
  for (const char* name : names) {
    const char* value = std::getenv(name);
    saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
    ::unsetenv(name);
  }
  ::setenv("RANK", "3", 1);
  ::setenv("WORLD_SIZE", "0", 1);
  std::string message = errorOf([] { LaunchEnvironment::fromEnvironment(); });
  ::setenv("WORLD_SIZE", "3", 1);
  std::string rank_message = errorOf([] { LaunchEnvironment::fromEnvironment(); });
  for (const auto& [name, value] : saved) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  EXPECT_TRUE(contains(message, "world size is 0")) << message;
  EXPECT_TRUE(contains(rank_message, "rank 3 is outside the world of 3 ranks")) << rank_message;
}

TEST(CommunicatorTest, TimeoutComesFromTheEnvironment) {
  const char* saved = std::getenv("HOSTIR_COMM_TIMEOUT_S");
  std::string saved_value = saved ? saved : "";
  ::setenv("HOSTIR_COMM_TIMEOUT_S", "2.5", 1);
  EXPECT_EQ(Communicator::timeoutFromEnvironment(), std::chrono::milliseconds(2500));
  ::setenv("HOSTIR_COMM_TIMEOUT_S", "soon", 1);
  std::string message = errorOf([] { Communicator::timeoutFromEnvironment(); });
  ::unsetenv("HOSTIR_COMM_TIMEOUT_S");
  EXPECT_EQ(Communicator::timeoutFromEnvironment(), Communicator::kDefaultTimeout);
  if (saved) {
    ::setenv("HOSTIR_COMM_TIMEOUT_S", saved_value.c_str(), 1);
  }
  EXPECT_TRUE(contains(message, "HOSTIR_COMM_TIMEOUT_S='soon'")) << message;
}

// A world of one needs no network: its collectives still run.
// (Gloo's: under mpirun the process's MPI world is the job's.)
TEST(CommunicatorTest, WorldOfOneRunsCollectivesWithoutARendezvous) {
  Communicator communicator(LaunchEnvironment{}, std::chrono::milliseconds(5000),
                            CommBackend::Gloo);
  EXPECT_EQ(communicator.size(), 1);
  EXPECT_EQ(communicator.deviceId(), 0);
  at::Tensor input = at::arange(6, at::kFloat).view({2, 3});
  at::Tensor output = at::zeros({2, 3});
  auto work = postCollective(
      {.type = CommunicationType::Allreduce, .team = {0}, .reduce_op = ReduceOp::Sum},
      "allreduce of one", 0, input, output, communicator);
  waitWork(work, communicator.timeout(), "allreduce of one");
  EXPECT_TRUE(at::equal(output, input));
  communicator.barrier();
  std::string message = errorOf([&] { communicator.processGroup({0, 1}); });
  EXPECT_TRUE(contains(message, "outside the world of 1 ranks")) << message;
  communicator.shutdown();
  communicator.shutdown();
  EXPECT_TRUE(communicator.isShutDown());
}

int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(CommunicatorTest, UnreachableMasterFailsAtStartUpWithinTheTimeout) {
  LaunchEnvironment environment;
  environment.launcher = "torchrun";
  environment.rank = 1;
  environment.world_size = 2;
  environment.local_world_size = 2;
  environment.local_rank = 1;
  environment.master_port = freeLoopbackPort();  // nobody hosts a store there
  const auto start = std::chrono::steady_clock::now();
  std::string message = errorOf([&] {
    Communicator communicator(environment, std::chrono::milliseconds(1000), CommBackend::Gloo);
  });
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(contains(message, "could not reach the rendezvous store at 127.0.0.1:" +
                                    std::to_string(environment.master_port)))
      << message;
  EXPECT_TRUE(contains(message, "rank 1 of 2")) << message;
  EXPECT_LT(waited, 1.0 + 5.0);
}

TEST(CommunicatorTest, BadTimeoutIsRejected) {
  std::string message =
      errorOf([] { Communicator communicator(LaunchEnvironment{}, std::chrono::milliseconds(0)); });
  EXPECT_TRUE(contains(message, "timeout must be positive")) << message;
}

TEST(CommunicatorTest, UnknownBackendNameListsTheValidOnes) {
  std::string message = errorOf([] { parseCommBackend("nccl", "HOSTIR_COMM_BACKEND"); });
  EXPECT_TRUE(contains(message, "unknown collective backend 'nccl' (HOSTIR_COMM_BACKEND)"))
      << message;
  EXPECT_TRUE(contains(message, "gloo") && contains(message, "mpi")) << message;
  EXPECT_EQ(parseCommBackend("gloo", "test"), CommBackend::Gloo);
  EXPECT_EQ(parseCommBackend("mpi", "test"), CommBackend::Mpi);

  const char* saved = std::getenv("HOSTIR_COMM_BACKEND");
  const std::string saved_value = saved ? saved : "";
  ::setenv("HOSTIR_COMM_BACKEND", "Gloo", 1);
  message = errorOf([] { Communicator communicator(LaunchEnvironment{}); });
  ::unsetenv("HOSTIR_COMM_BACKEND");
  EXPECT_EQ(commBackendFromEnvironment(), CommBackend::Gloo) << "gloo is the default";
  if (saved) {
    ::setenv("HOSTIR_COMM_BACKEND", saved_value.c_str(), 1);
  }
  EXPECT_TRUE(contains(message, "unknown collective backend 'Gloo'")) << message;
}

// Ranks that `hostir launch` started share no MPI world: the mpi backend
// says so before touching MPI.
TEST(CommunicatorTest, MpiBackendNeedsAnMpiLauncher) {
  LaunchEnvironment environment;
  environment.launcher = "torchrun";
  environment.rank = 1;
  environment.world_size = 2;
  environment.local_world_size = 2;
  environment.local_rank = 1;
  std::string message = errorOf([&] {
    Communicator communicator(environment, std::chrono::milliseconds(1000), CommBackend::Mpi);
  });
  EXPECT_TRUE(contains(message, "the mpi collective backend (rank 1 of 2")) << message;
  EXPECT_TRUE(contains(message, "start them with mpirun")) << message;
}

TEST(CommunicatorTest, BadMpiPollIntervalIsRejectedBeforeMpiStarts) {
  const char* saved = std::getenv("HOSTIR_MPI_POLL_US");
  const std::string saved_value = saved ? saved : "";
  ::setenv("HOSTIR_MPI_POLL_US", "fast", 1);
  std::string message = errorOf([] {
    Communicator communicator(LaunchEnvironment{}, std::chrono::milliseconds(1000),
                              CommBackend::Mpi);
  });
  ::unsetenv("HOSTIR_MPI_POLL_US");
  if (saved) {
    ::setenv("HOSTIR_MPI_POLL_US", saved_value.c_str(), 1);
  }
  EXPECT_TRUE(contains(message, "HOSTIR_MPI_POLL_US='fast' is not a number of microseconds"))
      << message;
}

}  // namespace
}  // namespace hostir
