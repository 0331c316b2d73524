// The two collective backends side by side (issue 18): the collectives of
// the main job's block through postCollective + waitWork, once over Gloo
// (TCP, loopback) and once over MPI (Open MPI: shared memory between the
// ranks of one machine), in one process with one Communicator of each, so
// that every round times both under the same machine load.
//
// Run it under mpirun (the MPI world; Gloo meets at MASTER_ADDR:MASTER_PORT):
//   MASTER_PORT=29731 mpirun --oversubscribe -np 2 -x MASTER_PORT
//       build/benchmarks/bench_collective_backends [--rounds R]
//
// Sizes are those of `hostir sp-mlp --tokens 4096 --hidden 1024 --ffn 4096`
// on 2 ranks, unchunked: the allgather of x (8 MiB per rank) and the
// reduce-scatter of the partial y (16 MiB per rank). A sample is a barrier
// followed by one op; rounds alternate which backend goes first. Rank 0
// prints the median and minimum ms per op and the ratio MPI / Gloo.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "hostir/host_ir/communication.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"

namespace hostir {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMiB = 1 << 20;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Collective {
  std::string name;
  CommunicationParams params;
  int64_t input_mib;   // per rank
  int64_t output_mib;  // per rank
};

// Milliseconds of one op after a barrier on the same communicator.
double timeOne(Communicator& communicator, const Communication& communication,
               const at::Tensor& input, const at::Tensor& output) {
  communicator.barrier();
  const auto start = Clock::now();
  waitWork(postCollective(communication, communicator.deviceId(), input, output, communicator),
           communicator.timeout(), communication.toInlineString());
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int run(int argc, char** argv) {
  int rounds = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    HOSTIR_CHECK(arg == "--rounds" && i + 1 < argc, "unknown flag ", arg, " (flags: --rounds R)");
    rounds = std::stoi(argv[++i]);
    HOSTIR_CHECK(rounds > 0, "--rounds needs a positive value");
  }
  const LaunchEnvironment environment = LaunchEnvironment::fromEnvironment();
  Communicator gloo(environment, std::nullopt, CommBackend::Gloo);
  Communicator mpi(environment, std::nullopt, CommBackend::Mpi);
  const int64_t n = gloo.size();
  std::vector<int64_t> world(static_cast<size_t>(n));
  for (int64_t device = 0; device < n; ++device) {
    world[device] = device;
  }
  const std::vector<Collective> collectives{
      {"Allgather", {.type = CommunicationType::Allgather, .team = world}, 8, 8 * n},
      {"ReduceScatter",
       {.type = CommunicationType::ReduceScatter,
        .team = world,
        .reduce_op = ReduceOp::Sum,
        .scattered_axis = 0},
       16,
       16 / n},
      {"Allreduce",
       {.type = CommunicationType::Allreduce, .team = world, .reduce_op = ReduceOp::Sum},
       16,
       16}};
  const bool printer = gloo.deviceId() == 0;
  if (printer) {
    std::printf("bench_collective_backends: %lld ranks, %d rounds, median (min) ms per op\n",
                static_cast<long long>(n), rounds);
    std::printf("%-14s %9s %9s %18s %18s %10s\n", "collective", "in MiB", "out MiB", "gloo", "mpi",
                "mpi/gloo");
  }
  Fusion fusion;
  at::manual_seed(7 + gloo.deviceId());
  for (const Collective& collective : collectives) {
    FusionGuard guard(&fusion);
    const Communication& communication = *IrBuilder::create<Communication>(
        makeContigTensor(1), makeContigTensor(1), collective.params);
    at::Tensor input = at::randn({collective.input_mib * kMiB / 4});
    at::Tensor gloo_output = at::empty({collective.output_mib * kMiB / 4});
    at::Tensor mpi_output = at::empty_like(gloo_output);
    // Warm-up (groups, page faults) and a check that both agree.
    timeOne(gloo, communication, input, gloo_output);
    timeOne(mpi, communication, input, mpi_output);
    HOSTIR_CHECK(at::allclose(gloo_output, mpi_output, 1e-5, 1e-5), collective.name,
                 ": the gloo and mpi backends disagree");
    std::vector<double> gloo_ms;
    std::vector<double> mpi_ms;
    for (int round = 0; round < rounds; ++round) {
      if (round % 2 == 0) {
        gloo_ms.push_back(timeOne(gloo, communication, input, gloo_output));
        mpi_ms.push_back(timeOne(mpi, communication, input, mpi_output));
      } else {
        mpi_ms.push_back(timeOne(mpi, communication, input, mpi_output));
        gloo_ms.push_back(timeOne(gloo, communication, input, gloo_output));
      }
    }
    if (printer) {
      std::printf("%-14s %9lld %9lld %9.2f (%6.2f) %9.2f (%6.2f) %10.2f\n", collective.name.c_str(),
                  static_cast<long long>(collective.input_mib),
                  static_cast<long long>(collective.output_mib), median(gloo_ms),
                  *std::min_element(gloo_ms.begin(), gloo_ms.end()), median(mpi_ms),
                  *std::min_element(mpi_ms.begin(), mpi_ms.end()),
                  median(mpi_ms) / median(gloo_ms));
    }
  }
  // MPI's reduce-scatter two ways, on one MPI group: the native
  // MPI_Ireduce_scatter_block against Gloo's composition (an all-to-all,
  // then the local sum of the received blocks).
  const int64_t m = 16 * kMiB / 4;
  at::Tensor send = at::randn({n, m / n});
  at::Tensor received = at::empty_like(send);
  at::Tensor native_output = at::empty({m / n});
  at::Tensor composed_output = at::empty({m / n});
  c10d::ProcessGroup& group = mpi.processGroup(world);
  auto native = [&] {
    c10d::ReduceScatterOptions options;
    at::Tensor flat = send.view({-1});
    group._reduce_scatter_base(native_output, flat, options)->wait(mpi.timeout());
  };
  auto composed = [&] {
    std::vector<int64_t> equal_split;
    group.alltoall_base(received, send, equal_split, equal_split)->wait(mpi.timeout());
    at::sum_out(composed_output, received, 0);
  };
  auto timed = [&](const std::function<void()>& op) {
    mpi.barrier();
    const auto start = Clock::now();
    op();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  native();
  composed();
  HOSTIR_CHECK(at::allclose(native_output, composed_output, 1e-5, 1e-5),
               "the native and composed reduce-scatters disagree");
  std::vector<double> native_ms;
  std::vector<double> composed_ms;
  for (int round = 0; round < rounds; ++round) {
    if (round % 2 == 0) {
      native_ms.push_back(timed(native));
      composed_ms.push_back(timed(composed));
    } else {
      composed_ms.push_back(timed(composed));
      native_ms.push_back(timed(native));
    }
  }
  if (printer) {
    std::printf(
        "mpi ReduceScatter, 16 MiB: native %.2f (%.2f), all-to-all + sum %.2f (%.2f), "
        "native/composed %.2f\n",
        median(native_ms), *std::min_element(native_ms.begin(), native_ms.end()),
        median(composed_ms), *std::min_element(composed_ms.begin(), composed_ms.end()),
        median(native_ms) / median(composed_ms));
  }
  gloo.barrier();
  return 0;
}

}  // namespace
}  // namespace hostir

int main(int argc, char** argv) {
  try {
    return hostir::run(argc, argv);
  } catch (const hostir::Error& error) {
    std::fprintf(stderr, "bench_collective_backends: %s\n", error.what());
    return 1;
  }
}
