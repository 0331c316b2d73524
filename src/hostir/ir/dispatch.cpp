#include "hostir/ir/dispatch.h"

#include "hostir/ir/statement.h"

namespace hostir {

void OptInDispatch::dispatch(const Expr* expr) {
  expr->accept(*this);
}

void OptInDispatch::unhandled(const Expr* expr) {
  HOSTIR_THROW("unsupported op here: ", expr->opName(), " in\n", expr->toString());
}

// The default handle(const T*) of each kind is defined next to the kind
// (HOSTIR_DEFINE_EXPR), where T is a complete type.

}  // namespace hostir
