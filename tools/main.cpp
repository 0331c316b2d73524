// The `hostir` command: run, inspect and launch hostir programs.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli_arguments.h"
#include "examples.h"
#include "hostir/compiler/compile.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/ir/error.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/segment_engines.h"
#include "launch_command.h"
#include "lower_explain.h"
#include "opt_command.h"
#include "sequence_parallel_layer.h"
#include "sequence_parallel_mlp.h"
#include "targets_command.h"
#include "timing.h"
#include "trace_merge_command.h"

namespace hostir::tools {
namespace {

const char* kUsage = R"(usage: hostir [COMMAND] [ARGS...]

With no command, runs the main job: `hostir sp-mlp` on 2 local ranks.

commands:
  sp-mlp [FLAGS]       the main job: a sequence-parallel transformer MLP block
                       (allgather of token-sharded activations pipelined with
                       the first linear over stream chunks, GELU, row-parallel
                       second linear with reduce-scatter) on local ranks;
                       prints the host program, checks against single-process
                       ATen, times it against the program without chunking.
                       FLAGS: --ranks N (2) --tokens S --hidden H --ffn F
                       --chunks C (4) --streams K (4) --runs R --dump
                       --trace PATH (writes PATH.rankK.json)
  sp-layer [FLAGS]     a whole transformer layer, Megatron sequence + tensor
                       parallel: layer norms on token shards, causal attention
                       over heads sharded across the ranks, the MLP block;
                       the same output, checks and timing as sp-mlp.
                       FLAGS: sp-mlp's and --heads N (8)
                       (docs/transformer_layer.md)
  list                 list the built-in examples
  passes               list the compiler's passes in the order they run
  print EXAMPLE        print an example's fusion
  lower EXAMPLE        print an example's fusion and its host program
  lower --explain sp-mlp|sp-layer [--device D]
                       per collective: can the automatic overlap pass
                       pipeline it, on which axis, why not (docs/lowering.md)
  opt --pass NAME [FILE|-]
                       run host IR passes on a program in the textual host
                       IR and print it (--list-passes, --verify, --example;
                       docs/lowering.md)
  run EXAMPLE [-n N]   lower and run an example on random inputs, check it
                       against plain ATen and time both (median of N runs,
                       default 10)
  targets [FLAGS]      a Megatron MLP whose weights carry matmul_rhs on a mesh
                       of mixed targets: prints the host program and the
                       executables each device runs, checks against ATen,
                       times it against plain weights.
                       FLAGS: --ranks N (2) --targets LIST (HOSTIR_TARGET's
                       value, default cpu:avx512,cpu:avx2) --tokens --hidden
                       --ffn --runs R (3) (docs/targets.md)
  trace merge OUT IN...
                       merge per-rank traces (PREFIX.rankK.json) into one
                       file for ui.perfetto.dev
  launch -n N [--port P] -- COMMAND...
                       start N local ranks of COMMAND with the torchrun
                       environment set; output lines are prefixed by rank
  help, --help         this text
)";

// One line per example: the name, two spaces at least, the description (the
// column as wide as the longest name, so a name never touches its text).
int listCommand() {
  size_t width = 0;
  for (const Example& example : builtinExamples()) {
    width = std::max(width, example.name.size());
  }
  for (const Example& example : builtinExamples()) {
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << example.name
              << example.description << "\n";
  }
  return 0;
}

int printCommand(const std::string& name) {
  Fusion fusion;
  findExample(name).build(fusion);
  fusion.print();
  return 0;
}

// How each HostUnit of a host program runs: a compiled kernel (and for
// which target) or ATen, with the reason.
void printSegmentExecution(const HostIrContainer& program) {
  std::vector<HostUnit*> units = program.postedHostUnits();
  if (units.empty()) {
    return;
  }
  std::cout << "segments:\n";
  for (const HostUnit* unit : units) {
    std::cout << "  " << unit->toInlineString() << ": "
              << (unit->engine().has_value() ? describe(*unit->engine())
                                             : describeSegmentExecution(*unit->fusion()))
              << "\n";
  }
}

int lowerCommand(const std::string& name) {
  Fusion fusion;
  findExample(name).build(fusion);
  fusion.print();
  // The pipeline the Executor runs (presegmentation included), so that the
  // program printed is the one `hostir run` runs.
  const auto start = std::chrono::steady_clock::now();
  CompiledProgram compiled = compile(fusion);
  const auto lowered = std::chrono::steady_clock::now();
  const int compiled_before = KernelCache::global().compiled();
  const int loaded_before = KernelCache::global().loadedFromDisk();
  decideSegmentEngines(*compiled.program);  // kernels compiled ahead, as the Executor does
  const auto decided = std::chrono::steady_clock::now();
  std::cout << compiled.program->toString();
  printSegmentExecution(*compiled.program);
  auto ms = [](auto from, auto to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  std::cout << std::fixed << std::setprecision(1) << "compile: lowering " << ms(start, lowered)
            << " ms, engines and kernels " << ms(lowered, decided) << " ms ("
            << KernelCache::global().compiled() - compiled_before << " kernels compiled, "
            << KernelCache::global().loadedFromDisk() - loaded_before
            << " loaded from the kernel cache)\n";
  return 0;
}

int runCommand(const std::string& name, int runs) {
  const Example& example = findExample(name);
  Fusion fusion;
  example.build(fusion);
  std::cout << "== " << example.name << ": " << example.description << "\n";
  fusion.print();
  HostExecutor executor(fusion);
  std::cout << executor.hostProgram().toString();
  printSegmentExecution(executor.hostProgram());

  at::manual_seed(0);
  std::vector<at::Tensor> inputs = example.make_inputs();
  std::vector<at::Tensor> outputs = executor.run(inputs);
  std::vector<at::Tensor> expected = example.reference(inputs);

  bool ok = outputs.size() == expected.size();
  for (size_t i = 0; ok && i < outputs.size(); ++i) {
    double max_diff = (outputs[i] - expected[i]).abs().max().item<double>();
    double scale = expected[i].abs().max().item<double>();
    bool close = at::allclose(outputs[i], expected[i], 1e-4, 1e-4 * std::max(1.0, scale));
    std::cout << "check output " << i << " against ATen: max |diff| = " << max_diff
              << " (max |value| = " << scale << ") " << (close ? "OK" : "MISMATCH") << "\n";
    ok = ok && close;
  }
  double hostir_ms = medianMilliseconds(runs, [&] { executor.run(inputs); });
  double aten_ms = medianMilliseconds(runs, [&] { example.reference(inputs); });
  std::cout << std::fixed << std::setprecision(3) << "time (median of " << runs << "): hostir "
            << hostir_ms << " ms, plain ATen " << aten_ms << " ms, ratio " << hostir_ms / aten_ms
            << "\n";
  // What the runs ran on: a segment that fell back to ATen at run time
  // says so here, with the reason.
  if (std::string ran = executor.segmentExecution(); !ran.empty()) {
    std::cout << "segments ran:\n" << ran;
  }
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? 0 : 1;
}

// `hostir run EXAMPLE [-n N]`, parsed with CLI11: N must be an integer from
// 1 to 100000 (a number that does not fit, or text, is an error naming it).
int runSubcommand(const std::vector<std::string>& args) {
  CLI::App app{"lower and run an example, check it against ATen, time both", "hostir run"};
  std::string example;
  int runs = 10;
  app.add_option("EXAMPLE", example, "a built-in example (`hostir list`)")->required();
  app.add_option("-n,--runs", runs, "timed runs (median)")->check(CLI::Range(1, 100000));
  if (!parseArguments(app, args, "hostir run")) {
    return 0;
  }
  return runCommand(example, runs);
}

// `hostir print EXAMPLE` / `hostir lower EXAMPLE`, parsed with CLI11 (--help,
// and an extra argument is an error naming it).
int exampleSubcommand(const std::vector<std::string>& args, const std::string& command,
                      const std::string& description, int (*body)(const std::string&)) {
  CLI::App app{description, "hostir " + command};
  std::string example;
  app.add_option("EXAMPLE", example, "a built-in example (`hostir list`)")->required();
  if (!parseArguments(app, args, "hostir " + command)) {
    return 0;
  }
  return body(example);
}

int dispatchCommand(const std::vector<std::string>& args) {
  if (args.empty() || (args[0].rfind("--", 0) == 0 && args[0] != "--help")) {
    return runSequenceParallelMlp(args);
  }
  const std::string& command = args[0];
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "sp-mlp") {
    return runSequenceParallelMlp(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (command == "sp-layer") {
    return runSequenceParallelLayer(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (command == "targets") {
    return runTargetsCommand(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (command == "list") {
    CLI::App app{"list the built-in examples", "hostir list"};
    if (!parseArguments(app, std::vector<std::string>(args.begin() + 1, args.end()),
                        "hostir list")) {
      return 0;
    }
    return listCommand();
  }
  if (command == "trace") {
    return runTraceCommand(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (command == "passes") {
    CLI::App app{"list the compiler's passes in the order they run (HOSTIR_DISABLE_PASS names)",
                 "hostir passes"};
    if (!parseArguments(app, std::vector<std::string>(args.begin() + 1, args.end()),
                        "hostir passes")) {
      return 0;
    }
    std::cout << describePasses();
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "print") {
    return exampleSubcommand(rest, "print", "print an example's fusion", printCommand);
  }
  if (command == "lower" && std::find(rest.begin(), rest.end(), "--explain") != rest.end()) {
    return runLowerExplain(rest);
  }
  if (command == "lower") {
    return exampleSubcommand(rest, "lower", "lower an example and print its host program",
                             lowerCommand);
  }
  if (command == "opt") {
    return runOptCommand(rest);
  }
  if (command == "run") {
    return runSubcommand(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "hostir: unknown command '" << command << "'\n" << kUsage;
  return 2;
}

}  // namespace
}  // namespace hostir::tools

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "launch") {
    return hostir::runLaunchCommand(argc - 2, argv + 2);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return hostir::tools::dispatchCommand(args);
  } catch (const std::exception& error) {
    std::cerr << "hostir: error: " << error.what() << "\n";
    return 1;
  }
}
