#pragma once

#include <functional>
#include <optional>
#include <string>

#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"

namespace hostir {

// The value of `lhs <type> rhs` on concrete scalars, shared by constant
// folding and the run-time evaluator. Integers (and bools) stay integers:
// Div is integer division, CeilDiv and Mod are defined. With a double
// operand the result is a double, and CeilDiv / Mod give std::nullopt.
// A comparison gives a bool.
// Division by zero throws hostir::Error mentioning `what()`, which is
// called only then (the run-time evaluator computes loop-dependent
// extents many times per run; printing the op each time cost more than
// the arithmetic).
std::optional<ScalarValue> applyScalarBinaryOp(BinaryOpType type, const ScalarValue& lhs,
                                               const ScalarValue& rhs,
                                               const std::function<std::string()>& what);

// The value of a unary op on a concrete scalar, shared by constant folding
// and the run-time evaluator. `out_dtype` is the result's dtype (a Cast's
// target): Bool gives a bool, an integer dtype an int64_t (a double
// truncated towards zero, as a C++ / torch cast), a floating one a double.
// neg, abs and relu keep an integer an integer; the others compute in double.
ScalarValue applyScalarUnaryOp(UnaryOpType type, const ScalarValue& in, DataType out_dtype);

}  // namespace hostir
