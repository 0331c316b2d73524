#pragma once

#include <array>
#include <string_view>

namespace hostir::tools {

// The commands libhostir_commands runs (runtime_commands.cpp dispatches them).
inline constexpr std::array<std::string_view, 5> kLoadedCommands{"sp-mlp", "sp-layer", "lower",
                                                                 "run", "targets"};

// Runs a command of libhostir_commands (sp-mlp, sp-layer, run, lower,
// targets; `argv` as main got it), loading that library first: from the
// folder of this binary (the build tree) or `../lib/hostir/` beside it (an
// install). Returns the command's exit status, or 1 with a message naming
// the paths tried when the library cannot be loaded.
int runLoadedCommand(int argc, char** argv);

}  // namespace hostir::tools
