#include "hostir/runtime/stream_timeout.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {

constexpr WaitTimeout kBuiltInDefault = std::chrono::seconds(60);

WaitTimeout timeoutFromEnvironment() {
  const char* text = std::getenv("HOSTIR_STREAM_TIMEOUT_S");
  if (text == nullptr || *text == '\0') {
    return kBuiltInDefault;
  }
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  HOSTIR_CHECK(end != text && *end == '\0' && seconds > 0,
               "HOSTIR_STREAM_TIMEOUT_S must be a positive number of seconds, got '", text, "'");
  return WaitTimeout(static_cast<WaitTimeout::rep>(seconds * 1000.0 + 0.5));
}

std::atomic<WaitTimeout::rep>& currentDefault() {
  static std::atomic<WaitTimeout::rep> value{timeoutFromEnvironment().count()};
  return value;
}

}  // namespace

WaitTimeout defaultWaitTimeout() {
  return WaitTimeout(currentDefault().load(std::memory_order_relaxed));
}

void setDefaultWaitTimeout(WaitTimeout timeout) {
  HOSTIR_CHECK(timeout.count() > 0, "the stream wait timeout must be positive, got ",
               timeout.count(), " ms");
  currentDefault().store(timeout.count(), std::memory_order_relaxed);
}

std::string describeTimeout(WaitTimeout timeout) {
  if (timeout.count() % 1000 == 0) {
    return std::to_string(timeout.count() / 1000) + " s";
  }
  return std::to_string(timeout.count()) + " ms";
}

}  // namespace hostir::runtime
