#include "hostir/compiler/compile.h"

#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/error.h"
#include "hostir/ir/pass_pipeline.h"

namespace hostir {
namespace {

// Under the verifier (HOSTIR_VERIFY=1, every test): the program the
// compile stage returns reads back from its text as the same program, so
// print -> parse -> print holds on every program the suites lower.
void checkTextRoundTrip(const HostIrContainer& program) {
  const std::string text = printHostIrText(program);
  std::unique_ptr<HostIrContainer> parsed = parseHostIrText(text, "the compiled program");
  const std::string again = printHostIrText(*parsed);
  HOSTIR_ASSERT(again == text,
                "the compiled program does not read back from its text as itself "
                "(print -> parse -> print differs); printed:\n",
                text, "read back and printed:\n", again);
}

}  // namespace

CompiledProgram compile(const Fusion& fusion, const CompileOptions& options) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  std::unique_ptr<HostIrContainer> program = compileInPlace(*copy, options);
  return CompiledProgram{.fusion = std::move(copy), .program = std::move(program)};
}

std::unique_ptr<HostIrContainer> compileInPlace(Fusion& copy, const CompileOptions& options) {
  std::unique_ptr<HostIrContainer> program = presegmentAndLower(copy, options.multidevice);
  if (isVerifierEnabled()) {
    checkTextRoundTrip(*program);
  }
  return program;
}

}  // namespace hostir
