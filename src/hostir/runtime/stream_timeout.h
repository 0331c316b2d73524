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

// Changes the default for waits created from now on; must be positive.
void setDefaultWaitTimeout(WaitTimeout timeout);

// "60 s", "250 ms": how a timeout reads in an error message.
std::string describeTimeout(WaitTimeout timeout);

}  // namespace hostir::runtime
