// The `hostir` command: run, inspect and launch hostir programs. This binary
// holds the commands that need no ATen (help, list, print, passes, opt,
// trace merge, launch) and starts in milliseconds; the commands that run or
// compile programs (sp-mlp, sp-layer, run, lower, targets) are in
// libhostir_commands, loaded on first use (command_library.h): loading
// libtorch and its ~300 shared libraries takes about a second here, which
// `hostir launch` paid once per job and `hostir list` per call.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_arguments.h"
#include "command_library.h"
#include "example_fusions.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "launch_command.h"
#include "opt_command.h"
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
  for (const ExampleFusion& example : builtinExampleFusions()) {
    width = std::max(width, example.name.size());
  }
  for (const ExampleFusion& example : builtinExampleFusions()) {
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << example.name
              << example.description << "\n";
  }
  return 0;
}

int printCommand(const std::vector<std::string>& args) {
  CLI::App app{"print an example's fusion", "hostir print"};
  std::string name;
  app.add_option("EXAMPLE", name, "a built-in example (`hostir list`)")->required();
  if (!parseArguments(app, args, "hostir print")) {
    return 0;
  }
  Fusion fusion;
  findExampleFusion(name).build(fusion);
  fusion.print();
  return 0;
}

// The commands of this binary; std::nullopt for one of libhostir_commands.
std::optional<int> dispatchLocalCommand(const std::vector<std::string>& args) {
  if (args.empty() || (args[0].rfind("--", 0) == 0 && args[0] != "--help")) {
    return std::nullopt;  // the main job, sp-mlp
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "list") {
    CLI::App app{"list the built-in examples", "hostir list"};
    if (!parseArguments(app, rest, "hostir list")) {
      return 0;
    }
    return listCommand();
  }
  if (command == "trace") {
    return runTraceCommand(rest);
  }
  if (command == "passes") {
    CLI::App app{"list the compiler's passes in the order they run (HOSTIR_DISABLE_PASS names)",
                 "hostir passes"};
    if (!parseArguments(app, rest, "hostir passes")) {
      return 0;
    }
    std::cout << describePasses();
    return 0;
  }
  if (command == "print") {
    return printCommand(rest);
  }
  if (command == "opt") {
    return runOptCommand(rest);
  }
  for (std::string_view loaded : kLoadedCommands) {
    if (command == loaded) {
      return std::nullopt;
    }
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
    if (std::optional<int> status = hostir::tools::dispatchLocalCommand(args)) {
      return *status;
    }
  } catch (const std::exception& error) {
    std::cerr << "hostir: error: " << error.what() << "\n";
    return 1;
  }
  return hostir::tools::runLoadedCommand(argc, argv);
}
