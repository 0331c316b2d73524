#pragma once

#include <cstdint>
#include <string>

namespace hostir {

class Expr;

// What each op is, decided in one table (op_traits.cpp) that the segmenter's
// policy, the host IR passes and the runtime all consult. Adding an op means
// one entry there, plus its builder, its evaluator case and its tests.
enum class OpTrait : std::uint32_t {
  // Its output is a view of its input (select, slice, permute, reshape,
  // broadcast): no compute.
  View = 1u << 0,
  // Elementwise over aligned axes (set, unary, binary, where).
  Pointwise = 1u << 1,
  // Reduces axes (sum, max, min).
  Reduction = 1u << 2,
  // Contracts an axis (matmul, linear).
  Contraction = 1u << 3,
  // Creates a tensor from scalars (full, zeros, iota).
  Factory = 1u << 4,
  // Lowered as itself at the top level of a host program, never merged into
  // a segment: ops that are worth a host node of their own.
  HostLowerable = 1u << 5,
  // Stream parallelization can run it slice by slice in a stream loop.
  StreamParallelizable = 1u << 6,
  // The runtime evaluates it with ATen (a fusion op with a tensor output).
  AtenEvaluable = 1u << 7,
  // Cheap enough to recompute in every segment that reads it instead of
  // passing its output between segments.
  Forwardable = 1u << 8,
};

// Whether `expr` has `trait`. Exprs absent from the table (the nodes of the
// layers above, scalar arithmetic on scalars) have none.
bool hasTrait(const Expr* expr, OpTrait trait);

// "View|Pointwise|..." for messages and tests.
std::string traitsToString(const Expr* expr);

}  // namespace hostir
