#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hostir::tools {

// The main job: a sequence-parallel transformer MLP block on N ranks.
struct SequenceParallelMlpOptions {
  int64_t ranks = 2;
  int64_t tokens = 1024;
  int64_t hidden = 512;
  int64_t ffn = 2048;
  // Pipelined variants to run: chunk counts and/or "auto".
  std::vector<std::string> chunks = {"auto"};
  int streams = 4;
  int runs = 5;
  bool dump = false;
  // Also time a communication-only and a compute-only program (the ideal
  // pipelined time is the larger of the two).
  bool baselines = false;
  std::string trace_path;
  std::string json_path;
  std::string link = "loopback";  // how the output names the link
};

// Parses the flags (`hostir sp-mlp --help`); throws hostir::Error on a bad
// flag or value.
SequenceParallelMlpOptions parseSequenceParallelMlpOptions(const std::vector<std::string>& args);

// On a rank (RANK/WORLD_SIZE set): builds, lowers, checks and times the
// block. Outside a launch: starts `ranks` local ranks of this program.
int runSequenceParallelMlp(const std::vector<std::string>& args);

}  // namespace hostir::tools
