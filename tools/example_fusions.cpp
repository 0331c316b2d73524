#include "example_fusions.h"

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir::tools {

namespace {

// linear -> relu -> linear -> sum over the hidden rows: a small MLP block.
ExampleFusion mlpExample() {
  return {"mlp", "MLP block: linear(x, w1) -> relu -> linear(., w2) -> sum over tokens",
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
          }};
}

// A pointwise chain with a broadcast and a reduction.
ExampleFusion softplusNormExample() {
  return {"pointwise", "pointwise chain: y = sqrt(sum(exp(-|x|) * b + 1, axis 1)) with b broadcast",
          [](Fusion& fusion) {
            FusionGuard fg(&fusion);
            TensorView* x = makeContigTensor(2);
            TensorView* b = makeContigTensor(1);
            fusion.addInput(x);
            fusion.addInput(b);
            TensorView* e = exp(neg(abs(x)));
            TensorView* scaled = mul(e, broadcast(b, {true, false}));
            fusion.addOutput(sqrt(sum(add(scaled, 1.0), {1})));
          }};
}

// Stream examples: each marks an axis ParallelType::Stream so the lowering
// turns the op into a host loop over streams.
ExampleFusion streamSetExample() {
  return {"stream_set", "one set op, stream-parallel on axis 0", [](Fusion& fusion) {
            FusionGuard fg(&fusion);
            TensorView* in = makeContigTensor(2);
            fusion.addInput(in);
            TensorView* out = set(in);
            out->axis(0)->parallelize(ParallelType::Stream);
            fusion.addOutput(out);
          }};
}

ExampleFusion streamTwoSetsExample() {
  return {"stream_two_sets", "two stream-parallel set ops: one fused loop", [](Fusion& fusion) {
            FusionGuard fg(&fusion);
            TensorView* in = makeContigTensor(2);
            fusion.addInput(in);
            TensorView* mid = set(in);
            TensorView* out = set(mid);
            mid->axis(0)->parallelize(ParallelType::Stream);
            out->axis(0)->parallelize(ParallelType::Stream);
            fusion.addOutput(out);
          }};
}

ExampleFusion streamThreeSetsExample() {
  return {"stream_three_sets",
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
          }};
}

ExampleFusion streamReductionExample() {
  return {"stream_reduction", "sum over axis 1, stream-parallel on axis 0", [](Fusion& fusion) {
            FusionGuard fg(&fusion);
            TensorView* in = makeContigTensor(2);
            fusion.addInput(in);
            TensorView* out = sum(in, {1});
            out->axis(0)->parallelize(ParallelType::Stream);
            fusion.addOutput(out);
          }};
}

ExampleFusion streamMatmulExample() {
  return {"stream_matmul", "[M,K]x[K,N] matmul in 4 row chunks (outer split of M, stream-parallel)",
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
          }};
}

}  // namespace

const std::vector<ExampleFusion>& builtinExampleFusions() {
  static const std::vector<ExampleFusion> examples{
      mlpExample(),           softplusNormExample(),    streamSetExample(),
      streamTwoSetsExample(), streamThreeSetsExample(), streamReductionExample(),
      streamMatmulExample()};
  return examples;
}

const ExampleFusion& findExampleFusion(const std::string& name) {
  std::string valid;
  for (const ExampleFusion& example : builtinExampleFusions()) {
    if (example.name == name) {
      return example;
    }
    valid += (valid.empty() ? "" : ", ") + example.name;
  }
  HOSTIR_THROW("no example named '", name, "'; valid: ", valid);
}

}  // namespace hostir::tools
