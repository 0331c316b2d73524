#include "hostir/runtime/environment_count.h"

#include <cstdlib>

#include "hostir/ir/error.h"

namespace hostir {

int64_t countFromEnvironment(const char* name, int64_t fallback, int64_t min, int64_t max,
                             const char* counted) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  HOSTIR_CHECK(end != text && *end == '\0' && value >= min && value <= max, name, "='", text,
               "' is not a number of ", counted, " from ", min, " to ", max);
  return value;
}

}  // namespace hostir
