#include "hostir/runtime/target_detection.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/launch_environment.h"

namespace hostir {

std::string cpuFlags(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 1);
    }
  }
  return "";
}

Target chooseTarget(const std::string& env, int64_t rank, const std::string& cpuinfo) {
  if (env.empty()) {
    return targetFromCpuFlags(cpuFlags(cpuinfo));
  }
  std::vector<std::string> entries;
  std::stringstream list(env);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    entries.push_back(entry);
  }
  HOSTIR_CHECK(!entries.empty(), "HOSTIR_TARGET='", env, "' lists no target; valid targets are ",
               validTargetNames());
  const std::string& mine = entries[static_cast<size_t>(rank) % entries.size()];
  try {
    return parseTarget(mine);
  } catch (const Error& error) {
    HOSTIR_THROW("HOSTIR_TARGET='", env, "': ", error.what());
  }
}

const Target& localTarget() {
  static const Target target = [] {
    const char* env = std::getenv("HOSTIR_TARGET");
    std::ifstream file("/proc/cpuinfo");
    std::stringstream cpuinfo;
    cpuinfo << file.rdbuf();
    int64_t rank = 0;
    if (env != nullptr && std::string(env).find(',') != std::string::npos) {
      rank = LaunchEnvironment::fromEnvironment().rank;
    }
    return chooseTarget(env == nullptr ? "" : env, rank, cpuinfo.str());
  }();
  return target;
}

std::string describeLocalMachine() {
  std::ifstream file("/proc/cpuinfo");
  std::string line;
  std::string model;
  while (model.empty() && std::getline(file, line)) {
    // "model name : AMD EPYC 9R14" (x86); Arm has no model name line.
    if (line.rfind("model name", 0) == 0) {
      if (auto colon = line.find(':'); colon != std::string::npos) {
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        model = start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  const char* env = std::getenv("HOSTIR_TARGET");
  const bool emulated = env != nullptr && *env != '\0';
  std::string details = emulated ? "HOSTIR_TARGET" : "";
  if (!model.empty()) {
    details += (details.empty() ? "" : "; ") + model;
  }
  return localTarget().toString() + (details.empty() ? "" : " (" + details + ")");
}

}  // namespace hostir
