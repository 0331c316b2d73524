// Collective overhead (issue 5): allgather, allreduce and the composed
// reduce-scatter posted through postCollective + waitWork, against the same
// c10d calls made by hand on the same process group
// (communicator.processGroup(world, 0)), for 1 to 64 MiB of float per rank.
//
// Run it under the launcher, one process per rank:
//   hostir launch -n 2 -- bench_collectives [--sizes-mib 1,4,16,64] [--rounds R]
//                                           [--print-samples]
//
// Google Benchmark's timing loop lets each process pick its own iteration
// count, which breaks Gloo's matching of collectives by order, so this program
// has its own main: every rank runs the same fixed sequence. A sample is a
// barrier followed by k back-to-back ops (post, then wait) of one variant,
// timed on each rank; k is fixed per message size. Each round takes one
// sample of each variant, alternating which goes first, so both see the same
// machine load. Rank 0 prints the median and the minimum time per op over the
// rounds and the ratios postCollective / direct (--print-samples: every
// sample too).
//
// Both variants do the same work per op:
//   Allgather      input [m] -> output [n * m]: the list form of
//                  ProcessGroup::allgather into views of the output (libtorch
//                  1.13's Gloo has no _allgather_base).
//   Allreduce      out of place, as a Communication's in and out are two
//                  tensors: copy the input into the output, then allreduce
//                  the output in place.
//   ReduceScatter  input [m] -> output [m / n]: alltoall_base (with counts)
//                  of the other members' blocks of the input seen as
//                  [n, m / n], then their sum with the own block into the
//                  output; with one peer its block is received into the
//                  output itself. By hand, any buffer received into is
//                  allocated once. A member between others in the group
//                  order sends and receives all n blocks, as hostir does.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
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
constexpr int64_t kStreamKey = 0;

struct Options {
  std::vector<int64_t> sizes_mib{1, 4, 16, 64};
  int rounds = 5;
  bool print_samples = false;
};

constexpr const char* kFlags = "flags: --sizes-mib LIST, --rounds R, --print-samples";

std::vector<int64_t> parseList(const std::string& text) {
  std::vector<int64_t> values;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int64_t value = std::stoll(item);
    HOSTIR_CHECK(value > 0, "--sizes-mib takes positive sizes, got ", value);
    values.push_back(value);
  }
  HOSTIR_CHECK(!values.empty(), "--sizes-mib needs at least one size");
  return values;
}

Options parseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--print-samples") {
      options.print_samples = true;
      continue;
    }
    HOSTIR_CHECK(i + 1 < argc, arg, " needs a value (", kFlags, ")");
    if (arg == "--sizes-mib") {
      options.sizes_mib = parseList(argv[++i]);
    } else if (arg == "--rounds") {
      options.rounds = std::stoi(argv[++i]);
      HOSTIR_CHECK(options.rounds > 0, "--rounds needs a positive value");
    } else {
      HOSTIR_THROW("unknown flag ", arg, " (", kFlags, ")");
    }
  }
  return options;
}

// Ops per sample: enough that small messages are not dominated by the
// barrier's skew, few enough that 64 MiB stays quick.
int opsPerSample(int64_t size_mib) {
  return static_cast<int>(std::clamp<int64_t>(16 / size_mib, 1, 16));
}

