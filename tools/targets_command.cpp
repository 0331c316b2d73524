#include "targets_command.h"

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_arguments.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/kernels/kernel_signature.h"
#include "hostir/kernels/kernel_target.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/dnnl_matmul.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/target_detection.h"
#include "launch_command.h"
#include "timing.h"

namespace hostir::tools {

namespace {

struct TargetsOptions {
  int64_t ranks = 2;
  std::string targets;  // empty: HOSTIR_TARGET, else the default below
  int64_t tokens = 12;
  int64_t hidden = 24;
  int64_t ffn = 40;
  int runs = 3;
};

constexpr const char* kDefaultTargets = "cpu:avx512,cpu:avx2";

TargetsOptions parseOptions(const std::vector<std::string>& args) {
  TargetsOptions options;
  CLI::App app{
      "run a Megatron MLP with matmul_rhs weights on a heterogeneous mesh and print the "
      "executables per device",
      "hostir targets"};
  auto positive = CLI::Range(int64_t{1}, int64_t{1} << 24);
  app.add_option("--ranks", options.ranks, "ranks to start when not launched")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  app.add_option("--targets", options.targets,
                 std::string("HOSTIR_TARGET for the ranks: rank r gets entry r % length (default "
                             "$HOSTIR_TARGET, else ") +
                     kDefaultTargets + ")");
  app.add_option("--tokens", options.tokens, "rows of x")->check(positive);
  app.add_option("--hidden", options.hidden, "columns of x")->check(positive);
  app.add_option("--ffn", options.ffn, "the MLP's inner width (a multiple of the rank count)")
      ->check(positive);
  app.add_option("--runs", options.runs,
                 "timed runs (median) of the program and of the same program with plain weights")
      ->check(CLI::Range(1, 10000));
  if (!parseArguments(app, args, "hostir targets")) {
    std::exit(0);
  }
  if (!options.targets.empty()) {
    parseTarget(options.targets.substr(0, options.targets.find(',')));  // fail early, named
  }
  return options;
}

// x [S, H] replicated, w1 [F, H] sharded on F, w2 [H, F] sharded on F, both
// weights matmul_rhs: y = linear(gelu(linear(x, w1)), w2), allreduced.
std::unique_ptr<Fusion> buildMlp(int64_t devices, bool encoded = true) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  TensorView* x = makeContigTensor(2);
  TensorView* w1 = makeContigTensor(2);
  TensorView* w2 = makeContigTensor(2);
  for (TensorView* tv : {x, w1, w2}) {
    tv->setDeviceMesh(mesh);
    fusion->addInput(tv);
  }
  shardLogicalAxis(w1, 0, ParallelType::DIDx, false);
  shardLogicalAxis(w2, 1, ParallelType::DIDx, false);
  if (encoded) {
    w1->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
    w2->setEncoding(Encoding{EncodingKind::MatmulRhs, std::nullopt});
  }
  TensorView* h = linear(x, w1);
  h->setDeviceMesh(mesh);
  shardLogicalAxis(h, 1, ParallelType::DIDx, false);
  TensorView* y = linear(gelu(h), w2);
  y->setDeviceMesh(mesh);
  fusion->addOutput(y);
  return fusion;
}

void collectLaunches(const Scope& scope, std::vector<const PostOnStream*>& launches) {
  for (const Expr* expr : scope) {
    if (const auto* post = dynamic_cast<const PostOnStream*>(expr)) {
      launches.push_back(post);
    } else if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      collectLaunches(loop->body(), launches);
    }
  }
}

// "T1 BA16a64b(n=0)" for each encoded input/output of the unit's fusion.
std::string encodedOperands(const HostUnit* unit) {
  std::stringstream ss;
  auto list = [&](const std::vector<Val*>& vals, const char* verb) {
    for (const Val* val : vals) {
      const auto* tv = dynamic_cast<const TensorView*>(val);
      if (tv != nullptr && tv->hasEncoding()) {
        ss << " " << verb << " T" << tv->name() << " " << tv->encoding()->toString();
      }
    }
  };
  list(unit->fusion()->inputs(), "reads");
  list(unit->fusion()->outputs(), "writes");
  return ss.str();
}

