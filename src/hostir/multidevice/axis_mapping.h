#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class TensorView;

// Pairs (producer logical position, consumer logical position) of axes that
// an expr carries from one of its tensor inputs to its tensor output.
// Positions index the full logical domains (reduction axes included), so a
// reduction's reduced axis maps onto the output's reduction axis. Axes the
// op consumes without an output counterpart (matmul/linear's K, a selected
// or sliced axis) and broadcast axes (nothing to shard) are absent.
using AxisMap = std::vector<std::pair<int64_t, int64_t>>;

// The map between `producer` (a tensor input of `expr`) and the expr's
// tensor output.
AxisMap mapProducerToConsumer(const Expr* expr, const TensorView* producer);

// The consumer position `producer_pos` maps to, or -1.
int64_t mappedConsumerAxis(const AxisMap& map, int64_t producer_pos);
// The producer position mapping to `consumer_pos`, or -1.
int64_t mappedProducerAxis(const AxisMap& map, int64_t consumer_pos);

// For matmul/linear: the logical position of the contracted (K) axis of a
// tensor input; -1 for other inputs (a bias) or other exprs.
int64_t contractedAxis(const Expr* expr, const TensorView* operand);

// For matmul/linear: the logical position of the row (M) axis of the first
// operand (the axis just before K), or -1 when it has none (1-D).
int64_t rowAxisOfFirstOperand(const Expr* expr);

// Tensor inputs of `expr`, in operand order.
std::vector<TensorView*> tensorInputs(const Expr* expr);
// The single tensor output of `expr`, or nullptr.
TensorView* tensorOutput(const Expr* expr);

// Logical positions of the axes that are not reductions, in order (the
// tensor's shape dims): shapeToLogical(tv)[dim] = logical position.
std::vector<int64_t> shapeToLogical(const TensorView* tv);
// The shape dim of a logical position, or -1 for a reduction axis.
int64_t logicalToShape(const TensorView* tv, int64_t logical_pos);

}  // namespace hostir