// Samples per variant: --rounds, tripled below 16 MiB where samples are
// cheap and noisier.
int roundsFor(int64_t size_mib, int rounds) {
  return size_mib < 16 ? 3 * rounds : rounds;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// One collective at one size: the hostir op and the hand-written one, each
// doing one complete op (post and wait) per call.
struct Case {
  std::string collective;
  int64_t size_mib;
  std::function<void()> hostir_op;
  std::function<void()> direct_op;
  std::function<bool()> outputs_match;  // after one op of each
};

class CollectivesBenchmark {
 public:
  explicit CollectivesBenchmark(Communicator& communicator)
      : communicator_(communicator),
        me_(communicator.deviceId()),
        n_(communicator.size()),
        world_(static_cast<size_t>(n_)) {
    for (int64_t device = 0; device < n_; ++device) {
      world_[device] = device;
    }
  }

  Case allgather(int64_t size_mib) {
    const int64_t m = size_mib * kMiB / static_cast<int64_t>(sizeof(float));
    const Communication& communication =
        makeCommunication({.type = CommunicationType::Allgather, .team = world_});
    at::Tensor input = at::randn({m});
    at::Tensor hostir_output = at::empty({n_ * m});
    at::Tensor direct_output = at::empty({n_ * m});
    // By hand: group rank g's block lands in the g-th view of the output.
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int64_t g = 0; g < n_; ++g) {
      outputs[0].push_back(direct_output.narrow(0, g * m, m));
    }
    std::vector<at::Tensor> inputs{input};
    c10d::ProcessGroup& group = communicator_.processGroup(world_, kStreamKey);
    return Case{"Allgather", size_mib,
                [this, &communication, input, hostir_output] {
                  runHostir(communication, input, hostir_output);
                },
                [this, &group, outputs, inputs]() mutable {
                  c10d::AllgatherOptions options;
                  options.timeout = communicator_.timeout();
                  group.allgather(outputs, inputs, options)->wait(communicator_.timeout());
                },
                [hostir_output, direct_output] { return at::equal(hostir_output, direct_output); }};
  }

  Case allreduce(int64_t size_mib) {
    const int64_t m = size_mib * kMiB / static_cast<int64_t>(sizeof(float));
    const Communication& communication = makeCommunication(
        {.type = CommunicationType::Allreduce, .team = world_, .reduce_op = ReduceOp::Sum});
    at::Tensor input = at::randn({m});
    at::Tensor hostir_output = at::empty({m});
    at::Tensor direct_output = at::empty({m});
    c10d::ProcessGroup& group = communicator_.processGroup(world_, kStreamKey);
    return Case{"Allreduce", size_mib,
                [this, &communication, input, hostir_output] {
                  runHostir(communication, input, hostir_output);
                },
                [this, &group, input, direct_output] {
                  direct_output.copy_(input);
                  std::vector<at::Tensor> tensors{direct_output};
                  c10d::AllreduceOptions options;
                  options.reduceOp = c10d::ReduceOp::SUM;
                  options.timeout = communicator_.timeout();
                  group.allreduce(tensors, options)->wait(communicator_.timeout());
                },
                [hostir_output, direct_output] {
                  return at::allclose(hostir_output, direct_output, 1e-5, 1e-5);
                }};
  }

  Case reduceScatter(int64_t size_mib) {
    const int64_t m = size_mib * kMiB / static_cast<int64_t>(sizeof(float));
    HOSTIR_CHECK(m % n_ == 0, "the message must split into ", n_, " blocks");
    const Communication& communication =
        makeCommunication({.type = CommunicationType::ReduceScatter,
                           .team = world_,
                           .reduce_op = ReduceOp::Sum,
                           .scattered_axis = 0});
    at::Tensor input = at::randn({m});
    at::Tensor hostir_output = at::empty({m / n_});
    at::Tensor direct_output = at::empty({m / n_});
    // By hand: row g of the input goes to group rank g (the world is in
    // rank order); the own row stays unless it sits between others.
    const int64_t me = communicator_.deviceId();
    const bool own_stays = me == 0 || me == n_ - 1;
    at::Tensor rows = input.view({n_, m / n_});
    at::Tensor own = rows[me];
    at::Tensor send = own_stays ? rows.narrow(0, me == 0 ? 1 : 0, n_ - 1) : rows;
    const bool received_in_output = own_stays && n_ == 2;
    at::Tensor received =
        received_in_output ? direct_output.view({1, m / n_}) : at::empty_like(send);
    std::vector<int64_t> counts(static_cast<size_t>(n_), 1);
    if (own_stays) {
      counts[static_cast<size_t>(me)] = 0;
    }
    c10d::ProcessGroup& group = communicator_.processGroup(world_, kStreamKey);
    return Case{"ReduceScatter", size_mib,
                [this, &communication, input, hostir_output] {
                  runHostir(communication, input, hostir_output);
                },
                [this, &group, send, received, direct_output, own, own_stays, received_in_output,
                 counts]() mutable {
                  std::vector<int64_t> send_counts = counts, receive_counts = counts;
                  c10d::AllToAllOptions options;
                  options.timeout = communicator_.timeout();
                  group.alltoall_base(received, send, receive_counts, send_counts, options)
                      ->wait(communicator_.timeout());
                  if (!received_in_output) {
                    at::sum_out(direct_output, received, 0);
                  }
                  if (own_stays) {
                    direct_output.add_(own);
                  }
                },
                [hostir_output, direct_output] {
                  return at::allclose(hostir_output, direct_output, 1e-5, 1e-5);
                }};
  }

 private:
  const Communication& makeCommunication(const CommunicationParams& params) {
    FusionGuard guard(&fusion_);
    TensorView* in = makeContigTensor(1);
    TensorView* out = makeContigTensor(1);
    return *IrBuilder::create<Communication>(in, out, params);
  }

  void runHostir(const Communication& communication, const at::Tensor& input,
                 const at::Tensor& output) {
    auto work = postCollective(communication, me_, input, output, communicator_, kStreamKey);
    waitWork(work, communicator_.timeout(), communication.toInlineString());
  }

  Communicator& communicator_;
  const int64_t me_;
  const int64_t n_;
  std::vector<int64_t> world_;
  Fusion fusion_;
};

