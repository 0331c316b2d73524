#include "hostir/runtime/finite_check.h"

#include <atomic>
#include <cstdlib>
#include <sstream>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {

bool enabledByEnvironment() {
  const char* text = std::getenv("HOSTIR_CHECK_FINITE");
  if (text == nullptr || std::string(text).empty() || std::string(text) == "0") {
    return false;
  }
  HOSTIR_CHECK(std::string(text) == "1", "HOSTIR_CHECK_FINITE='", text,
               "' is not valid: give 1 (check every op's outputs for NaN and Inf) or 0 (off)");
  return true;
}

std::atomic<bool>& flag() {
  static std::atomic<bool> enabled{enabledByEnvironment()};
  return enabled;
}

// "3 NaN and 1 Inf of 64 elements", or "" when every element is finite.
std::string countNonFinite(const at::Tensor& tensor) {
  if (!tensor.defined() || !at::isFloatingType(tensor.scalar_type()) ||
      at::isfinite(tensor).all().item<bool>()) {
    return "";
  }
  const int64_t nans = at::isnan(tensor).sum().item<int64_t>();
  const int64_t infs = at::isinf(tensor).sum().item<int64_t>();
  std::ostringstream text;
  text << nans << " NaN and " << infs << " Inf of " << tensor.numel() << " elements";
  return text.str();
}

}  // namespace

bool checkFiniteEnabled() {
  return flag().load(std::memory_order_relaxed);
}

void setCheckFinite(bool enabled) {
  flag().store(enabled, std::memory_order_relaxed);
}

void checkOutputsFinite(const NamedTensors& outputs, const NamedTensors& inputs,
                        const std::function<std::string()>& what) {
  for (const auto& [name, tensor] : outputs) {
    const std::string counted = countNonFinite(tensor);
    if (counted.empty()) {
      continue;
    }
    std::string source = "its inputs are all finite: it produced them";
    for (const auto& [input, value] : inputs) {
      const std::string held = countNonFinite(value);
      if (!held.empty()) {
        source = "its input " + input + " already held " + held + ": they came from before it";
        break;
      }
    }
    HOSTIR_THROW("non-finite values (HOSTIR_CHECK_FINITE): ", name, " holds ", counted, " (",
                 source, "), computed by\n", what());
  }
}

}  // namespace hostir::runtime
