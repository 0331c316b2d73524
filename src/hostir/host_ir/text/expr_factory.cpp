#include "hostir/host_ir/text/expr_factory.h"

namespace hostir::text {

Expr* makeExprNamed(const std::string& op_name, Fusion* container, std::vector<Val*> inputs,
                    std::vector<Val*> outputs, std::vector<Attribute> attributes,
                    std::vector<Val*> attribute_vals) {
  auto it = exprMakers().find(op_name);
  if (it == exprMakers().end()) {
    return nullptr;
  }
  return it->second(container, std::move(inputs), std::move(outputs), std::move(attributes),
                    std::move(attribute_vals));
}

std::string exprKindNames() {
  std::string names;
  for (const auto& [name, maker] : exprMakers()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return names;
}

}  // namespace hostir::text
