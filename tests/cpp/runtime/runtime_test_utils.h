#pragma once

// Shared helpers for the single-device runtime tests: a fixture that owns a
// fusion while it is being built and hands it to a FusionExecutor, and
// comparisons against plain ATen.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core_ir/test_utils.h"
#include "hostir/ir/cloner.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir::test {

// A tensor over existing extents (e.g. another tensor's symbolic sizes), so
// two inputs share one symbol. Not required to be contiguous.
inline TensorView* makeTensorOver(const std::vector<Val*>& extents,
                                  DataType dtype = DataType::Float) {
  std::vector<IterDomain*> ids;
  for (Val* extent : extents) {
    ids.push_back(IrBuilder::create<IterDomain>(extent));
  }
  auto* domain = IrBuilder::create<TensorDomain>(ids, std::vector<bool>(ids.size(), false));
  return IrBuilder::create<TensorView>(domain, dtype);
}

// The extents of a tensor's shape.
inline std::vector<Val*> extentsOf(const TensorView* tv) {
  std::vector<Val*> extents;
  for (IterDomain* id : tv->shapeDomain()) {
    extents.push_back(id->extent());
  }
  return extents;
}

// A free scalar of `dtype` in the current fusion (for scalar fusion inputs).
inline Scalar* scalarInput(DataType dtype) {
  auto* scalar = IrBuilder::create<Scalar>(dtype);
  FusionGuard::getCurFusion()->addInput(scalar);
  return scalar;
}

// exp(-(relu(x) + x)) whose intermediate is split into 2 Stream chunks: a
// pipelined program (the intermediate written chunk by chunk in a loop, then
// read whole) built into the current fusion; at::exp(-(at::relu(x) + x)) is
// its result.
inline void addStreamSplitIntermediateProgram() {
  TensorView* x = makeContigTensor(2);
  FusionGuard::getCurFusion()->addInput(x);
  TensorView* y = add(relu(x), x);
  y->split(0, 2, /*inner_split=*/false);
  y->axis(0)->parallelize(ParallelType::Stream);
  FusionGuard::getCurFusion()->addOutput(exp(neg(y)));
}

// Same dtype, same sizes and close values: within rtol of each value, plus
// atol and 32 ulps (of the dtype summed in: float32 for half and bfloat16)
// of the tensor's largest magnitude. That
// last term is the rounding of a GEMM or a long sum near 0, which scales
// with the terms summed, not with the (cancelled) result: a fixed atol 1e-6
// fails float32 GEMM outputs in the tens when another machine sums in
// another order; a wrong chunk or a stale buffer is off by the values' own
// size, far above it.
inline ::testing::AssertionResult allClose(const at::Tensor& actual, const at::Tensor& expected,
                                           double rtol = 1e-5, double atol = 1e-6) {
  if (actual.scalar_type() != expected.scalar_type()) {
    return ::testing::AssertionFailure()
           << "dtype " << actual.scalar_type() << " vs expected " << expected.scalar_type();
  }
  if (actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure()
           << "sizes " << actual.sizes() << " vs expected " << expected.sizes();
  }
  bool close = at::equal(actual, expected);
  if (!close && at::isFloatingType(actual.scalar_type())) {
    const at::Tensor values = expected.to(at::kDouble);
    const at::Tensor finite = values.isfinite();
    const double largest =
        finite.any().item<bool>() ? values.masked_select(finite).abs().max().item<double>() : 0;
    // Half and bfloat16 sum in float32; their own rounding is rtol's.
    const double ulp = actual.scalar_type() == at::kDouble ? 0x1p-52 : 0x1p-23;
    close = at::allclose(actual, expected, rtol, atol + 32 * ulp * largest, /*equal_nan=*/true);
  }
  if (!close) {
    return ::testing::AssertionFailure()
           << "values differ; max abs diff "
           << (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
  }
  return ::testing::AssertionSuccess();
}

// Tolerances that suit a dtype's precision. float64's is tight enough that a
// kernel that computed in float32 fails (its relative error is ~6e-8, far
// above 1e-10; issue 38), and loose enough for float64 roundoff (~1e-16 per
// op, a few hundred ops).
inline double rtolFor(at::ScalarType type) {
  switch (type) {
    case at::kHalf: return 1e-3;
    case at::kBFloat16: return 1e-2;
    case at::kDouble: return 1e-10;
    default: return 1e-5;
  }
}

// Random inputs of any hostir dtype.
inline at::Tensor randomTensor(at::IntArrayRef sizes, at::ScalarType type) {
  if (type == at::kBool) {
    return at::randint(0, 2, sizes, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
  }
  if (at::isIntegralType(type, /*includeBool=*/false)) {
    return at::randint(-10, 10, sizes, at::TensorOptions().dtype(type));
  }
  return at::randn(sizes, at::TensorOptions().dtype(at::kFloat)).to(type);
}

// Builds a fusion in fusion_ (current in the test body) and runs it.
class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  Fusion& fusion() {
    return *fusion_;
  }

  // Moves the fusion into an executor; build everything before calling.
  std::unique_ptr<FusionExecutor> executor() {
    HOSTIR_ASSERT(fusion_ != nullptr, "executor() called twice");
    return std::make_unique<FusionExecutor>(std::move(fusion_));
  }

  // Runs the fusion once; the executor is kept so the fusion stays alive.
  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    if (executor_ == nullptr) {
      executor_ = executor();
    }
    return executor_->run(inputs, outputs);
  }

  std::unique_ptr<Fusion> fusion_ = std::make_unique<Fusion>();
  FusionGuard guard_{fusion_.get()};
  std::unique_ptr<FusionExecutor> executor_;
};

}  // namespace hostir::test
