#pragma once

#include <string>
#include <vector>

namespace hostir {

// `hostir opt`: reads IR text (a file, or stdin for "-"): a host program
// (textual host IR) or a fusion before segmentation (its "fusion { ... }"
// form); runs the named passes of the pass table in the order given — host
// IR passes on a program (--verify: the verifier after each),
// presegmentation passes on a fusion (--stream-chunks gives
// insert_stream_splits a planner) — and prints the result in the same text;
// `--list-passes` lists what --pass takes. With --example (a built-in
// example, sp-mlp or sp-layer) it lowers that program for --device instead,
// running the passes before --stop-before (a fusion when that is a
// presegmentation pass), which writes the input of a pass's lit test
// (docs/lowering.md).
int runOptCommand(const std::vector<std::string>& args);

}  // namespace hostir
