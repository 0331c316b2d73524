#pragma once

#include <chrono>
#include <string>

namespace hostir::runtime {

using WaitTimeout = std::chrono::milliseconds;

// Every wait of the stream runtime (a stream waiting for an event, the host
// waiting for a stream to drain) ends after this long in a hostir::Error, so a
// lost signal or a deadlock shows up as an error naming what was awaited,
// never as a hang. Starts at HOSTIR_STREAM_TIMEOUT_S seconds (default 60).
WaitTimeout defaultWaitTimeout();

// The one rule for timeouts read from the environment
// (HOSTIR_STREAM_TIMEOUT_S, HOSTIR_COMM_TIMEOUT_S): a decimal number of
// seconds from kMinTimeoutSeconds (1 ms, the resolution of every wait) to
// kMaxTimeoutSeconds (one week). Anything else (empty, "inf", "nan", "1e16",
// "1e-9", "60s", "soon") is a hostir::Error naming `variable`, quoting the
// text and saying what is valid. Never rounds a value to 0 or overflows.
inline constexpr double kMinTimeoutSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;
WaitTimeout parseTimeoutSeconds(const std::string& variable, const std::string& text);

// Changes the default for waits created from now on; must be positive.
void setDefaultWaitTimeout(WaitTimeout timeout);

// "60 s", "250 ms": how a timeout reads in an error message.
std::string describeTimeout(WaitTimeout timeout);

}  // namespace hostir::runtime
