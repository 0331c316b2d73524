#include "lower_explain.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli_arguments.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/stream_split_insertion.h"
#include "hostir/ir/error.h"
#include "megatron_blocks.h"

namespace hostir {

namespace {

// Stands in for the executor's planner when there are no sizes: records
// what insert_stream_splits found and leaves every candidate unchunked, so
// the program printed is the one as written.
class RecordingPlanner : public StreamSplitPlanner {
 public:
  std::vector<StreamSplitDecision> decide(
      const std::vector<StreamSplitCandidate>& candidates) override {
    report_ = describeStreamSplits(candidates, {});
    called_ = true;
    return std::vector<StreamSplitDecision>(candidates.size());
  }
  const std::string& report() const {
    return report_;
  }
  bool called() const {
    return called_;
  }

 private:
  std::string report_;
  bool called_ = false;
};

}  // namespace

int runLowerExplain(const std::vector<std::string>& args) {
  CLI::App app{
      "lower sp-mlp or sp-layer as written and say, per collective, what the automatic "
      "overlap pass (insert_stream_splits) can do with it",
      "hostir lower --explain"};
  std::string example;
  int64_t device = 0;
  bool explain = false;
  app.add_option("EXAMPLE", example, "sp-mlp or sp-layer (2 ranks, no Stream split)")->required();
  app.add_flag("--explain", explain, "say per collective whether it can be pipelined and why");
  app.add_option("--device", device, "the rank to lower for (0 or 1)")->check(CLI::Range(0, 1));
  if (!tools::parseArguments(app, args, "hostir lower --explain")) {
    return 0;
  }
  HOSTIR_CHECK(example == "sp-mlp" || example == "sp-layer", "hostir lower --explain: '", example,
               "' has no collectives to explain; give sp-mlp or sp-layer");
  std::unique_ptr<Fusion> fusion = example == "sp-mlp"
                                       ? tools::buildSequenceParallelMlp(2, /*chunks=*/1)
                                       : tools::buildTransformerLayer(2, 8, /*chunks=*/1);
  RecordingPlanner planner;
  std::unique_ptr<HostIrContainer> program;
  {
    StreamSplitPlannerScope scope(&planner);
    program = presegmentAndLower(*fusion, MultiDeviceLowering{device, {}});
  }
  std::cout << program->toString();
  std::cout << "overlap (insert_stream_splits), rank " << device << ":\n";
  if (!planner.called()) {
    std::cout << "  no collective it can pipeline (or the pass is disabled)\n";
  } else {
    std::cout << planner.report();
  }
  std::cout << "chunk counts and predicted times: chosen at the first run from the sizes and the "
               "link; `hostir "
            << example << " --chunks none --explain` prints them and each collective's measured "
            << "exposed time\n";
  return 0;
}

}  // namespace hostir
