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
  return Example{"mlp", "MLP block: linear(x, w1) -> relu -> linear(., w2) -> sum over tokens",
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
  return Example{"pointwise",
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

// Stream examples: each marks an axis ParallelType::Stream so the lowering
// turns the op into a host loop over streams.
Example streamSetExample() {
  return Example{
      "stream_set", "one set op, stream-parallel on axis 0",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* in = makeContigTensor(2);
        fusion.addInput(in);
        TensorView* out = set(in);
        out->axis(0)->parallelize(ParallelType::Stream);
        fusion.addOutput(out);
      },
      [] {
        return std::vector<at::Tensor>{at::randn({8, 1024})};
      },
      [](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].clone()}; }};
}

Example streamTwoSetsExample() {
  return Example{
      "stream_two_sets", "two stream-parallel set ops: one fused loop",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* in = makeContigTensor(2);
        fusion.addInput(in);
        TensorView* mid = set(in);
        TensorView* out = set(mid);
        mid->axis(0)->parallelize(ParallelType::Stream);
        out->axis(0)->parallelize(ParallelType::Stream);
        fusion.addOutput(out);
      },
      [] {
        return std::vector<at::Tensor>{at::randn({8, 1024})};
      },
      [](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].clone()}; }};
}

Example streamThreeSetsExample() {
  return Example{
      "stream_three_sets",
      "three set ops, the middle one not marked: the Stream axis propagates to it, one loop",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* in = makeContigTensor(2);
        fusion.addInput(in);
        TensorView* a = set(in);
        TensorView* b = set(a);
        TensorView* c = set(b);
        a->axis(0)->parallelize(ParallelType::Stream);
        c->axis(0)->parallelize(ParallelType::Stream);
        fusion.addOutput(c);
      },
      [] {
        return std::vector<at::Tensor>{at::randn({8, 1024})};
      },
      [](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].clone()}; }};
}

Example streamReductionExample() {
  return Example{
      "stream_reduction", "sum over axis 1, stream-parallel on axis 0",
      [](Fusion& fusion) {
        FusionGuard fg(&fusion);
        TensorView* in = makeContigTensor(2);
        fusion.addInput(in);
        TensorView* out = sum(in, {1});
        out->axis(0)->parallelize(ParallelType::Stream);
        fusion.addOutput(out);
      },
      [] {
        return std::vector<at::Tensor>{at::randn({16, 4096})};
      },
      [](const std::vector<at::Tensor>& in) { return std::vector<at::Tensor>{in[0].sum({1})}; }};
}

Example streamMatmulExample() {
  return Example{"stream_matmul",
                 "[M,K]x[K,N] matmul in 4 row chunks (outer split of M, stream-parallel)",
                 [](Fusion& fusion) {
                   FusionGuard fg(&fusion);
                   TensorView* a = makeContigTensor(2);
                   TensorView* b = makeContigTensor(2);
                   fusion.addInput(a);
                   fusion.addInput(b);
                   TensorView* out = matmul(a, b);
                   out->split(0, 4, /*inner_split=*/false);
                   out->axis(0)->parallelize(ParallelType::Stream);
                   fusion.addOutput(out);
                 },
                 [] {
                   return std::vector<at::Tensor>{at::randn({1022, 512}), at::randn({512, 768})};
                 },
                 [](const std::vector<at::Tensor>& in) {
                   return std::vector<at::Tensor>{at::matmul(in[0], in[1])};
                 }};
}

}  // namespace

const std::vector<Example>& builtinExamples() {
  static const std::vector<Example> examples{
      mlpExample(),           softplusNormExample(),    streamSetExample(),
      streamTwoSetsExample(), streamThreeSetsExample(), streamReductionExample(),
      streamMatmulExample()};
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
