// compile (src/hostir/compiler/compile.h), the one compile path of the
// Executor and `hostir lower`: it works on a copy (the user's fusion is left
// as given, so one fusion compiles for every rank), the copy it returns is
// the presegmented one, and the program is the same each time it compiles.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hostir/compiler/compile.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "megatron_blocks.h"

namespace hostir::test {

TEST(Compile, LeavesTheUsersFusionAsGivenAndCompilesTheSameProgramForEachRank) {
  std::unique_ptr<Fusion> fusion = tools::buildSequenceParallelMlp(2, 4);
  const std::string given = fusion->toString();
  for (int64_t device : {0, 1}) {
    SCOPED_TRACE("device " + std::to_string(device));
    CompileOptions options{.multidevice = MultiDeviceLowering{device, {}}};
    CompiledProgram first = compile(*fusion, options);
    CompiledProgram second = compile(*fusion, options);
    EXPECT_EQ(fusion->toString(), given);
    EXPECT_EQ(printHostIrText(*first.program), printHostIrText(*second.program));
    // The copy is the one presegmentation ran on (the sharding passes changed
    // it), not the user's fusion.
    EXPECT_NE(first.fusion.get(), fusion.get());
    EXPECT_NE(first.fusion->toString(), given);
  }
}

}  // namespace hostir::test
