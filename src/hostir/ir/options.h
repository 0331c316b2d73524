#pragma once

#include <string>

namespace hostir {

// HOSTIR_DUMP is a comma-separated list (fusion, segments, host_ir, passes);
// read on every call so tests can set it with setenv.
bool isDumpEnabled(const std::string& what);

// HOSTIR_DISABLE_PASS is a comma-separated list of host IR pass names.
bool isPassDisabled(const std::string& pass_name);

// Whether a comma-separated environment variable lists `item`.
bool envListContains(const char* variable, const std::string& item);

}  // namespace hostir
