#include "hostir/compiler/compile.h"

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/error.h"

namespace hostir {

CompiledProgram compile(const Fusion& fusion, const CompileOptions& options) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  return compileCopy(std::move(copy), options);
}

CompiledProgram compileCopy(std::unique_ptr<Fusion> copy, const CompileOptions& options) {
  HOSTIR_CHECK(copy != nullptr, "compileCopy needs a fusion; got none");
  std::unique_ptr<HostIrContainer> program = presegmentAndLower(*copy, options.multidevice);
  return CompiledProgram{.fusion = std::move(copy), .program = std::move(program)};
}

}  // namespace hostir
