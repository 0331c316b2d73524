#pragma once

#include <cstdint>

#include <ATen/ATen.h>

#include "hostir/multidevice/target.h"

namespace hostir {

// bfloat16 and half GEMMs where ATen has no fast kernel for them
// (docs/kernels.md, "bfloat16 and half GEMMs"). ATen 1.13 runs a bfloat16
// matmul through oneDNN only on AVX-512 cores; elsewhere it runs a scalar
// reference loop (~1.5 GFLOP/s on an AVX2 EPYC, 45x slower than float32
// through OpenBLAS), and it has no half matmul on CPUs at all ("addmm_impl_cpu_
// not implemented for 'Half'"). There hostir computes the product in float32
// through BLAS and rounds it once into the output, which is what oneDNN's
// bfloat16 matmul does (float32 accumulation, one rounding).

// Whether a GEMM of `dtype` operands runs in float32 on `target`: half on
// every target, bfloat16 below avx512, nothing else.
bool reducedPrecisionGemmRunsInFloat(at::ScalarType dtype, const Target& target);

// out = in @ weight^T (+ bias), in float32, rounded once into `out`, when
// reducedPrecisionGemmRunsInFloat(out's dtype, localTarget()) and every
// operand has out's dtype; false, computing nothing, otherwise.
bool linearInFloatOut(const at::Tensor& out, const at::Tensor& in, const at::Tensor& weight,
                      const c10::optional<at::Tensor>& bias);
// The same for out = matmul(a, b) (any ranks at::matmul takes).
bool matmulInFloatOut(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b);

// GEMMs this process has run in float32 for a reduced-precision dtype (tests
// check the path ran).
int64_t reducedPrecisionGemmsRunInFloat();

}  // namespace hostir
