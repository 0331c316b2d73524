#include "hostir/compiler/compile.h"

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/cloner.h"

namespace hostir {

CompiledProgram compile(const Fusion& fusion, const CompileOptions& options) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  std::unique_ptr<HostIrContainer> program = compileInPlace(*copy, options);
  return CompiledProgram{.fusion = std::move(copy), .program = std::move(program)};
}

std::unique_ptr<HostIrContainer> compileInPlace(Fusion& copy, const CompileOptions& options) {
  return presegmentAndLower(copy, options.multidevice);
}

}  // namespace hostir
