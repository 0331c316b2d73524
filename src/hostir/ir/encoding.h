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

// A concrete layout. Identity: the tensor's own row-major layout. DnnlBlocked
// (only for a 2-D float GEMM right operand B[K, N]): the layout oneDNN 2.6's
// matmul reads its weights in, named as oneDNN names it, BA16a<n_block>b
// (dims a = K, b = N): column panels of `n_block` columns, K rounded up to
// 16, stored [ceilDiv(N, n_block), roundUp(K, 16), n_block] with zero
// padding. The runtime packs it with a oneDNN reorder and its GEMMs run
// oneDNN's matmul on it. `n_axis` says which axis of the tensor is N: 1 for
// a matmul's B[K, N], 0 for a linear's weight W[N, K] (B = W^T).
struct Layout {
  enum class Kind { Identity, DnnlBlocked };
  static constexpr int64_t kDnnlKBlock = 16;
  Kind kind = Kind::Identity;
  int64_t n_block = 0;
  int64_t n_axis = 1;

  static Layout identity() {
    return {};
  }
  static Layout dnnlBlocked(int64_t n_block, int64_t n_axis) {
    return {Kind::DnnlBlocked, n_block, n_axis};
  }
  bool isIdentity() const {
    return kind == Kind::Identity;
  }
  bool operator==(const Layout& other) const = default;
  // oneDNN's name of a blocked layout: "BA16a64b".
  std::string blockName() const;
  // "identity", "BA16a64b(n=0)".
  std::string toString() const;
  // The shape a tensor of logical sizes [n, k] (N, K) is stored in.
  std::vector<int64_t> blockedShape(int64_t n, int64_t k) const;
};

// An encoding: the request, and the layout once a target resolved it.
struct Encoding {
  EncodingKind kind = EncodingKind::MatmulRhs;
  std::optional<Layout> resolved;

  bool isResolved() const {
    return resolved.has_value();
  }
  bool operator==(const Encoding& other) const = default;
  // "matmul_rhs" or, resolved, "matmul_rhs:BA16a64b(n=0)".
  std::string toString() const;
};

}  // namespace hostir
