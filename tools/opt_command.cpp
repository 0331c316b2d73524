#include "opt_command.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli_arguments.h"
#include "example_fusions.h"
#include "hostir/autodiff/differentiate.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/stream_split_insertion.h"
#include "hostir/host_ir/passes/verifier.h"
#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/error.h"
#include "megatron_blocks.h"

namespace hostir {

namespace {

std::string passNames() {
  std::string names;
  for (const RegisteredPass& pass : registeredPasses()) {
    names += (names.empty() ? "" : ", ") + pass.name;
  }
  return names;
}

// The pass `name` that `flag` (--pass, --stop-before, --stop-after) names.
const RegisteredPass& passNamed(const std::string& name, const std::string& flag = "--pass") {
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.name == name) {
      return pass;
    }
  }
  HOSTIR_THROW(flag, " ", name, " names no pass; the passes are: ", passNames());
}

// The pass `name`, which must be able to run on the input: a presegmentation
// pass on a fusion, a host IR pass on a host program.
const RegisteredPass& passForInput(const std::string& name, bool input_is_fusion) {
  const RegisteredPass& pass = passNamed(name);
  if (input_is_fusion) {
    HOSTIR_CHECK(pass.stage == PassStage::Presegmentation, "--pass ", name,
                 " is a host IR pass: it runs on a host program, and the input is a fusion "
                 "before segmentation; give it a program (`hostir opt --example NAME "
                 "--stop-before ",
                 name, "`)");
  } else {
    HOSTIR_CHECK(pass.stage == PassStage::HostIr, "--pass ", name,
                 " is a presegmentation pass: it runs on a fusion before segmentation, and the "
                 "input is a host program; give it a fusion (`hostir opt --example NAME "
                 "--stop-before ",
                 name, "`)");
  }
  return pass;
}

