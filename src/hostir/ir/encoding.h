#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostir {

// A layout request a tensor may carry (docs/targets.md): which operand of a
// GEMM the tensor is, so that each target can choose the layout its GEMM
// reads fastest. Symbolic until a target resolves it.
enum class EncodingKind { MatmulLhs, MatmulRhs };

// "matmul_lhs", "matmul_rhs".
std::string toString(EncodingKind kind);
// The inverse of toString; an error listing the valid names otherwise.
EncodingKind parseEncodingKind(const std::string& name);

// A concrete layout. Identity: the tensor's own row-major layout. Panels
// (only for a 2-D GEMM right operand B[K, N]): B cut into column panels of
// `tile` columns, stored as [ceilDiv(N, tile), K, tile], the last panel padded
// with zeros. `n_axis` says which axis of the tensor is N: 1 for a matmul's
// B[K, N], 0 for a linear's weight W[N, K] (B = W^T).
struct Layout {
  enum class Kind { Identity, Panels };
  Kind kind = Kind::Identity;
  int64_t tile = 0;
  int64_t n_axis = 1;

  static Layout identity() {
    return {};
  }
  static Layout panels(int64_t tile, int64_t n_axis) {
    return {Kind::Panels, tile, n_axis};
  }
  bool isIdentity() const {
    return kind == Kind::Identity;
  }
  bool operator==(const Layout& other) const = default;
  // "identity", "panels16xK(n=0)".
  std::string toString() const;
};

// Shape of a tensor of logical sizes [n, k] (N, K) in the panel layout.
std::vector<int64_t> panelShape(int64_t n, int64_t k, int64_t tile);

// An encoding: the request, and the layout once a target resolved it.
struct Encoding {
  EncodingKind kind = EncodingKind::MatmulRhs;
  std::optional<Layout> resolved;

  bool isResolved() const {
    return resolved.has_value();
  }
  bool operator==(const Encoding& other) const = default;
  // "matmul_rhs" or, resolved, "matmul_rhs:panels16xK(n=0)".
  std::string toString() const;
};

}  // namespace hostir
