#include "hostir/ir/mutation.h"

#include <algorithm>

namespace hostir {

namespace {

std::vector<Val*> replaced(std::vector<Val*> vals, Val* old_val, Val* new_val) {
  std::replace(vals.begin(), vals.end(), old_val, new_val);
  return vals;
}

Expr* rebuild(Expr* expr, std::vector<Val*> inputs, std::vector<Val*> outputs) {
  std::vector<Attribute> attributes = expr->attributes();
  std::vector<Val*> attribute_vals = expr->attributeVals();
  Fusion* container = expr->container();
  detachExpr(expr);
  return expr->newObject(container, std::move(inputs), std::move(outputs), std::move(attributes),
                         std::move(attribute_vals));
}

}  // namespace

void detachExpr(Expr* expr) {
  for (Val* input : expr->inputs()) {
    input->removeUse(expr);
  }
  for (Val* output : expr->outputs()) {
    if (output->definition() == expr) {
      output->setDefinition(nullptr);
    }
  }
}

Expr* replaceValInExprInputs(Expr* expr, Val* old_input, Val* new_input) {
  HOSTIR_ASSERT(
      std::find(expr->inputs().begin(), expr->inputs().end(), old_input) != expr->inputs().end(),
      old_input->toInlineString(), " is not an input of ", expr->toInlineString());
  return rebuild(expr, replaced(expr->inputs(), old_input, new_input), expr->outputs());
}

Expr* replaceValInExprOutputs(Expr* expr, Val* old_output, Val* new_output) {
  HOSTIR_ASSERT(std::find(expr->outputs().begin(), expr->outputs().end(), old_output) !=
                    expr->outputs().end(),
                old_output->toInlineString(), " is not an output of ", expr->toInlineString());
  return rebuild(expr, expr->inputs(), replaced(expr->outputs(), old_output, new_output));
}

}  // namespace hostir
