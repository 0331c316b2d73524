#include "hostir/runtime/comm/collectives.h"

// Waiting for a posted collective: the communication timeout, and what a
// failed or timed-out wait tells the user.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <string>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/c10_error_message.h"

namespace hostir {

namespace {

using Clock = std::chrono::steady_clock;

bool containsIgnoringCase(std::string text, std::string pattern) {
  auto lower = [](std::string& s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  };
  lower(text);
  lower(pattern);
  return text.find(pattern) != std::string::npos;
}

std::atomic<bool>& collectiveFailedFlag() {
  static std::atomic<bool> failed{false};
  return failed;
}
}  // namespace

bool collectiveFailed() {
  return collectiveFailedFlag().load();
}

void waitWork(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
              const std::string& what) {
  if (!work) {
    return;
  }
  const auto start = Clock::now();
  try {
    work->wait(timeout);
  } catch (const std::exception& error) {
    collectiveFailedFlag() = true;
    const auto waited = std::chrono::duration<double>(Clock::now() - start).count();
    const double limit = std::chrono::duration<double>(timeout).count();
    const std::string cause = c10ErrorMessage(error);
    if (waited >= 0.95 * limit || containsIgnoringCase(cause, "timed out") ||
        containsIgnoringCase(cause, "timeout")) {
      HOSTIR_THROW(what, " did not complete within the communication timeout of ", limit,
                   " s: a member of its team did not take part (it may have exited or be stuck "
                   "elsewhere); raise HOSTIR_COMM_TIMEOUT_S if it is only slow. Cause: ",
                   cause);
    }
    HOSTIR_THROW(what, " failed after ", waited,
                 " s (a member of its team may have exited): ", cause);
  }
}

}  // namespace hostir
