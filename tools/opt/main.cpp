// hostir-opt: `hostir opt` as a program of its own. It links the compiler
// half only (IR, passes, textual host IR; no libtorch), so it starts in
// milliseconds where `hostir`, which loads libtorch and its ~300 shared
// libraries, takes about a second before main: what the lit tests and
// anyone running passes on IR text start many times (docs/lowering.md,
// "Textual host IR and `hostir opt`").
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "opt_command.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return hostir::runOptCommand(args);
  } catch (const std::exception& error) {
    std::cerr << "hostir-opt: error: " << error.what() << "\n";
    return 1;
  }
}
