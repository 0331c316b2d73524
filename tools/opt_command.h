#pragma once

#include <string>
#include <vector>

namespace hostir {

// `hostir opt`: reads a host program in the textual host IR (a file, or
// stdin for "-"), runs the named host IR passes of the pass table in the
// order given (--verify: the verifier after each), and prints the result in
// the same text; `--list-passes` lists what --pass takes. With --example
// (a built-in example, sp-mlp or sp-layer) it lowers that program for
// --device instead, running the host IR passes before --stop-before, which
// writes the input of a pass's lit test (docs/lowering.md).
int runOptCommand(const std::vector<std::string>& args);

}  // namespace hostir
