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

std::string Layout::blockName() const {
  return "BA" + std::to_string(kDnnlKBlock) + "a" + std::to_string(n_block) + "b";
}

std::string Layout::toString() const {
  if (kind == Kind::Identity) {
    return "identity";
  }
  std::ostringstream ss;
  ss << blockName() << "(n=" << n_axis << ")";
  return ss.str();
}

std::vector<int64_t> Layout::blockedShape(int64_t n, int64_t k) const {
  HOSTIR_ASSERT(n_block > 0, "a blocked layout's column block must be positive, got ", n_block);
  return {(n + n_block - 1) / n_block, (k + kDnnlKBlock - 1) / kDnnlKBlock * kDnnlKBlock, n_block};
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
