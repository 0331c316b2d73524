#pragma once

#include <optional>
#include <string>

#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"

namespace hostir {

class LinearOp;
class TensorView;

// A segment that is one `linear` and the ops after it that a GEMM engine
// runs on each output tile before storing it (oneDNN's post-ops,
// docs/kernels.md, "GEMMs"): an add of a row vector before an activation
// (a bias, when the linear has none), a GELU or a ReLU, then an add of a
// tensor of the result's shape (a residual) or of its last axis. Such a
// segment runs as one matmul with post-ops, so the epilogue costs no pass
// over memory of its own.
//
//   T2 = linear(T0, T1)        one oneDNN matmul on T1 packed, with
//   T3 = gelu(T2)        ->    post-ops (gelu, binary_add T4)
//   T5 = add(T3, T4)
struct GemmEpilogue {
  const LinearOp* linear = nullptr;
  // A segment input [N] added before the activation (the GEMM's bias), or
  // null (the linear's own bias, if any, is the GEMM's bias).
  const TensorView* bias = nullptr;
  // Gelu or Relu.
  std::optional<UnaryOpType> activation;
  // A segment input added last, or null.
  const TensorView* residual = nullptr;
  // The segment's one output.
  const TensorView* out = nullptr;
};

// The segment's GEMM and epilogue, or nullopt with the reason in `why_not`
// (when given): another op, an intermediate the segment also outputs, an
// order the post-ops cannot express, a dtype other than float.
std::optional<GemmEpilogue> matchGemmEpilogue(const Fusion& segment,
                                              std::string* why_not = nullptr);

// "linear + gelu + add T4_g_float[...]" for the host program printout.
std::string describe(const GemmEpilogue& epilogue);

}  // namespace hostir
