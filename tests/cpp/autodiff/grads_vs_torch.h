#pragma once

// The harness of the autodiff tests: a fusion's forward and backward run
// through the host executor (compiled kernels, or ATen in the .aten
// variant), against libtorch's autograd on the same inputs, in float64
// directly and in float32 against a float64 truth with torch float32's own
// error as the yardstick. Integer inputs (indices) are passed as they are
// and take no grad.

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <functional>
#include <string>
#include <vector>

#include "hostir/autodiff/differentiate.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {

using TorchProgram = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// A float64 tolerance that a grad computed in float32 would fail.
constexpr double kDoubleTolerance = 1e-10;

struct Grads {
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> input_grads;
};

// Runs the forward and the backward of `d` on `inputs`, the output grads
// `output_grads` seeding the backward.
inline Grads runDifferentiated(const Differentiated& d, const std::vector<at::Tensor>& inputs,
                               const std::vector<at::Tensor>& output_grads) {
  Grads grads;
  HostExecutor forward(*d.forward);
  grads.outputs = forward.run(inputs);
  std::vector<at::Tensor> backward_inputs = inputs;
  backward_inputs.insert(backward_inputs.end(), output_grads.begin(), output_grads.end());
  for (int64_t saved : d.saved_outputs) {
    backward_inputs.push_back(grads.outputs.at(static_cast<size_t>(saved)));
  }
  HostExecutor backward(*d.backward);
  grads.input_grads = backward.run(backward_inputs);
  return grads;
}

// Torch autograd's grads of every floating-point input of `reference` on
// the same inputs and output grads, in input order.
inline std::vector<at::Tensor> torchGrads(const TorchProgram& reference,
                                          const std::vector<at::Tensor>& inputs,
                                          const std::vector<at::Tensor>& output_grads) {
  std::vector<at::Tensor> arguments;
  std::vector<at::Tensor> leaves;
  for (const at::Tensor& input : inputs) {
    if (input.is_floating_point()) {
      leaves.push_back(input.detach().clone().requires_grad_(true));
      arguments.push_back(leaves.back());
    } else {
      arguments.push_back(input);
    }
  }
  std::vector<at::Tensor> outputs = reference(arguments);
  std::vector<at::Tensor> grads =
      torch::autograd::grad(outputs, leaves, output_grads, /*retain_graph=*/false,
                            /*create_graph=*/false, /*allow_unused=*/true);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      grads[i] = at::zeros_like(leaves[i]);
    }
  }
  return grads;
}

// The largest absolute difference of two tensors, in float64.
inline double maxAbsDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// A float32 result is held to the float64 truth by how far torch's own
// float32 result is from it: no more than 4x torch's error plus 1e-6 of the
// tensor's scale. A fixed tolerance is either loose enough to pass a wrong
// rule or tight enough to fail on cancellation when another machine's GEMMs
// sum in another order (CI failed so on CausalAttentionAndMlp: 3e-5 off a
// 1e-5 atol in elements summed from terms near 100); a wrong rule is off by
// the size of the grad.
inline ::testing::AssertionResult closeAsTorchFloat(const at::Tensor& actual,
                                                    const at::Tensor& torch32,
                                                    const at::Tensor& truth) {
  const double scale = 1.0 + truth.abs().max().item<double>();
  const double torch_error = maxAbsDiff(torch32, truth);
  const double error = maxAbsDiff(actual, truth);
  const double allowed = 4.0 * torch_error + 1e-6 * scale;
  if (error <= allowed) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "max abs error from the float64 result " << error << ", more than 4x torch float32's "
         << torch_error << " + 1e-6 * " << scale;
}

// The floating-point tensors in float64, the others as they are.
inline std::vector<at::Tensor> toDouble(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> doubles;
  for (const at::Tensor& tensor : tensors) {
    doubles.push_back(tensor.is_floating_point() ? tensor.to(at::kDouble) : tensor);
  }
  return doubles;
}

// Differentiates `fusion` with both save policies and compares outputs and
// every floating-point input's grad with torch autograd: in float64
// directly, in float32 against the float64 result with torch float32's
// error as the yardstick.
inline void expectGradsMatchTorch(const Fusion& fusion, const TorchProgram& reference,
                                  const std::vector<at::Tensor>& inputs) {
  at::ScalarType type = at::kFloat;
  for (const at::Tensor& input : inputs) {
    if (input.is_floating_point()) {
      type = input.scalar_type();
      break;
    }
  }
  const bool is_double = type == at::kDouble;
  std::vector<at::Tensor> expected_outputs = reference(inputs);
  std::vector<at::Tensor> output_grads;
  for (const at::Tensor& output : expected_outputs) {
    output_grads.push_back(at::randn(output.sizes(), output.options()));  // contiguous
  }
  std::vector<at::Tensor> expected = torchGrads(reference, inputs, output_grads);
  std::vector<at::Tensor> true_outputs = is_double ? expected_outputs : reference(toDouble(inputs));
  std::vector<at::Tensor> true_grads =
      is_double ? expected : torchGrads(reference, toDouble(inputs), toDouble(output_grads));
  auto expectClose = [&](const at::Tensor& actual, const at::Tensor& torch_result,
                         const at::Tensor& truth, const std::string& what) {
    if (is_double) {
      EXPECT_TRUE(allClose(actual, truth, kDoubleTolerance, kDoubleTolerance)) << what;
    } else {
      EXPECT_TRUE(closeAsTorchFloat(actual, torch_result, truth)) << what;
    }
  };
  for (SavePolicy policy : {SavePolicy::kSaveGemmOutputs, SavePolicy::kRecomputeAll}) {
    SCOPED_TRACE(policy == SavePolicy::kRecomputeAll ? "recompute all" : "save GEMM outputs");
    Differentiated d = differentiate(fusion, {.save = policy});
    Grads grads = runDifferentiated(d, inputs, output_grads);
    for (size_t i = 0; i < expected_outputs.size(); ++i) {
      EXPECT_EQ(grads.outputs[i].scalar_type(), type) << "output " << i;
      expectClose(grads.outputs[i], expected_outputs[i], true_outputs[i],
                  "output " + std::to_string(i));
    }
    ASSERT_EQ(grads.input_grads.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(grads.input_grads[i].scalar_type(), type) << "grad of input " << i;
      expectClose(grads.input_grads[i], expected[i], true_grads[i],
                  "grad of input " + std::to_string(i));
    }
  }
}

// A test per dtype (float32, float64) that builds fusions of that dtype.
class GradsVsTorchTest : public ::testing::TestWithParam<at::ScalarType> {
 protected:
  DataType dtype() const {
    return GetParam() == at::kDouble ? DataType::Double : DataType::Float;
  }
  at::TensorOptions options() const {
    return at::TensorOptions().dtype(GetParam());
  }
  TensorView* input(Fusion& fusion, int64_t ndims) {
    TensorView* tv = makeContigTensor(ndims, dtype());
    fusion.addInput(tv);
    return tv;
  }
  TensorView* input(Fusion& fusion, const std::vector<int64_t>& sizes) {
    TensorView* tv = makeContigConcreteTensor(sizes, dtype());
    fusion.addInput(tv);
    return tv;
  }
};

inline std::string dtypeName(const ::testing::TestParamInfo<at::ScalarType>& info) {
  return info.param == at::kDouble ? "Double" : "Float";
}

}  // namespace hostir::test
