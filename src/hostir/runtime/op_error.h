#pragma once

#include <exception>
#include <string>

namespace hostir {

// The cause of an error raised while evaluating an op: ATen's message
// without the C++ backtrace c10::Error appends, and without the
// "ATen failed to evaluate <expr>" preamble of evaluateFusionOp (the caller
// names the op after the cause).
std::string causeOf(const std::exception& error);

// Throws hostir::Error: the cause, then "(in <op>)".
[[noreturn]] void rethrowNamingTheOp(const std::exception& error, const std::string& op);

}  // namespace hostir
