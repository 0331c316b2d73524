#include "hostir/runtime/reduced_precision_gemm.h"

#include <atomic>

#include "hostir/runtime/target_detection.h"

namespace hostir {

namespace {

std::atomic<int64_t> gemms_run_in_float{0};

bool runsInFloat(const at::Tensor& out, std::initializer_list<const at::Tensor*> operands) {
  const at::ScalarType dtype = out.scalar_type();
  if (!reducedPrecisionGemmRunsInFloat(dtype, localTarget())) {
    return false;
  }
  for (const at::Tensor* operand : operands) {
    if (operand->scalar_type() != dtype) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool reducedPrecisionGemmRunsInFloat(at::ScalarType dtype, const Target& target) {
  return dtype == at::kHalf || (dtype == at::kBFloat16 && target.isa != Isa::Avx512);
}

bool linearInFloatOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                      const c10::optional<at::Tensor>& bias) {
  if (!runsInFloat(out, {&in, &weight}) ||
      (bias.has_value() && bias->scalar_type() != out.scalar_type())) {
    return false;
  }
  c10::optional<at::Tensor> bias_in_float;
  if (bias.has_value()) {
    bias_in_float = bias->to(at::kFloat);
  }
  out.copy_(at::linear(in.to(at::kFloat), weight.to(at::kFloat), bias_in_float));
  ++gemms_run_in_float;
  return true;
}

bool matmulInFloatOut(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  if (!runsInFloat(out, {&a, &b})) {
    return false;
  }
  out.copy_(at::matmul(a.to(at::kFloat), b.to(at::kFloat)));
  ++gemms_run_in_float;
  return true;
}

int64_t reducedPrecisionGemmsRunInFloat() {
  return gemms_run_in_float.load();
}

}  // namespace hostir
