#include "cli_arguments.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <system_error>

#include "hostir/ir/error.h"

namespace hostir::tools {

namespace {

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// " (did you mean --tokens?)" for a mistyped flag (a third of its letters or
// fewer wrong), else "".
std::string suggestionFor(const CLI::App& app, const std::string& unexpected) {
  if (unexpected.rfind("-", 0) != 0) {
    return "";
  }
  std::string flag = unexpected.substr(0, unexpected.find('='));
  std::string best;
  size_t best_distance = std::max<size_t>(2, flag.size() / 3) + 1;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      size_t distance = editDistance(flag, "--" + name);
      if (distance < best_distance) {
        best_distance = distance;
        best = "--" + name;
      }
    }
  }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

}  // namespace

bool parseArguments(CLI::App& app, const std::vector<std::string>& args,
                    const std::string& command) {
  // CLI11 takes a vector of arguments last-first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ExtrasError&) {
    std::vector<std::string> extras = app.remaining();
    std::string listed;
    std::string suggestions;
    for (const std::string& extra : extras) {
      listed += (listed.empty() ? "" : " ") + extra;
      suggestions += suggestionFor(app, extra);
    }
    HOSTIR_THROW(command, ": unexpected argument(s) '", listed, "'", suggestions, "; see `",
                 command, " --help`");
  } catch (const CLI::ParseError& error) {
    HOSTIR_THROW(command, ": ", error.what(), "; see `", command, " --help`");
  }
  return true;
}

void checkOutputFolder(const std::string& flag, const std::string& path) {
  if (path.empty()) {
    return;
  }
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) {
    folder = ".";
  }
  std::error_code error;
  HOSTIR_CHECK(std::filesystem::is_directory(folder, error), flag, " ", path, ": the folder '",
               folder.string(), "' does not exist; create it or pick another");
  HOSTIR_CHECK(::access(folder.c_str(), W_OK) == 0, flag, " ", path, ": the folder '",
               folder.string(), "' is not writable");
}

}  // namespace hostir::tools
