#pragma once

#include <string>
#include <vector>

namespace hostir::tools {

// `hostir trace merge OUT.json IN.json...`: one Chrome-trace file (Perfetto,
// chrome://tracing) of every rank's trace, e.g. the PREFIX.rankK.json files of
// `hostir sp-mlp --trace PREFIX` or HOSTIR_TRACE's per-rank files. Each input
// keeps its process id (the rank) unless another input already used it; then
// it gets the next free one (a note says so). An input that is not a trace is
// an error naming the file.
int runTraceCommand(const std::vector<std::string>& args);

}  // namespace hostir::tools
