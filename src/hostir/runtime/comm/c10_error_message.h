#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace hostir {

// The message of an exception thrown by c10d/Gloo, without the C++ stack
// trace c10::Error appends (it would drown the cause in a hostir::Error).
inline std::string c10ErrorMessage(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    return c10_error->what_without_backtrace();
  }
  return error.what();
}

}  // namespace hostir
