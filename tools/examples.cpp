#include "examples.h"

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir::tools {

namespace {

// linear -> relu -> linear -> sum over the hidden rows: a small MLP block.
Example mlpExample() {
  constexpr int64_t kTokens = 256;
  constexpr int64_t kModel = 512;
  constexpr int64_t kHidden = 2048;
  return Example{
      "mlp",
      "MLP block: linear(x, w1) -> relu -> linear(., w2) -> sum over tokens",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* x = makeContigTensor(2);
        TensorView* w1 = makeContigTensor(2);
        TensorView* w2 = makeContigTensor(2);
        fusion.addInput(x);
        fusion.addInput(w1);
        fusion.addInput(w2);
        TensorView* hidden = relu(linear(x, w1));
        TensorView* out = sum(linear(hidden, w2), {0});
        fusion.addOutput(out);
      },
      [] {
        return std::vector<at::Tensor>{at::randn({kTokens, kModel}),
                                       at::randn({kHidden, kModel}) / 16,
                                       at::randn({kModel, kHidden}) / 32};
      },
      [](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{
            at::linear(at::relu(at::linear(in[0], in[1])), in[2]).sum({0})};
      }};
}

// A pointwise chain with a broadcast and a reduction.
Example softplusNormExample() {
  return Example{
      "pointwise",
      "pointwise chain: y = sqrt(sum(exp(-|x|) * b + 1, axis 1)) with b broadcast",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* x = makeContigTensor(2);
        TensorView* b = makeContigTensor(1);
        fusion.addInput(x);
        fusion.addInput(b);
        TensorView* e = exp(neg(abs(x)));
        TensorView* scaled = mul(e, broadcast(b, {true, false}));
        fusion.addOutput(sqrt(sum(add(scaled, 1.0), {1})));
      },
      [] {
        return std::vector<at::Tensor>{at::randn({1024, 1024}), at::rand({1024})};
      },
      [](const std::vector<at::Tensor>& in) {
        at::Tensor e = at::exp(-at::abs(in[0]));
        return std::vector<at::Tensor>{at::sqrt((e * in[1].unsqueeze(0) + 1).sum({1}))};
      }};
}

}  // namespace

const std::vector<Example>& builtinExamples() {
  static const std::vector<Example> examples{mlpExample(), softplusNormExample()};
  return examples;
}

const Example& findExample(const std::string& name) {
  std::string valid;
  for (const Example& example : builtinExamples()) {
    if (example.name == name) {
      return example;
    }
    valid += (valid.empty() ? "" : ", ") + example.name;
  }
  HOSTIR_THROW("no example named '", name, "'; valid: ", valid);
}

}  // namespace hostir::tools
