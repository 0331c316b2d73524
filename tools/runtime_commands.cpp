// The commands of `hostir` that run or compile programs (sp-mlp, sp-layer,
// run, lower, targets), built as libhostir_commands: the `hostir` binary
// loads it on first use (command_library.h), so that its other commands do
// not load libtorch.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli_arguments.h"
#include "command_library.h"
#include "examples.h"
#include "hostir/compiler/compile.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/ir/error.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/segment_engines.h"
#include "lower_explain.h"
#include "sequence_parallel_layer.h"
#include "sequence_parallel_mlp.h"
#include "targets_command.h"
#include "timing.h"

namespace hostir::tools {
namespace {

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
  findExampleFusion(name).build(fusion);
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
  example.fusion->build(fusion);
  std::cout << "== " << example.fusion->name << ": " << example.fusion->description << "\n";
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
  if (args.empty() || args[0].rfind("--", 0) == 0) {
    return runSequenceParallelMlp(args);
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "sp-mlp") {
    return runSequenceParallelMlp(rest);
  }
  if (command == "sp-layer") {
    return runSequenceParallelLayer(rest);
  }
  if (command == "targets") {
    return runTargetsCommand(rest);
  }
  if (command == "lower" && std::find(rest.begin(), rest.end(), "--explain") != rest.end()) {
    return runLowerExplain(rest);
  }
  if (command == "lower") {
    return exampleSubcommand(rest, "lower", "lower an example and print its host program",
                             lowerCommand);
  }
  if (command == "run") {
    return runSubcommand(rest);
  }
  std::cerr << "hostir: '" << command << "' is not a command of libhostir_commands\n";
  return 2;
}

}  // namespace
}  // namespace hostir::tools

extern "C" int hostir_run_loaded_command(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return hostir::tools::dispatchCommand(args);
  } catch (const std::exception& error) {
    std::cerr << "hostir: error: " << error.what() << "\n";
    return 1;
  }
}