// The executables each device runs, from the launches' variants.
std::string executablesPerDevice(const HostIrContainer& program) {
  std::vector<const PostOnStream*> launches;
  collectLaunches(program.topLevel(), launches);
  std::stringstream ss;
  ss << "executables per launch:\n";
  for (const PostOnStream* post : launches) {
    ss << "  ";
    for (const Val* output : post->outputs()) {
      ss << "T" << output->name() << " ";
    }
    ss << "= ";
    if (post->variants().empty()) {
      ss << post->hostUnit()->toInlineString() << " on every device\n";
      continue;
    }
    for (size_t v = 0; v < post->variants().size(); ++v) {
      ss << (v == 0 ? "" : " | ") << post->variants()[v].unit->toInlineString() << " on (";
      for (size_t i = 0; i < post->variants()[v].devices.size(); ++i) {
        ss << (i == 0 ? "" : " ") << post->variants()[v].devices[i];
      }
      ss << ")";
    }
    ss << "\n";
  }
  ss << "executables per device:\n";
  for (const auto& [device, target] : program.deviceTargets()) {
    ss << "  device " << device << " (" << target.toString() << "):";
    const char* separator = " ";
    for (const PostOnStream* post : launches) {
      const HostUnit* unit = post->hostUnitFor(device);
      ss << separator << unit->toInlineString();
      std::string encoded = encodedOperands(unit);
      if (!encoded.empty()) {
        ss << " [" << encoded.substr(1) << "]";
      }
      separator = ", ";
    }
    ss << "\n";
  }
  // One native executable per translation-compatible target set: devices
  // whose targets map to the same engine target share it. A target this
  // machine lacks is cross-compiled, so the plan prints anywhere.
  std::map<std::string, std::vector<int64_t>> devices_of_kernel_target;
  for (const auto& [device, target] : program.deviceTargets()) {
    devices_of_kernel_target[kernelTargetFor(target).toString()].push_back(device);
  }
  ss << "kernels per target:\n";
  for (const auto& [kernel_target, devices] : devices_of_kernel_target) {
    ss << "  " << kernel_target << " on (";
    for (size_t i = 0; i < devices.size(); ++i) {
      ss << (i == 0 ? "" : " ") << devices[i];
    }
    ss << "):";
    const Target& target = program.deviceTargets().at(devices.front());
    KernelTarget engine = kernelTargetFor(target);
    const char* separator = " ";
    for (const PostOnStream* post : launches) {
      const HostUnit* unit = post->hostUnitFor(devices.front());
      KernelSignature signature = analyzeSegment(*unit->fusion());
      ss << separator << unit->toInlineString();
      if (signature.unsupported.has_value()) {
        ss << " ATen (" << *signature.unsupported << ")";
      } else {
        size_t bytes = KernelCache::global().crossCompile(*unit->fusion(), signature, engine);
        ss << " compiled (" << bytes << " bytes"
           << (runsOnThisMachine(engine) ? "" : ", cross-compiled") << ")";
      }
      separator = ", ";
    }
    ss << "\n";
  }
  return ss.str();
}

// What this device's target lays w1 (K = hidden, N = its ffn shard) out as,
// against what oneDNN picks on the machine the rank runs on: oneDNN can
// only query the ISA it runs on, so an emulated target (HOSTIR_TARGET) gets
// the layout hostir's table gives its ISA (target.h), not a query.
std::string matmulRhsLayoutHere(int64_t k, int64_t n) {
  const Target& target = localTarget();
  const std::string layout = target.matmul_rhs_n_block > 0
                                 ? Layout::dnnlBlocked(target.matmul_rhs_n_block, 0).blockName()
                                 : std::string("ab");
  const std::string here = dnnlPreferredLayout(k, n);
  std::stringstream ss;
  ss << "device " << Communicator::getInstance().deviceId() << " (" << target.toString()
     << "): matmul_rhs laid out " << layout << " (oneDNN's name; ab is plain); oneDNN on this "
     << "machine picks " << here << " for it"
     << (here == layout ? ""
                        : ": this target is emulated here, its layout is the one oneDNN "
                          "2.6 picks on that ISA")
     << "\n";
  return ss.str();
}

