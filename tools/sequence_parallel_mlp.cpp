#include "sequence_parallel_mlp.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/communicator.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/tracer.h"
#include "launch_command.h"
#include "timing.h"

namespace hostir::tools {

namespace {

// x [S, H] sharded on S; w1 [F, H] and w2 [H, F] sharded on F (column- then
// row-parallel); h = linear(x, w1) needs all of x: with chunks > 1 its rows
// are Stream-parallel chunks, so the allgather of chunk i+1 overlaps the
// GEMM of chunk i; y = linear(gelu(h), w2) contracts the sharded F and is
// reduce-scattered back onto S.
std::unique_ptr<Fusion> buildBlock(int64_t devices, int64_t chunks) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  auto shard = [&](TensorView* tv, int64_t axis) {
    tv->setDeviceMesh(mesh);
    tv->split(axis, devices, /*inner_split=*/false);
    tv->axis(axis)->parallelize(ParallelType::DIDx);
  };
  TensorView* x = makeContigTensor(2);
  TensorView* w1 = makeContigTensor(2);
  TensorView* w2 = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addInput(w1);
  fusion->addInput(w2);
  shard(x, 0);
  shard(w1, 0);
  shard(w2, 1);
  TensorView* h = linear(x, w1);
  shard(h, 1);
  if (chunks > 1) {
    h->split(0, chunks, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
  }
  TensorView* y = linear(gelu(h), w2);
  shard(y, 0);
  fusion->addOutput(y);
  return fusion;
}

int64_t parseInt(const std::vector<std::string>& args, size_t& i) {
  HOSTIR_CHECK(i + 1 < args.size(), args[i], " needs a value");
  int64_t value = std::stoll(args[++i]);
  HOSTIR_CHECK(value > 0, args[i - 1], " needs a positive value, got ", value);
  return value;
}

int runOnRank(const SequenceParallelMlpOptions& options) {
  Communicator& communicator = Communicator::getInstance();
  const int64_t devices = communicator.size();
  const int64_t rank = communicator.deviceId();
  HOSTIR_CHECK(options.tokens % (devices * options.chunks) == 0 && options.ffn % devices == 0,
               "--tokens must divide by ranks * chunks and --ffn by ranks");
  if (!options.trace_path.empty()) {
    runtime::Tracer::global().start();
  }

  // Every rank draws the same full tensors and keeps its shards.
  at::manual_seed(0);
  at::Tensor x = at::randn({options.tokens, options.hidden});
  at::Tensor w1 = at::randn({options.ffn, options.hidden}) / std::sqrt(options.hidden);
  at::Tensor w2 = at::randn({options.hidden, options.ffn}) / std::sqrt(options.ffn);
  at::Tensor reference = at::linear(at::gelu(at::linear(x, w1)), w2);
  auto rows = [&](const at::Tensor& t, int64_t dim) {
    return t.chunk(devices, dim)[rank].contiguous();
  };
  std::vector<at::Tensor> inputs{rows(x, 0), rows(w1, 0), rows(w2, 1)};
  at::Tensor expected = rows(reference, 0);

  std::unique_ptr<Fusion> pipelined_fusion = buildBlock(devices, options.chunks);
  std::unique_ptr<Fusion> plain_fusion = buildBlock(devices, 1);
  MultiDeviceExecutorParams params{.number_of_streams = options.streams};
  MultiDeviceExecutor pipelined(*pipelined_fusion, communicator, params);
  MultiDeviceExecutor plain(*plain_fusion, communicator, params);
  if (rank == 0) {
    std::cout << "== sequence-parallel MLP block on " << devices << " ranks: x[" << options.tokens
              << ", " << options.hidden << "] sharded on tokens, w1[" << options.ffn << ", "
              << options.hidden << "], w2[" << options.hidden << ", " << options.ffn
              << "] sharded on ffn; " << options.chunks << " chunks on " << options.streams
              << " streams\n";
    pipelined_fusion->print();
    std::cout << pipelined.hostProgram().toString();
    if (options.dump) {
      std::cout << "== without stream chunking:\n" << plain.hostProgram().toString();
    }
  }

  bool ok = true;
  for (auto* executor : {&pipelined, &plain}) {
    at::Tensor out = executor->run(inputs).at(0);
    double diff = (out - expected).abs().max().item<double>();
    bool close = at::allclose(out, expected, 1e-4, 1e-4);
    std::cout << "check " << (executor == &pipelined ? "pipelined" : "unchunked")
              << " against single-process ATen: max |diff| = " << diff << " "
              << (close ? "OK" : "MISMATCH") << "\n";
    ok = ok && close;
  }
  // Each timed run starts when every rank is ready and ends when every rank
  // is done.
  auto barrier = [&] { communicator.barrier(); };
  double pipelined_ms = medianMilliseconds(
      options.runs,
      [&] {
        pipelined.run(inputs);
        communicator.barrier();
      },
      barrier);
  double plain_ms = medianMilliseconds(
      options.runs,
      [&] {
        plain.run(inputs);
        communicator.barrier();
      },
      barrier);
  if (rank == 0) {
    std::cout << std::fixed << std::setprecision(3) << "time (median of " << options.runs
              << "): pipelined " << pipelined_ms << " ms, without stream chunking " << plain_ms
              << " ms, ratio " << pipelined_ms / plain_ms << "\n";
  }
  if (!options.trace_path.empty()) {
    runtime::Tracer::global().stop();
    std::string path = options.trace_path + ".rank" + std::to_string(rank) + ".json";
    runtime::Tracer::global().write(path);
    std::cout << "trace written to " << path << "\n";
  }
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

SequenceParallelMlpOptions parseSequenceParallelMlpOptions(const std::vector<std::string>& args) {
  SequenceParallelMlpOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--ranks") {
      options.ranks = parseInt(args, i);
    } else if (flag == "--tokens") {
      options.tokens = parseInt(args, i);
    } else if (flag == "--hidden") {
      options.hidden = parseInt(args, i);
    } else if (flag == "--ffn") {
      options.ffn = parseInt(args, i);
    } else if (flag == "--chunks") {
      options.chunks = parseInt(args, i);
    } else if (flag == "--streams") {
      options.streams = static_cast<int>(parseInt(args, i));
    } else if (flag == "--runs") {
      options.runs = static_cast<int>(parseInt(args, i));
    } else if (flag == "--dump") {
      options.dump = true;
    } else if (flag == "--trace") {
      HOSTIR_CHECK(i + 1 < args.size(), "--trace needs a path");
      options.trace_path = args[++i];
    } else {
      HOSTIR_THROW("unknown flag '", flag,
                   "'; valid: --ranks --tokens --hidden --ffn --chunks --streams --runs --dump "
                   "--trace PATH");
    }
  }
  return options;
}

int runSequenceParallelMlp(const std::vector<std::string>& args) {
  SequenceParallelMlpOptions options = parseSequenceParallelMlpOptions(args);
  if (std::getenv("RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr ||
      std::getenv("SLURM_PROCID") != nullptr) {
    return runOnRank(options);
  }
  // Not launched: start the ranks ourselves.
  std::vector<std::string> launch{"-n", std::to_string(options.ranks), "--", "/proc/self/exe",
                                  "sp-mlp"};
  launch.insert(launch.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : launch) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  return runLaunchCommand(static_cast<int>(launch.size()), argv.data());
}

}  // namespace hostir::tools
