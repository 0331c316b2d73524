#include "hostir/ir/options.h"

#include <cstdlib>
#include <sstream>

namespace hostir {

bool envListContains(const char* variable, const std::string& item) {
  const char* value = std::getenv(variable);
  if (value == nullptr) {
    return false;
  }
  std::stringstream ss(value);
  std::string token;
  while (std::getline(ss, token, ',')) {
    if (token == item || token == "all") {
      return true;
    }
  }
  return false;
}

bool isDumpEnabled(const std::string& what) {
  return envListContains("HOSTIR_DUMP", what);
}

bool isPassDisabled(const std::string& pass_name) {
  return envListContains("HOSTIR_DISABLE_PASS", pass_name);
}

}  // namespace hostir
