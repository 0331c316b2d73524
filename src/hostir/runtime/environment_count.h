#pragma once

#include <cstdint>

namespace hostir {

// The whole number in environment variable `name`, from `min` to `max`, or
// `fallback` when it is unset or empty; throws hostir::Error naming the
// variable, its text and the valid range of what it counts.
int64_t countFromEnvironment(const char* name, int64_t fallback, int64_t min, int64_t max,
                             const char* counted);

}  // namespace hostir
