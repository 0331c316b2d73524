#pragma once

namespace hostir::tools {

// Runs a command of libhostir_commands (sp-mlp, sp-layer, run, lower,
// targets; `argv` as main got it), loading that library first: from the
// folder of this binary (the build tree) or `../lib/hostir/` beside it (an
// install). Returns the command's exit status, or 1 with a message naming
// the paths tried when the library cannot be loaded.
int runLoadedCommand(int argc, char** argv);

}  // namespace hostir::tools
