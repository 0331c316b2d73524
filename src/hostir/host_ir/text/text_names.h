#pragma once

#include <string>

#include "hostir/ir/statement.h"

// How the textual host IR names statements: a Val by its kind and number
// (%T3 tensor, %D3 tensor domain, %I3 iter domain, %s3 scalar, %S3 stream;
// the numbers are the container's, so CHECK lines can name T3), an expr by
// its number (#12).
namespace hostir::text {

std::string valId(const Val* val);
std::string exprId(const Expr* expr);

// The kind a val id's letter names ("%T3" → TensorView); false for an id of
// no kind.
bool valKindOfId(const std::string& id, ValType& kind);

}  // namespace hostir::text
