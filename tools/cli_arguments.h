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

}  // namespace hostir::tools
