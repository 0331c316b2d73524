#include "hostir/ir/node_checks.h"

#include <string>

#include "hostir/ir/error.h"
#include "hostir/ir/statement.h"

namespace hostir {

namespace {

std::string describe(const Val* val) {
  return val == nullptr ? std::string("null") : val->toInlineString();
}

}  // namespace

void checkNode(const Expr* expr, const std::function<void()>& check) {
  try {
    check();
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.rfind("hostir internal error", 0) == 0) {
      throw;
    }
    std::string outputs;
    for (const Val* output : expr->outputs()) {
      outputs += (outputs.empty() ? "" : ", ") + describe(output);
    }
    std::string operands;
    for (const Val* input : expr->inputs()) {
      operands += (operands.empty() ? "" : ", ") + describe(input);
    }
    HOSTIR_THROW(message, " (making ", outputs, " = ", expr->displayName(), "(", operands, "))");
  }
}

}  // namespace hostir
