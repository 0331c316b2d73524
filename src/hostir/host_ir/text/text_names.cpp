#include "hostir/host_ir/text/text_names.h"

namespace hostir::text {

namespace {

const char* letterOf(ValType kind) {
  switch (kind) {
    case ValType::TensorView: return "T";
    case ValType::TensorDomain: return "D";
    case ValType::IterDomain: return "I";
    case ValType::Scalar: return "s";
    case ValType::Stream: return "S";
  }
  HOSTIR_ASSERT(false, "a Val kind without a letter in the host IR text");
}

}  // namespace

// Built by appending: GCC 12 -O3 warns falsely (-Wrestrict) on
// `"#" + std::to_string(...)`.
std::string valId(const Val* val) {
  std::string id = "%";
  id += letterOf(val->vtype());
  id += std::to_string(val->name());
  return id;
}

std::string exprId(const Expr* expr) {
  std::string id = "#";
  id += std::to_string(expr->name());
  return id;
}

bool valKindOfId(const std::string& id, ValType& kind) {
  if (id.size() < 2) {
    return false;
  }
  for (ValType candidate : {ValType::TensorView, ValType::TensorDomain, ValType::IterDomain,
                            ValType::Scalar, ValType::Stream}) {
    if (id[1] == letterOf(candidate)[0]) {
      kind = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace hostir::text