std::string readInput(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream file(path);
  HOSTIR_CHECK(file.good(), "cannot read the input ", path,
               ": give a file of textual host IR (a host program or a fusion), or - for stdin");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// insert_stream_splits' planner under `hostir opt`, which knows neither the
// sizes nor the link the runtime's planner prices: every candidate the pass
// finds chunkable gets the --stream-chunks the user gave.
class FixedStreamSplitPlanner : public StreamSplitPlanner {
 public:
  explicit FixedStreamSplitPlanner(int64_t chunks) : chunks_(chunks) {}
  std::vector<StreamSplitDecision> decide(
      const std::vector<StreamSplitCandidate>& candidates) override {
    std::vector<StreamSplitDecision> decisions;
    for (const StreamSplitCandidate& candidate : candidates) {
      decisions.push_back(
          {candidate.not_chunkable.empty() ? chunks_ : 1, "--stream-chunks of hostir opt", {}});
    }
    return decisions;
  }

 private:
  int64_t chunks_;
};

// The fusion `name` names: a built-in example, or a Megatron block on 2
// ranks with `chunks` Stream chunks; of a training block, the forward as
// the inference runs it, the forward `--train` runs (which also returns what
// its backward reads) or the backward (the grads of every input).
enum class TrainingProgram { kNone, kForward, kBackward };

// Which training program, and what its forward keeps (--save).
struct Training {
  TrainingProgram program = TrainingProgram::kNone;
  SavePolicy save = SavePolicy::kSaveGemmOutputs;
};

std::string flagOf(const Training& training) {
  const std::string save = training.save == SavePolicy::kSaveGathered ? " --save gathered" : "";
  return training.program == TrainingProgram::kForward    ? " --train-forward" + save
         : training.program == TrainingProgram::kBackward ? " --backward" + save
                                                          : "";
}

std::unique_ptr<Fusion> exampleFusion(const std::string& name, int64_t chunks,
                                      const Training& training) {
  std::unique_ptr<Fusion> fusion;
  if (name == "sp-mlp") {
    fusion = tools::buildSequenceParallelMlp(2, chunks);
  } else if (name == "sp-layer") {
    fusion = tools::buildTransformerLayer(2, 8, chunks);
  } else {
    HOSTIR_CHECK(training.program == TrainingProgram::kNone, flagOf(training).substr(1),
                 " with --example ", name,
                 ": only the training blocks sp-mlp and sp-layer are differentiated here");
    fusion = std::make_unique<Fusion>();
    tools::findExampleFusion(name).build(*fusion);
    return fusion;
  }
  if (training.program == TrainingProgram::kNone) {
    return fusion;
  }
  Differentiated differentiated = differentiate(*fusion, {.save = training.save});
  return training.program == TrainingProgram::kForward ? std::move(differentiated.forward)
                                                       : std::move(differentiated.backward);
}

// Whether a lowering of one device (`multidevice` false) or many runs `pass`.
bool runsPass(const RegisteredPass& pass, bool multidevice) {
  return pass.scope == PassScope::Always || multidevice;
}

// Where --stop-before / --stop-after stop an example's lowering: before or
// after `pass` (none: every pass runs).
struct StopPoint {
  const RegisteredPass* pass = nullptr;
  bool after = false;
};

// Runs the passes of `stage`, in the table's order, that `run_pass` runs up
// to `stop`; true when it stopped (the stop pass is of `stage`).
template <typename RunPass>
bool runStageUntil(PassStage stage, const StopPoint& stop, bool multidevice, RunPass run_pass) {
  for (const RegisteredPass& pass : registeredPasses()) {
    if (pass.stage != stage) {
      continue;
    }
    if (&pass == stop.pass && !stop.after) {
      return true;
    }
    if (runsPass(pass, multidevice)) {
      run_pass(pass);
    }
    if (&pass == stop.pass) {
      return true;
    }
  }
  return false;
}

bool isMultiDeviceExample(const std::string& name) {
  return name == "sp-mlp" || name == "sp-layer";
}

// The example `name`, for --device, as it stands at `stop`: before or after a
// presegmentation pass, the fusion; before or after a host IR pass (or with
// no stop), its host program. What a lit test of that pass starts from.
ParsedIr lowerExample(const std::string& name, int64_t chunks, const Training& training,
                      int64_t device, const StopPoint& stop) {
  ParsedIr result;
  result.fusion = exampleFusion(name, chunks, training);
  bool multidevice = isMultiDeviceExample(name);
  if (runStageUntil(PassStage::Presegmentation, stop, multidevice,
                    [&](const RegisteredPass& pass) { pass.run_on_fusion(*result.fusion); })) {
    return result;
  }
  result.program = lowerSegmentsToHostIr(*result.fusion);
  result.fusion.reset();
  std::optional<MultiDeviceLowering> lowering;
  if (multidevice) {
    lowering = MultiDeviceLowering{device, {}};
  }
  runStageUntil(PassStage::HostIr, stop, multidevice, [&](const RegisteredPass& pass) {
    pass.run_on_host_program(*result.program, lowering);
  });
  return result;
}

// The stop point --stop-before or --stop-after names (at most one, and only
// with --example).
StopPoint stopPoint(const std::string& example, const std::string& stop_before,
                    const std::string& stop_after) {
  if (stop_before.empty() && stop_after.empty()) {
    return {};
  }
  const std::string& flag = stop_before.empty() ? "--stop-after" : "--stop-before";
  HOSTIR_CHECK(stop_before.empty() || stop_after.empty(), "--stop-before ", stop_before,
               " and --stop-after ", stop_after, " both given: give one stop point");
  HOSTIR_CHECK(!example.empty(), flag, " ", stop_before + stop_after,
               " without --example: it stops the lowering of a built-in example (hostir list, "
               "sp-mlp, sp-layer); a FILE is already at its stage, run --pass on it");
  return {&passNamed(stop_before + stop_after, flag), stop_before.empty()};
}

// The comment line printed above an example stopped at `stop`: which
// example, which form (the fusion or a rank's host program) and where.
std::string stopLabel(const std::string& example, const Training& training, int64_t device,
                      const StopPoint& stop, const std::vector<std::string>& passes) {
  bool presegmentation = stop.pass->stage == PassStage::Presegmentation;
  bool multidevice = isMultiDeviceExample(example);
  std::string label =
      "// hostir opt --example " + example + flagOf(training) + ": " +
      (presegmentation ? std::string("the fusion (no host program yet)")
                       : std::string("the host program") +
                             (multidevice ? " of rank " + std::to_string(device) : std::string())) +
      (stop.after ? " after " : " before ") +
      (presegmentation ? "presegmentation pass " : "host IR pass ") + stop.pass->name;
  if (!runsPass(*stop.pass, multidevice)) {
    label += " (which does not run on a single-device example)";
  }
  for (size_t i = 0; i < passes.size(); ++i) {
    label += (i == 0 ? ", then --pass " : ", ") + passes[i];
  }
  return label + "\n";
}

// The training program --backward / --train-forward / --save choose.
Training trainingOf(bool backward, bool train_forward, const std::string& save,
                    const std::string& example) {
  HOSTIR_CHECK(!(backward && train_forward),
               "--backward and --train-forward both given: give one of a training block's two "
               "programs");
  const Training training{.program = backward        ? TrainingProgram::kBackward
                                     : train_forward ? TrainingProgram::kForward
                                                     : TrainingProgram::kNone,
                          .save = savePolicyNamed(save)};
  HOSTIR_CHECK(training.program != TrainingProgram::kNone || save == "gemm_outputs",
               "--save without --train-forward or --backward: it chooses what a training "
               "forward keeps");
  HOSTIR_CHECK(training.program == TrainingProgram::kNone || !example.empty(),
               flagOf(training).substr(1),
               " without --example: it lowers a built-in block's training program");
  return training;
}

}  // namespace

