#include "hostir/ir/pass_pipeline.h"

#include <cstdlib>
#include <sstream>

namespace hostir {

namespace {

std::vector<std::string> envList(const char* variable) {
  std::vector<std::string> items;
  const char* value = std::getenv(variable);
  if (value == nullptr) {
    return items;
  }
  std::stringstream ss(value);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) {
      items.push_back(item);
    }
  }
  return items;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

}  // namespace

void validatePassOptions(const std::vector<std::string>& passes) {
  for (const std::string& name : envList("HOSTIR_DISABLE_PASS")) {
    bool known = name == "all";
    for (const std::string& pass : passes) {
      known = known || pass == name;
    }
    HOSTIR_CHECK(known, "HOSTIR_DISABLE_PASS names '", name,
                 "', which is not a pass; valid: ", joined(passes));
  }
  const std::vector<std::string> stages{"fusion",  "segments", "host_ir", "passes",
                                        "kernels", "overlap",  "buffers", "all"};
  for (const std::string& stage : envList("HOSTIR_DUMP")) {
    bool known = false;
    for (const std::string& valid : stages) {
      known = known || valid == stage;
    }
    HOSTIR_CHECK(known, "HOSTIR_DUMP names '", stage,
                 "', which is not a stage; valid: ", joined(stages));
  }
}

bool isVerifierEnabled() {
#ifndef NDEBUG
  return true;
#else
  const char* value = std::getenv("HOSTIR_VERIFY");
  return value != nullptr && std::string(value) == "1";
#endif
}

}  // namespace hostir
