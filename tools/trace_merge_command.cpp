#include "trace_merge_command.h"

#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_arguments.h"
#include "hostir/ir/error.h"

namespace hostir::tools {

namespace {

using Json = nlohmann::json;

Json readTrace(const std::string& path) {
  std::ifstream file(path);
  HOSTIR_CHECK(file.is_open(), "hostir trace merge: cannot read '", path, "'");
  Json trace = Json::parse(file, nullptr, /*allow_exceptions=*/false);
  HOSTIR_CHECK(!trace.is_discarded() && trace.is_object() && trace.contains("traceEvents") &&
                   trace["traceEvents"].is_array(),
               "hostir trace merge: '", path,
               "' is not a Chrome trace (a JSON object with a traceEvents array)");
  return trace;
}

int mergeTraces(const std::string& out_path, const std::vector<std::string>& inputs) {
  checkOutputFolder("hostir trace merge:", out_path);
  Json merged = {{"displayTimeUnit", "ms"}, {"traceEvents", Json::array()}};
  std::set<int64_t> used;
  for (const std::string& path : inputs) {
    Json trace = readTrace(path);
    std::set<int64_t> pids;
    for (const Json& event : trace["traceEvents"]) {
      if (event.contains("pid") && event["pid"].is_number_integer()) {
        pids.insert(event["pid"].get<int64_t>());
      }
    }
    // A pid another file already has (two single-process traces, both 0)
    // moves to the next free one, so every file keeps its own lanes.
    std::map<int64_t, int64_t> renamed;
    for (int64_t pid : pids) {
      int64_t target = pid;
      while (used.count(target) != 0) {
        ++target;
      }
      if (target != pid) {
        std::cout << "note: " << path << ": pid " << pid << " is taken; it is " << target
                  << " in the merged trace\n";
      }
      renamed[pid] = target;
      used.insert(target);
    }
    for (Json& event : trace["traceEvents"]) {
      if (event.contains("pid") && event["pid"].is_number_integer()) {
        event["pid"] = renamed.at(event["pid"].get<int64_t>());
      }
      merged["traceEvents"].push_back(std::move(event));
    }
  }
  std::ofstream out(out_path);
  HOSTIR_CHECK(out.is_open(), "hostir trace merge: cannot write '", out_path, "'");
  out << merged.dump() << "\n";
  std::cout << "merged " << inputs.size() << " trace(s), " << merged["traceEvents"].size()
            << " events, into " << out_path << " (open it in ui.perfetto.dev)\n";
  return 0;
}

}  // namespace

int runTraceCommand(const std::vector<std::string>& args) {
  CLI::App app{"merge per-rank Chrome traces into one file (Perfetto, chrome://tracing)",
               "hostir trace merge"};
  std::string out_path;
  std::vector<std::string> inputs;
  app.add_option("OUT", out_path, "the merged trace to write")->required();
  app.add_option("INPUTS", inputs, "the traces to merge, e.g. trace.rank*.json")
      ->required()
      ->check(CLI::ExistingFile);
  HOSTIR_CHECK(!args.empty() && (args[0] == "merge" || args[0] == "--help" || args[0] == "-h"),
               "hostir trace: unknown action", args.empty() ? std::string() : " '" + args[0] + "'",
               "; the action is merge: hostir trace merge OUT.json IN.json...");
  std::vector<std::string> rest(args.begin() + (args[0] == "merge" ? 1 : 0), args.end());
  if (!parseArguments(app, rest, "hostir trace merge")) {
    return 0;
  }
  return mergeTraces(out_path, inputs);
}

}  // namespace hostir::tools
