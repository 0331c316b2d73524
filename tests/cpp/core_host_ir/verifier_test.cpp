// The host program verifier and the one pass pipeline (names, options, the
// verifier after each pass).
#include <cstdlib>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "host_ir_test_utils.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/pass_manager.h"
#include "hostir/host_ir/passes/pass_registry.h"
#include "hostir/host_ir/passes/verifier.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {
namespace {

using test::ScopedEnv;

// in -> ALLOCATE out; FOR i: view of in and out, relu into the view.
struct LoopProgram {
  HostIrContainer hic;
  TensorView* in = nullptr;
  TensorView* out = nullptr;
  Allocate* allocate = nullptr;
  ForLoop* loop = nullptr;
  TensorView* in_row = nullptr;

  LoopProgram() {
    FusionGuard fg(&hic);
    in = makeContigTensor(2);
    out = makeContigTensor(2);
    hic.addInput(in);
    hic.addOutput(out);
    allocate = IrBuilder::create<Allocate>(out);
    hic.topLevel().push_back(allocate);
    auto* index = IrBuilder::create<Scalar>(std::string(kStreamIdx), DataType::Int64);
    auto* axis = IrBuilder::create<IterDomain>(in->axis(0)->extent(), IterType::Iteration,
                                               ParallelType::Stream);
    loop = IrBuilder::create<ForLoop>(index, axis);
    hic.topLevel().push_back(loop);
    in_row = makeContigTensor(1);
    TensorView* out_row = makeContigTensor(1);
    loop->body().push_back(IrBuilder::create<HirAliasSelect>(in, in_row, 0, index));
    loop->body().push_back(IrBuilder::create<HirAliasSelect>(out, out_row, 0, index));
    loop->body().push_back(IrBuilder::create<UnaryOp>(
        std::vector<Val*>{in_row}, std::vector<Val*>{out_row},
        std::vector<Attribute>{static_cast<int64_t>(UnaryOpType::Relu)}));
  }
};

TEST(HostProgramVerifier, AcceptsAWellFormedProgram) {
  LoopProgram program;
  EXPECT_NO_THROW(verifyHostProgram(program.hic));
}

// A pass that moved the allocation after the loop: the loop's view reads a
// buffer that is not allocated yet.
TEST(HostProgramVerifier, RejectsAViewOfABufferNotAllocatedYet) {
  LoopProgram program;
  program.hic.topLevel().erase(program.hic.topLevel().begin());
  program.hic.topLevel().push_back(program.allocate);
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "is read by", "HirAliasSelect",
                      "before the program computes, allocates or views it");
}

TEST(HostProgramVerifier, RejectsAWaitBeforeItsCommunication) {
  HostIrContainer hic;
  FusionGuard fg(&hic);
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  hic.addInput(in);
  auto* communication = IrBuilder::create<Communication>(
      in, out, CommunicationParams{.type = CommunicationType::Allgather, .team = {0, 1}});
  hic.topLevel().push_back(IrBuilder::create<Allocate>(out));
  hic.topLevel().push_back(IrBuilder::create<Wait>(communication));
  hic.topLevel().push_back(communication);
  EXPECT_HOSTIR_ERROR(verifyHostProgram(hic), "Wait", "comes before",
                      "a Wait must follow its communication");
}

// A per-iteration value (a tensor whose extent uses the loop index) used
// after the loop.
TEST(HostProgramVerifier, RejectsALoopIndexUsedOutsideItsLoop) {
  LoopProgram program;
  FusionGuard fg(&program.hic);
  Val* index = program.loop->index();
  TensorView* chunk = makeTensorOfExtents(&program.hic, {add(index, program.in->axis(1)->extent())},
                                          DataType::Float);
  program.hic.topLevel().push_back(IrBuilder::create<Allocate>(chunk));
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "depends on the index of a loop it is not in",
                      "ALLOCATE");
}

TEST(PassPipeline, VerifierRunsAfterEveryPassAndNamesTheOneThatBrokeTheProgram) {
  ScopedEnv verify("HOSTIR_VERIFY", "1");
  LoopProgram program;
  HostIrPassManager passes;
  int ran = 0;
  passes.add("stream_parallelization", [&](HostIrContainer&) { ++ran; });
  passes.add("buffer_shrinking", [&](HostIrContainer& hic) {
    ++ran;
    hic.topLevel().erase(hic.topLevel().begin());  // drops the ALLOCATE
  });
  passes.setVerifier(verifyHostProgram);
  EXPECT_HOSTIR_ERROR(passes.run(program.hic), "broken after pass buffer_shrinking",
                      "before the program computes, allocates or views it");
  EXPECT_EQ(ran, 2);
}

TEST(PassPipeline, UnknownPassNamesAndDumpStagesAreErrorsListingTheValidOnes) {
  LoopProgram program;
  HostIrPassManager passes(registeredPassNames());
  passes.add("stream_parallelization", [](HostIrContainer&) {});
  {
    ScopedEnv env("HOSTIR_DISABLE_PASS", "stream_parallelisation");
    EXPECT_HOSTIR_ERROR(passes.run(program.hic),
                        "HOSTIR_DISABLE_PASS names 'stream_parallelisation', which is not a pass",
                        "stream_parallelization", "propagate_shardings");
  }
  {
    ScopedEnv env("HOSTIR_DUMP", "host-ir");
    EXPECT_HOSTIR_ERROR(passes.run(program.hic), "HOSTIR_DUMP names 'host-ir'", "host_ir",
                        "passes");
  }
  {
    ScopedEnv env("HOSTIR_DISABLE_PASS", "stream_parallelization");
    passes.run(program.hic);
    ASSERT_EQ(passes.timings().size(), 1u);
    EXPECT_TRUE(passes.timings()[0].skipped);
  }
}

TEST(PassPipeline, EveryPassNameIsSnakeCase) {
  for (const std::string& name : registeredPassNames()) {
    EXPECT_EQ(name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ- "), std::string::npos)
        << name << " is not snake_case";
  }
}

}  // namespace
}  // namespace hostir
