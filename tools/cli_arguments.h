#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace hostir::tools {

// Parses a subcommand's arguments (`args`, without the subcommand's name)
// into `app`. Returns false after printing the help for `--help`; a bad
// argument is a hostir::Error naming `command` ("hostir run: ...; see
// `hostir run --help`").
bool parseArguments(CLI::App& app, const std::vector<std::string>& args,
                    const std::string& command);

// Throws hostir::Error naming `flag` when the folder `path` would be written
// into does not exist or is not writable: checked before a run, so a typo
// does not cost the whole run. An empty path is not checked.
void checkOutputFolder(const std::string& flag, const std::string& path);

}  // namespace hostir::tools