// Seconds per op of `ops` back-to-back ops, started together after a barrier.
double timeSample(Communicator& communicator, int ops, const std::function<void()>& op) {
  communicator.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    op();
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / ops;
}

struct Result {
  std::string collective;
  int64_t size_mib;
  int ops;
  int samples;
  double hostir_ms;  // median
  double direct_ms;
  double hostir_min_ms;
  double direct_min_ms;
};

int run(int argc, char** argv) {
  const Options options = parseOptions(argc, argv);
  Communicator& communicator = Communicator::getInstance();
  const bool printer = communicator.deviceId() == 0;
  at::manual_seed(1234 + communicator.deviceId());
  if (printer) {
    std::cout << "bench_collectives: " << communicator.size() << " ranks, " << options.rounds
              << " rounds per case (x3 below 16 MiB), libtorch Gloo on loopback\n";
  }
  const auto start = Clock::now();
  CollectivesBenchmark benchmark(communicator);
  using Factory = Case (CollectivesBenchmark::*)(int64_t);
  const std::vector<Factory> factories{&CollectivesBenchmark::allgather,
                                       &CollectivesBenchmark::allreduce,
                                       &CollectivesBenchmark::reduceScatter};
  std::vector<Result> results;
  for (Factory factory : factories) {
    for (int64_t size_mib : options.sizes_mib) {
      Case c = (benchmark.*factory)(size_mib);
      // Warm-up (creates the group on first use, faults the buffers in) and
      // a check that both variants compute the same thing.
      c.hostir_op();
      c.direct_op();
      HOSTIR_CHECK(c.outputs_match(), c.collective, " at ", size_mib,
                   " MiB: postCollective and the direct c10d calls disagree");
      const int ops = opsPerSample(size_mib);
      std::vector<double> hostir_times;
      std::vector<double> direct_times;
      const int rounds = roundsFor(size_mib, options.rounds);
      for (int round = 0; round < rounds; ++round) {
        if (round % 2 == 0) {
          hostir_times.push_back(timeSample(communicator, ops, c.hostir_op));
          direct_times.push_back(timeSample(communicator, ops, c.direct_op));
        } else {
          direct_times.push_back(timeSample(communicator, ops, c.direct_op));
          hostir_times.push_back(timeSample(communicator, ops, c.hostir_op));
        }
      }
      if (printer && options.print_samples) {
        std::cout << c.collective << " " << size_mib << ":";
        for (int r = 0; r < rounds; ++r) {
          std::cout << " " << 1e3 * hostir_times[r] << "/" << 1e3 * direct_times[r];
        }
        std::cout << "\n";
      }
      results.push_back({c.collective, size_mib, ops, rounds, 1e3 * median(hostir_times),
                         1e3 * median(direct_times),
                         1e3 * *std::min_element(hostir_times.begin(), hostir_times.end()),
                         1e3 * *std::min_element(direct_times.begin(), direct_times.end())});
    }
  }
  communicator.barrier();
  const double total_s = std::chrono::duration<double>(Clock::now() - start).count();

  if (printer) {
    std::cout << "\n"
              << std::left << std::setw(14) << "collective" << std::right << std::setw(9)
              << "MiB/rank" << std::setw(5) << "ops" << std::setw(8) << "samples" << std::setw(16)
              << "postCollective" << std::setw(10) << "direct" << std::setw(8) << "ratio"
              << std::setw(16) << "postCollective" << std::setw(10) << "direct" << std::setw(8)
              << "ratio"
              << "\n"
              << std::setw(36) << "" << std::setw(26) << "median ms per op" << std::setw(8) << ""
              << std::setw(26) << "min ms per op"
              << "\n";
    for (const Result& r : results) {
      std::cout << std::left << std::setw(14) << r.collective << std::right << std::setw(9)
                << r.size_mib << std::setw(5) << r.ops << std::setw(8) << r.samples << std::fixed
                << std::setprecision(2) << std::setw(16) << r.hostir_ms << std::setw(10)
                << r.direct_ms << std::setprecision(3) << std::setw(8) << r.hostir_ms / r.direct_ms
                << std::setprecision(2) << std::setw(16) << r.hostir_min_ms << std::setw(10)
                << r.direct_min_ms << std::setprecision(3) << std::setw(8)
                << r.hostir_min_ms / r.direct_min_ms << "\n";
    }
    std::cout << "(a sample: `ops` back-to-back ops after a barrier; ratio = postCollective / "
                 "direct; total "
              << std::setprecision(1) << total_s << " s)\n";
  }
  communicator.shutdown();
  return 0;
}

}  // namespace
}  // namespace hostir

int main(int argc, char** argv) {
  try {
    return hostir::run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "bench_collectives: " << error.what() << "\n";
    return 1;
  }
}
