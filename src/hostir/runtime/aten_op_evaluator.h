#pragma once

#include <vector>

#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class Expr;
class ExpressionEvaluator;

// Computes a fusion op (set, unary, binary, reduction, broadcast, matmul,
// linear, select, slice, permute, reshape, full, where, iota, pad, cat, gathers, random) with ATen,
// reading its inputs from `ee`. View ops (broadcast, select, slice, permute and a reshape that can
// view) return views of their input, as ATen does.
std::vector<at::Tensor> evaluateFusionOp(const Expr* expr, ExpressionEvaluator& ee);

// Same, writing the op's output into `out` (ATen out= variants or copy_),
// e.g. a preallocated output or a slice of a larger buffer. `out` must have
// the output's shape and dtype.
void evaluateFusionOpInto(const Expr* expr, ExpressionEvaluator& ee, const at::Tensor& out);

// Whether `expr` is an op evaluateFusionOp knows.
bool isAtenEvaluable(const Expr* expr);

}  // namespace hostir
