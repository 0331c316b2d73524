#include "examples.h"

#include <algorithm>
#include <map>

#include "hostir/ir/error.h"

namespace hostir::tools {

namespace {

using Tensors = std::vector<at::Tensor>;

struct ExampleData {
  std::function<Tensors()> make_inputs;
  std::function<Tensors(const Tensors&)> reference;
};

Tensors rowsOf1024() {
  return {at::randn({8, 1024})};
}

Tensors copyOfInput(const Tensors& in) {
  return {in[0].clone()};
}

// Inputs and ATen references of the fusions in example_fusions.cpp, by name.
const std::map<std::string, ExampleData>& exampleData() {
  static const std::map<std::string, ExampleData> data{
      {"mlp",
       {[] {
          constexpr int64_t kTokens = 256;
          constexpr int64_t kModel = 512;
          constexpr int64_t kHidden = 2048;
          return Tensors{at::randn({kTokens, kModel}), at::randn({kHidden, kModel}) / 16,
                         at::randn({kModel, kHidden}) / 32};
        },
        [](const Tensors& in) {
          return Tensors{at::linear(at::relu(at::linear(in[0], in[1])), in[2]).sum({0})};
        }}},
      {"pointwise",
       {[] {
          return Tensors{at::randn({1024, 1024}), at::rand({1024})};
        },
        [](const Tensors& in) {
          at::Tensor e = at::exp(-at::abs(in[0]));
          return Tensors{at::sqrt((e * in[1].unsqueeze(0) + 1).sum({1}))};
        }}},
      {"stream_set", {rowsOf1024, copyOfInput}},
      {"stream_two_sets", {rowsOf1024, copyOfInput}},
      {"stream_three_sets", {rowsOf1024, copyOfInput}},
      {"stream_reduction",
       {[] {
          return Tensors{at::randn({16, 4096})};
        },
        [](const Tensors& in) { return Tensors{in[0].sum({1})}; }}},
      {"stream_matmul",
       {[] {
          return Tensors{at::randn({1022, 512}), at::randn({512, 768})};
        },
        [](const Tensors& in) { return Tensors{at::matmul(in[0], in[1])}; }}},
  };
  return data;
}

}  // namespace

const std::vector<Example>& builtinExamples() {
  static const std::vector<Example> examples = [] {
    std::vector<Example> all;
    for (const ExampleFusion& fusion : builtinExampleFusions()) {
      auto data = exampleData().find(fusion.name);
      HOSTIR_CHECK(data != exampleData().end(), "example '", fusion.name,
                   "' has no inputs and reference in tools/examples.cpp");
      all.push_back(Example{&fusion, data->second.make_inputs, data->second.reference});
    }
    return all;
  }();
  return examples;
}

const Example& findExample(const std::string& name) {
  const ExampleFusion* fusion = &findExampleFusion(name);  // or the error naming the valid ones
  return *std::find_if(builtinExamples().begin(), builtinExamples().end(),
                       [fusion](const Example& example) { return example.fusion == fusion; });
}

}  // namespace hostir::tools
