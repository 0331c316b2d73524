#include "opt_command.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli_arguments.h"
#include "examples.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/verifier.h"
#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/error.h"
#include "megatron_blocks.h"

namespace hostir {

namespace {

std::vector<const RegisteredPass*> hostIrPasses() {
  std::vector<const RegisteredPass*> passes;
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.stage == PassStage::HostIr) {
      passes.push_back(&pass);
    }
  }
  return passes;
}

std::string hostIrPassNames() {
  std::string names;
  for (const RegisteredPass* pass : hostIrPasses()) {
    names += (names.empty() ? "" : ", ") + pass->name;
  }
  return names;
}

const RegisteredPass& hostIrPassNamed(const std::string& name) {
  for (const RegisteredPass* pass : hostIrPasses()) {
    if (pass->name == name) {
      return *pass;
    }
  }
  for (const RegisteredPass& pass : registeredPasses()) {
    HOSTIR_CHECK(pass.name != name, "--pass ", name,
                 " is a presegmentation pass: it runs on the user's fusion, not on a host "
                 "program; hostir opt runs the host IR passes: ",
                 hostIrPassNames());
  }
  HOSTIR_THROW("--pass ", name, " names no pass; the host IR passes are: ", hostIrPassNames());
}

std::string readInput(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream file(path);
  HOSTIR_CHECK(file.good(), "cannot read the host program ", path,
               ": give a file of textual host IR, or - for stdin");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The fusion `name` names: a built-in example, or a Megatron block on 2
// ranks with `chunks` Stream chunks.
std::unique_ptr<Fusion> exampleFusion(const std::string& name, int64_t chunks) {
  if (name == "sp-mlp") {
    return tools::buildSequenceParallelMlp(2, chunks);
  }
  if (name == "sp-layer") {
    return tools::buildTransformerLayer(2, 8, chunks);
  }
  auto fusion = std::make_unique<Fusion>();
  tools::findExample(name).build(*fusion);
  return fusion;
}

// `name`'s host program on `device`, the host IR passes before
// `stop_before` run ("" runs them all).
std::unique_ptr<HostIrContainer> lowerExample(const std::string& name, int64_t chunks,
                                              int64_t device, const std::string& stop_before) {
  std::unique_ptr<Fusion> fusion = exampleFusion(name, chunks);
  bool multidevice = name == "sp-mlp" || name == "sp-layer";
  runPresegmentationPasses(fusion.get(), multidevice);
  std::unique_ptr<HostIrContainer> program = lowerSegmentsToHostIr(*fusion);
  std::optional<MultiDeviceLowering> lowering;
  if (multidevice) {
    lowering = MultiDeviceLowering{device, {}};
  }
  if (!stop_before.empty()) {
    hostIrPassNamed(stop_before);
  }
  for (const RegisteredPass* pass : hostIrPasses()) {
    if (pass->name == stop_before) {
      break;
    }
    if (pass->scope == PassScope::Always || multidevice) {
      pass->run_on_host_program(*program, lowering);
    }
  }
  return program;
}

}  // namespace

int runOptCommand(const std::vector<std::string>& args) {
  CLI::App app{"run host IR passes on a host program in the textual host IR", "hostir opt"};
  std::string input = "-";
  std::vector<std::string> passes;
  bool verify = false;
  bool list_passes = false;
  bool readable = false;
  int64_t device = 0;
  std::string example;
  std::string stop_before;
  int64_t chunks = 4;
  app.add_option("FILE", input, "the host program's text; - (the default) reads stdin");
  // One name per --pass, so `--pass X FILE` leaves FILE positional.
  app.add_option("--pass", passes, "a host IR pass to run (repeat it for several, in order)")
      ->allow_extra_args(false);
  app.add_flag("--verify", verify, "run the host program verifier after parsing and each pass");
  app.add_flag("--list-passes", list_passes, "list the host IR passes --pass takes");
  app.add_flag("--readable", readable, "print the program as `hostir lower` does (not parsable)");
  app.add_option("--device", device, "the rank a multi-device pass lowers for (0)");
  app.add_option("--example", example,
                 "instead of reading FILE, lower a built-in example, sp-mlp or sp-layer");
  app.add_option("--stop-before", stop_before,
                 "with --example: run the host IR passes before this one only");
  app.add_option("--chunks", chunks, "with --example sp-mlp or sp-layer: Stream chunks (4)")
      ->check(CLI::Range(1, 1024));
  if (!tools::parseArguments(app, args, "hostir opt")) {
    return 0;
  }
  if (list_passes) {
    for (const RegisteredPass* pass : hostIrPasses()) {
      std::cout << pass->name << "  " << pass->summary << "\n";
    }
    return 0;
  }
  std::unique_ptr<HostIrContainer> program =
      example.empty() ? parseHostIrText(readInput(input), input == "-" ? "<stdin>" : input)
                      : lowerExample(example, chunks, device, stop_before);
  if (verify) {
    verifyHostProgram(*program);
  }
  for (const std::string& name : passes) {
    const RegisteredPass& pass = hostIrPassNamed(name);
    pass.run_on_host_program(*program, MultiDeviceLowering{device, program->deviceTargets()});
    if (verify) {
      verifyHostProgram(*program);
    }
  }
  std::cout << (readable ? program->toString() : printHostIrText(*program));
  return 0;
}

}  // namespace hostir
