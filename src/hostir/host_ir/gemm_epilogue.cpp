#include "hostir/host_ir/gemm_epilogue.h"

#include <vector>

#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

bool isFloatTensor(const Val* val) {
  return val->isA<TensorView>() && val->dtype() == DataType::Float;
}

// The one expr of `exprs` that reads `val`, or null when none or several do.
const Expr* soleReader(const std::vector<Expr*>& exprs, const Val* val) {
  const Expr* reader = nullptr;
  for (const Expr* expr : exprs) {
    for (const Val* in : expr->inputs()) {
      if (in == val) {
        if (reader != nullptr && reader != expr) {
          return nullptr;
        }
        reader = expr;
      }
    }
  }
  return reader;
}

std::optional<GemmEpilogue> fail(std::string* why_not, std::string why) {
  if (why_not != nullptr) {
    *why_not = std::move(why);
  }
  return std::nullopt;
}

}  // namespace

std::optional<GemmEpilogue> matchGemmEpilogue(const Fusion& segment, std::string* why_not) {
  const std::vector<Expr*> exprs = segment.exprs();
  if (exprs.empty() || !exprs.front()->isA<LinearOp>()) {
    return fail(why_not, "the segment does not start with a linear");
  }
  if (segment.outputs().size() != 1) {
    return fail(why_not, "a GEMM with post-ops has one result");
  }
  GemmEpilogue match;
  match.linear = exprs.front()->as<LinearOp>();
  for (const Val* in : match.linear->inputs()) {
    if (!segment.isInput(in) || !isFloatTensor(in)) {
      return fail(why_not, "the linear's operands are not float inputs of the segment");
    }
  }
  const Val* current = match.linear->out();
  // Post-ops in the order the engine applies them: a bias, the activation,
  // then an add.
  for (size_t i = 1; i < exprs.size(); ++i) {
    const Expr* expr = exprs[i];
    if (segment.isOutput(current) || soleReader(exprs, current) != expr) {
      return fail(why_not, current->toInlineString() + " is read outside the GEMM's epilogue");
    }
    const auto* unary = dynamic_cast<const UnaryOp*>(expr);
    const auto* binary = dynamic_cast<const BinaryOp*>(expr);
    const bool activation = unary != nullptr && (unary->type() == UnaryOpType::Gelu ||
                                                 unary->type() == UnaryOpType::Relu);
    if (activation && !match.activation.has_value() && match.residual == nullptr) {
      match.activation = unary->type();
    } else if (binary != nullptr && binary->type() == BinaryOpType::Add &&
               match.residual == nullptr) {
      const Val* other = binary->lhs() == current ? binary->rhs() : binary->lhs();
      if (!segment.isInput(other) || !isFloatTensor(other) || other == current) {
        return fail(why_not, expr->toInlineString() + " adds no float input of the segment");
      }
      const auto* added = other->as<TensorView>();
      const int64_t rank = match.linear->out()->rank();
      if (added->rank() != rank && added->rank() != 1) {
        return fail(why_not, expr->toInlineString() +
                                 " adds a tensor of neither the result's rank nor one axis");
      }
      const bool activation_follows = i + 1 < exprs.size() && exprs[i + 1]->isA<UnaryOp>();
      if (activation_follows && !match.activation.has_value() && added->rank() == 1 &&
          !match.linear->hasBias() && match.bias == nullptr) {
        match.bias = added;  // checked below: the activation must be a post-op
      } else {
        match.residual = added;
      }
    } else {
      return fail(why_not,
                  expr->toInlineString() + " is not a GEMM post-op (gelu or relu, then add)");
    }
    current = expr->output(0);
  }
  if (!segment.isOutput(current) || !isFloatTensor(current)) {
    return fail(why_not, "the segment's result is not the epilogue's float result");
  }
  if (exprs.size() == 1) {
    return fail(why_not, "a linear alone has no epilogue");
  }
  match.out = current->as<TensorView>();
  return match;
}

std::string describe(const GemmEpilogue& epilogue) {
  std::string text = "linear";
  if (epilogue.linear->hasBias()) {
    text += " + bias";
  }
  if (epilogue.bias != nullptr) {
    text += " + bias " + epilogue.bias->toInlineString();
  }
  if (epilogue.activation.has_value()) {
    text += " + " + toString(*epilogue.activation);
  }
  if (epilogue.residual != nullptr) {
    text += " + add " + epilogue.residual->toInlineString();
  }
  return text;
}

}  // namespace hostir
