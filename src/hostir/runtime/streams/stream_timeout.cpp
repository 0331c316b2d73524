#include "hostir/runtime/streams/stream_timeout.h"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {

constexpr WaitTimeout kBuiltInDefault = std::chrono::seconds(60);

WaitTimeout timeoutFromEnvironment() {
  const char* text = std::getenv("HOSTIR_STREAM_TIMEOUT_S");
  if (text == nullptr || *text == '\0') {  // unset or empty: the default
    return kBuiltInDefault;
  }
  return parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", text);
}

std::atomic<WaitTimeout::rep>& currentDefault() {
  static std::atomic<WaitTimeout::rep> value{timeoutFromEnvironment().count()};
  return value;
}

}  // namespace

WaitTimeout parseTimeoutSeconds(const std::string& variable, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double seconds = text.empty() ? 0.0 : std::strtod(begin, &end);
  // strtod also reads "inf", "nan" and hexadecimal; only a plain finite
  // decimal number in range is a timeout.
  const bool plain = !text.empty() && end != begin && *end == '\0' && errno == 0 &&
                     text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  HOSTIR_CHECK(plain && std::isfinite(seconds) && seconds >= kMinTimeoutSeconds &&
                   seconds <= kMaxTimeoutSeconds,
               variable, "='", text, "' is not a valid timeout: give a number of seconds from ",
               kMinTimeoutSeconds, " to ", kMaxTimeoutSeconds, " (one week), e.g. 60 or 0.5");
  return WaitTimeout(static_cast<WaitTimeout::rep>(std::llround(seconds * 1000.0)));
}

WaitTimeout defaultWaitTimeout() {
  return WaitTimeout(currentDefault().load(std::memory_order_relaxed));
}

void setDefaultWaitTimeout(WaitTimeout timeout) {
  HOSTIR_CHECK(timeout.count() > 0 &&
                   timeout.count() <= static_cast<WaitTimeout::rep>(kMaxTimeoutSeconds * 1000),
               "the stream wait timeout must be from 1 ms to one week, got ", timeout.count(),
               " ms");
  currentDefault().store(timeout.count(), std::memory_order_relaxed);
}

std::string describeTimeout(WaitTimeout timeout) {
  if (timeout.count() % 1000 == 0) {
    return std::to_string(timeout.count() / 1000) + " s";
  }
  return std::to_string(timeout.count()) + " ms";
}

}  // namespace hostir::runtime
