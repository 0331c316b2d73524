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
  int64_t chunks = 4;
  int streams = 4;
  int runs = 5;
  bool dump = false;
  std::string trace_path;
};

// Parses `--ranks N --tokens S --hidden H --ffn F --chunks C --streams K
// --runs R --dump --trace PATH`; throws hostir::Error on a bad flag.
SequenceParallelMlpOptions parseSequenceParallelMlpOptions(const std::vector<std::string>& args);

// On a rank (RANK/WORLD_SIZE set): builds, lowers, checks and times the
// block. Outside a launch: starts `ranks` local ranks of this program.
int runSequenceParallelMlp(const std::vector<std::string>& args);

}  // namespace hostir::tools
