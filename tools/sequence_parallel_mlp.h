#pragma once

#include <string>
#include <vector>

#include "sharded_job.h"

namespace hostir::tools {

// The main job: a sequence-parallel transformer MLP block on N ranks
// (`hostir sp-mlp`); its flags are the sharded jobs' common ones.
using SequenceParallelMlpOptions = ShardedJobOptions;

// Parses the flags (`hostir sp-mlp --help`); throws hostir::Error on a bad
// flag or value.
SequenceParallelMlpOptions parseSequenceParallelMlpOptions(const std::vector<std::string>& args);

// On a rank (RANK/WORLD_SIZE set): builds, lowers, checks and times the
// block. Outside a launch: starts `ranks` local ranks of this program.
int runSequenceParallelMlp(const std::vector<std::string>& args);

}  // namespace hostir::tools
