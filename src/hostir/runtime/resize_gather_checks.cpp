#include "hostir/runtime/resize_gather_checks.h"

#include <algorithm>
#include <sstream>

#include "hostir/ir/gather_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {

std::optional<std::string> emptyOperand(const Expr* expr, const TensorView* operand,
                                        const std::vector<int64_t>& sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) == sizes.end()) {
    return std::nullopt;
  }
  std::ostringstream why;
  why << expr->displayName() << " reads the empty " << operand->toInlineString() << " (sizes "
      << at::IntArrayRef(sizes) << ")";
  return why.str();
}

std::optional<std::string> padCall(const PadOp* op, ExpressionEvaluator& ee) {
  std::vector<int64_t> sizes = ee.evaluateShape(op->in());
  if (std::optional<std::string> why = emptyOperand(op, op->in(), sizes)) {
    return why;
  }
  for (int64_t axis = 0; axis < op->in()->rank(); ++axis) {
    const int64_t left = ee.evaluateInt(op->left(axis));
    const int64_t right = ee.evaluateInt(op->right(axis));
    if (sizes[axis] - std::max<int64_t>(0, -left) - std::max<int64_t>(0, -right) < 0) {
      std::ostringstream why;
      why << "pad's widths (" << left << ", " << right << ") crop more than the " << sizes[axis]
          << " elements of axis " << axis << " of " << op->in()->toInlineString();
      return why.str();
    }
  }
  return std::nullopt;
}

std::optional<std::string> catCall(const CatOp* op, ExpressionEvaluator& ee) {
  const auto* first = op->input(0)->as<TensorView>();
  std::vector<int64_t> first_sizes = ee.evaluateShape(first);
  for (const Val* input : op->inputs()) {
    const auto* tv = input->as<TensorView>();
    std::vector<int64_t> sizes = ee.evaluateShape(tv);
    if (std::optional<std::string> why = emptyOperand(op, tv, sizes)) {
      return why;
    }
    for (int64_t axis = 0; axis < tv->rank(); ++axis) {
      if (axis != op->dim() && sizes[axis] != first_sizes[axis]) {
        std::ostringstream why;
        why << "cat's operands " << first->toInlineString() << " and " << tv->toInlineString()
            << " differ on axis " << axis << " (" << first_sizes[axis] << " and " << sizes[axis]
            << ")";
        return why.str();
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> gatherCall(const GatherOp* op, ExpressionEvaluator& ee,
                                      const at::Tensor& index) {
  std::vector<int64_t> sizes = ee.evaluateShape(op->in());
  if (std::optional<std::string> why = emptyOperand(op, op->in(), sizes)) {
    return why;
  }
  std::ostringstream why;
  if (op->kind() == GatherKind::TakeAlongAxis) {
    for (int64_t axis = 0; axis < op->in()->rank(); ++axis) {
      if (axis != op->dim() && index.size(axis) > sizes[axis]) {
        why << op->displayName() << "'s index " << op->index()->toInlineString() << " has "
            << index.size(axis) << " elements on axis " << axis << ", more than the " << sizes[axis]
            << " of " << op->in()->toInlineString();
        return why.str();
      }
    }
  }
  if (index.numel() == 0) {
    return std::nullopt;
  }
  const int64_t n = sizes[op->dim()];
  const int64_t lowest = index.min().item<int64_t>();
  const int64_t highest = index.max().item<int64_t>();
  if (lowest >= 0 && highest < n) {
    return std::nullopt;
  }
  why << op->displayName() << "'s index " << op->index()->toInlineString() << " holds "
      << (lowest < 0 ? lowest : highest) << ", outside [0, " << n << ") of axis " << op->dim()
      << " of " << op->in()->toInlineString();
  return why.str();
}

}  // namespace

std::optional<std::string> whyResizeOrGatherNeedsAten(const Fusion& fusion, ExpressionEvaluator& ee,
                                                      const std::vector<PolymorphicValue>& inputs) {
  for (const Expr* expr : fusion.exprs()) {
    std::optional<std::string> why;
    if (const auto* pad = dynamic_cast<const PadOp*>(expr)) {
      why = padCall(pad, ee);
    } else if (const auto* cat = dynamic_cast<const CatOp*>(expr)) {
      why = catCall(cat, ee);
    } else if (const auto* gather = dynamic_cast<const GatherOp*>(expr)) {
      auto position = std::find(fusion.inputs().begin(), fusion.inputs().end(), gather->index());
      HOSTIR_ASSERT(position != fusion.inputs().end(), "a compiled gather's index is an input");
      why = gatherCall(gather, ee,
                       std::get<at::Tensor>(inputs.at(position - fusion.inputs().begin())));
    }
    if (why.has_value()) {
      return why;
    }
  }
  return std::nullopt;
}

}  // namespace hostir
