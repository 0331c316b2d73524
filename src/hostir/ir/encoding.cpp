#include "hostir/ir/encoding.h"

#include <sstream>

#include "hostir/ir/error.h"

namespace hostir {

std::string toString(EncodingKind kind) {
  switch (kind) {
    case EncodingKind::MatmulLhs: return "matmul_lhs";
    case EncodingKind::MatmulRhs: return "matmul_rhs";
  }
  HOSTIR_ASSERT(false, "unknown EncodingKind");
  return "";
}

EncodingKind parseEncodingKind(const std::string& name) {
  for (EncodingKind kind : {EncodingKind::MatmulLhs, EncodingKind::MatmulRhs}) {
    if (toString(kind) == name) {
      return kind;
    }
  }
  HOSTIR_THROW("unknown encoding '", name, "'; valid encodings are matmul_lhs, matmul_rhs");
}

std::string Layout::toString() const {
  if (kind == Kind::Identity) {
    return "identity";
  }
  std::ostringstream ss;
  ss << "panels" << tile << "xK(n=" << n_axis << ")";
  return ss.str();
}

std::vector<int64_t> panelShape(int64_t n, int64_t k, int64_t tile) {
  HOSTIR_ASSERT(tile > 0, "panel tile must be positive, got ", tile);
  return {(n + tile - 1) / tile, k, tile};
}

std::string Encoding::toString() const {
  std::ostringstream ss;
  ss << hostir::toString(kind);
  if (resolved.has_value()) {
    ss << ":" << resolved->toString();
  }
  return ss.str();
}

}  // namespace hostir
