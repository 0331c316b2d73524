#include "cli_arguments.h"

#include <iostream>

#include "hostir/ir/error.h"

namespace hostir::tools {

bool parseArguments(CLI::App& app, const std::vector<std::string>& args,
                    const std::string& command) {
  // CLI11 takes a vector of arguments last-first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& error) {
    HOSTIR_THROW(command, ": ", error.what(), "; see `", command, " --help`");
  }
  return true;
}

}  // namespace hostir::tools