int runOnRank(const TargetsOptions& options) {
  Communicator& comm = Communicator::getInstance();
  const int64_t d = comm.size();
  const int64_t me = comm.deviceId();
  HOSTIR_CHECK(options.ffn % d == 0, "hostir targets: --ffn ", options.ffn,
               " must be a multiple of the rank count ", d);
  std::unique_ptr<Fusion> fusion = buildMlp(d);
  MultiDeviceExecutor executor(*fusion, comm);
  const HostIrContainer& program = executor.hostProgram();
  if (me == 0) {
    std::cout << program.toString() << executablesPerDevice(program) << std::flush;
  }
  at::manual_seed(0);
  at::Tensor x = at::randn({options.tokens, options.hidden});
  at::Tensor w1 = at::randn({options.ffn, options.hidden});
  at::Tensor w2 = at::randn({options.hidden, options.ffn});
  at::Tensor expected = at::linear(at::gelu(at::linear(x, w1)), w2);
  const std::vector<at::Tensor> inputs = {x, w1.chunk(d, 0)[me].contiguous(),
                                          w2.chunk(d, 1)[me].contiguous()};
  at::Tensor y = executor.run(inputs).at(0);
  // The same program with plain weights, for comparison (the packed weights
  // were packed on the first run above and are reused).
  std::unique_ptr<Fusion> plain_fusion = buildMlp(d, /*encoded=*/false);
  MultiDeviceExecutor plain(*plain_fusion, comm);
  plain.run(inputs);
  auto barrier = [&comm] { comm.barrier(); };
  const double encoded_ms = medianMilliseconds(
      options.runs, [&] { executor.run(inputs); }, barrier);
  const double plain_ms = medianMilliseconds(
      options.runs, [&] { plain.run(inputs); }, barrier);
  const double diff = (y - expected).abs().max().item<double>();
  // Float sums in another order: the tolerance scales with the values.
  const double scale = expected.abs().max().item<double>();
  const bool ok = at::allclose(y, expected, 1e-3, 1e-4 * std::max(1.0, scale));
  std::cout << "device " << me << " (" << localTarget().describe()
            << "): max |diff| against plain ATen = " << diff << " (max |value| = " << scale << ")"
            << (ok ? " OK" : " MISMATCH") << "; time (median of " << options.runs
            << "): packed weights " << encoded_ms << " ms, plain weights " << plain_ms << " ms\n"
            << matmulRhsLayoutHere(options.hidden, options.ffn / d) << (ok ? "PASSED" : "FAILED")
            << std::endl;
  return ok ? 0 : 1;
}

}  // namespace

int runTargetsCommand(const std::vector<std::string>& args) {
  TargetsOptions options = parseOptions(args);
  if (launchedAsRank()) {
    if (!options.targets.empty()) {
      setenv("HOSTIR_TARGET", options.targets.c_str(), /*overwrite=*/1);
    }
    return runOnRank(options);
  }
  // Not launched: start the ranks ourselves, each with its target.
  std::string targets = options.targets;
  if (targets.empty()) {
    const char* env = std::getenv("HOSTIR_TARGET");
    targets = env != nullptr ? env : kDefaultTargets;
  }
  setenv("HOSTIR_TARGET", targets.c_str(), /*overwrite=*/1);
  return relaunchAsRanks(options.ranks, "targets", args);
}

}  // namespace hostir::tools
