#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sharded_job.h"

namespace hostir::tools {

// `hostir sp-layer`: the Megatron-style transformer layer of
// megatron_blocks.h on N ranks; sp-mlp's flags plus the number of heads.
struct SequenceParallelLayerOptions : ShardedJobOptions {
  int64_t heads = 8;
};

// Parses the flags (`hostir sp-layer --help`); throws hostir::Error on a bad
// flag or value.
SequenceParallelLayerOptions parseSequenceParallelLayerOptions(
    const std::vector<std::string>& args);

// On a rank (RANK/WORLD_SIZE set): builds, lowers, checks and times the
// layer. Outside a launch: checks the arguments, then starts `ranks` local
// ranks of this program.
int runSequenceParallelLayer(const std::vector<std::string>& args);

}  // namespace hostir::tools
