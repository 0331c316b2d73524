#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace hostir {

// The one exception type users see. User mistakes carry a message naming the
// offending tensor or op in IR notation; failed internal invariants are
// prefixed so a reader knows it is a hostir bug, not their input.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}
}  // namespace detail

}  // namespace hostir

// User-facing check: `HOSTIR_CHECK(cond, "T0 ... must be ...", extra...)`.
#define HOSTIR_CHECK(cond, ...)                                     \
  do {                                                              \
    if (!(cond)) {                                                  \
      throw ::hostir::Error(::hostir::detail::concat(__VA_ARGS__)); \
    }                                                               \
  } while (false)

#define HOSTIR_THROW(...) throw ::hostir::Error(::hostir::detail::concat(__VA_ARGS__))

// Internal invariant: a failure is a bug in hostir.
#define HOSTIR_ASSERT(cond, ...)                                                          \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      throw ::hostir::Error(::hostir::detail::concat(                                     \
          "hostir internal error (a bug, please report): ", #cond, " at ", __FILE__, ":", \
          __LINE__, ": " __VA_OPT__(, ) __VA_ARGS__));                                    \
    }                                                                                     \
  } while (false)