int runOptCommand(const std::vector<std::string>& args) {
  CLI::App app{
      "run passes on IR text: host IR passes on a host program, presegmentation passes "
      "on a fusion",
      "hostir opt"};
  std::string input = "-";
  std::vector<std::string> passes;
  bool verify = false;
  bool list_passes = false;
  bool readable = false;
  int64_t device = 0;
  std::string example;
  std::string stop_before;
  std::string stop_after;
  bool backward = false;
  bool train_forward = false;
  int64_t chunks = 4;
  int64_t stream_chunks = 0;
  std::string save = "gemm_outputs";
  app.add_option("FILE", input,
                 "the text of a host program or of a fusion; - (the default) reads stdin");
  // One name per --pass, so `--pass X FILE` leaves FILE positional.
  app.add_option("--pass", passes, "a pass to run (repeat it for several, in order)")
      ->allow_extra_args(false);
  app.add_flag("--verify", verify,
               "run the host program verifier after parsing and each pass (host programs)");
  app.add_flag("--list-passes", list_passes, "list the passes --pass takes, with their stage");
  app.add_flag("--readable", readable, "print the IR as `hostir lower` does (not parsable)");
  app.add_option("--device", device, "the rank a multi-device pass lowers for (0)");
  app.add_option("--example", example,
                 "instead of reading FILE, lower a built-in example, sp-mlp or sp-layer");
  app.add_option("--stop-before", stop_before,
                 "with --example: print it as it stands before this pass (a presegmentation "
                 "pass: the fusion; a host IR pass: the host program), under a comment saying so");
  app.add_option("--stop-after", stop_after,
                 "with --example: print it as it stands after this pass, as --stop-before");
  app.add_flag("--backward", backward,
               "with --example sp-mlp or sp-layer: lower its backward (what --train runs)");
  app.add_flag("--train-forward", train_forward,
               "with --example sp-mlp or sp-layer: lower the forward --train runs (it also "
               "returns what the backward reads)");
  app.add_option("--save", save,
                 "with --train-forward or --backward: what the forward keeps, gemm_outputs (the "
                 "default) or gathered (as `hostir sp-mlp --train --save`)")
      ->check(CLI::IsMember({"gemm_outputs", "gathered"}));
  app.add_option("--chunks", chunks, "with --example sp-mlp or sp-layer: Stream chunks (4)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--stream-chunks", stream_chunks,
                 "insert_stream_splits gives each collective it can pipeline this many chunks "
                 "(without it, it has no planner and changes nothing)")
      ->check(CLI::Range(2, 1024));
  if (!tools::parseArguments(app, args, "hostir opt")) {
    return 0;
  }
  if (list_passes) {
    for (const RegisteredPass& pass : registeredPasses()) {
      std::cout << pass.name << "  "
                << (pass.stage == PassStage::Presegmentation ? "presegmentation" : "host-IR")
                << "  " << pass.summary << "\n";
    }
    return 0;
  }
  FixedStreamSplitPlanner planner(stream_chunks);
  StreamSplitPlannerScope planner_scope(stream_chunks > 0 ? &planner : nullptr);
  const Training training = trainingOf(backward, train_forward, save, example);
  StopPoint stop = stopPoint(example, stop_before, stop_after);
  ParsedIr ir = example.empty() ? parseIrText(readInput(input), input == "-" ? "<stdin>" : input)
                                : lowerExample(example, chunks, training, device, stop);
  if (verify && ir.program != nullptr) {
    verifyHostProgram(*ir.program);
  }
  for (const std::string& name : passes) {
    const RegisteredPass& pass = passForInput(name, ir.fusion != nullptr);
    if (ir.fusion != nullptr) {
      pass.run_on_fusion(*ir.fusion);
      continue;
    }
    pass.run_on_host_program(*ir.program, MultiDeviceLowering{device, ir.program->deviceTargets()});
    if (verify) {
      verifyHostProgram(*ir.program);
    }
  }
  if (stop.pass != nullptr) {
    std::cout << stopLabel(example, training, device, stop, passes);
  }
  if (ir.fusion != nullptr) {
    std::cout << (readable ? ir.fusion->toString() : printFusionText(*ir.fusion));
  } else {
    std::cout << (readable ? ir.program->toString() : printHostIrText(*ir.program));
  }
  return 0;
}

}  // namespace hostir
