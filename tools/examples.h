#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "example_fusions.h"

namespace hostir::tools {

// A built-in example: its fusion (example_fusions.h), inputs for it, and the
// same computation written directly in ATen to check hostir's result against.
struct Example {
  const ExampleFusion* fusion;  // name, description, build
  std::function<std::vector<at::Tensor>()> make_inputs;
  std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)> reference;
};

// Every example of builtinExampleFusions(), in its order.
const std::vector<Example>& builtinExamples();
// The example named `name`; throws hostir::Error listing the valid names.
const Example& findExample(const std::string& name);

}  // namespace hostir::tools
