#pragma once

#include <string>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir::text {

// Makes the expr kind named `op_name` (its opName(): "BinaryOp",
// "Communication", ...) in `container` from its operands, as a node's
// generic constructor does (which checks them). nullptr when no kind has the
// name (ir/statement.h registers every kind). HostUnit, PostOnStream and
// Wait, which hold more than operands, are
// made by the parser with their own constructors.
Expr* makeExprNamed(const std::string& op_name, Fusion* container, std::vector<Val*> inputs,
                    std::vector<Val*> outputs, std::vector<Attribute> attributes,
                    std::vector<Val*> attribute_vals);

// "BinaryOp, UnaryOp, ...": every kind makeExprNamed knows, for an error.
std::string exprKindNames();

}  // namespace hostir::text
