#pragma once

// The integer ops of nvFuser's frontend (issue 41) the differential fuzzer
// draws (fuzz_generator.h's integerStep): each as a hostir builder and as
// its ATen reference on Int64 tensors. A shift's count is in [0, 64).

#include <ATen/ATen.h>

#include <array>

#include "hostir/ir/arith.h"

namespace hostir::fuzz {

struct IntegerOp {
  const char* name;
  bool is_shift;
  TensorView* (*build)(TensorView*, TensorView*);
  at::Tensor (*reference)(const at::Tensor&, const at::Tensor&);
};

// nvFuser's logical right shift: the arithmetic one with the sign's copies
// masked off (x itself for a count of 0).
inline at::Tensor logicalRightShiftReference(const at::Tensor& x, const at::Tensor& count) {
  const at::Tensor s = count.clamp_min(1);
  const at::Tensor low_bits = at::bitwise_not(at::bitwise_left_shift(at::full_like(s, -1), 64 - s));
  return at::where(count == 0, x, at::bitwise_and(at::bitwise_right_shift(x, s), low_bits));
}

// x's eight bytes xored into one, in [0, 256): every bit of x counts, and
// the float it is cast to is exact and small (a large one's rounding would
// carry into the values built on it and loosen their bounds).
inline TensorView* foldToByte(TensorView* x) {
  TensorView* halves = bitwiseXor(x, bitwiseRightShift(x, 32));
  TensorView* quarters = bitwiseXor(halves, bitwiseRightShift(halves, 16));
  return bitwiseAnd(bitwiseXor(quarters, bitwiseRightShift(quarters, 8)), 0xFF);
}
inline at::Tensor foldToByteReference(const at::Tensor& x) {
  const at::Tensor halves = at::bitwise_xor(x, at::bitwise_right_shift(x, 32));
  const at::Tensor quarters = at::bitwise_xor(halves, at::bitwise_right_shift(halves, 16));
  return at::bitwise_and(at::bitwise_xor(quarters, at::bitwise_right_shift(quarters, 8)), 0xFF);
}

inline const std::array<IntegerOp, 7>& integerOps() {
  using T = TensorView*;
  using A = const at::Tensor&;
  static const std::array<IntegerOp, 7> ops = {{
      {"gcd", false, [](T a, T b) { return gcd(a, b); }, [](A x, A y) { return at::gcd(x, y); }},
      {"bitwise_and", false, [](T a, T b) { return bitwiseAnd(a, b); },
       [](A x, A y) { return at::bitwise_and(x, y); }},
      {"bitwise_or", false, [](T a, T b) { return bitwiseOr(a, b); },
       [](A x, A y) { return at::bitwise_or(x, y); }},
      {"bitwise_xor", false, [](T a, T b) { return bitwiseXor(a, b); },
       [](A x, A y) { return at::bitwise_xor(x, y); }},
      {"bitwise_left_shift", true, [](T a, T b) { return bitwiseLeftShift(a, b); },
       [](A x, A y) { return at::bitwise_left_shift(x, y); }},
      {"bitwise_right_shift", true, [](T a, T b) { return bitwiseRightShift(a, b); },
       [](A x, A y) { return at::bitwise_right_shift(x, y); }},
      {"logical_right_shift", true, [](T a, T b) { return logicalRightShift(a, b); },
       logicalRightShiftReference},
  }};
  return ops;
}

}  // namespace hostir::fuzz
