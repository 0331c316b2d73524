#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"

namespace hostir::tools {

// A built-in example's program: its name, what it computes and how to build
// its fusion. No ATen here, so that `hostir list`, `print` and `opt` run
// without loading libtorch (main.cpp); their inputs and ATen references are
// in examples.h.
struct ExampleFusion {
  std::string name;
  std::string description;
  std::function<void(Fusion&)> build;
};

const std::vector<ExampleFusion>& builtinExampleFusions();
// The example named `name`; throws hostir::Error listing the valid names.
const ExampleFusion& findExampleFusion(const std::string& name);

}  // namespace hostir::tools
