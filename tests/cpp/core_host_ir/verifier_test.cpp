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

// in -> ALLOCATE out, an allgather of in into out, and what a test adds.
struct CommunicationProgram {
  HostIrContainer hic;
  TensorView* in = nullptr;
  TensorView* out = nullptr;
  Communication* communication = nullptr;

  CommunicationProgram() {
    FusionGuard fg(&hic);
    in = makeContigTensor(1);
    out = makeContigTensor(1);
    hic.addInput(in);
    hic.topLevel().push_back(IrBuilder::create<Allocate>(out));
    communication = IrBuilder::create<Communication>(
        in, out, CommunicationParams{.type = CommunicationType::Allgather, .team = {0, 1}});
  }

  ForLoop* loopOver(Val* extent) {
    FusionGuard fg(&hic);
    auto* index = IrBuilder::create<Scalar>(std::string(kStreamIdx), DataType::Int64);
    auto* axis = IrBuilder::create<IterDomain>(extent, IterType::Iteration, ParallelType::Stream);
    return IrBuilder::create<ForLoop>(index, axis);
  }

  Wait* waitFor(Expr* post) {
    FusionGuard fg(&hic);
    return IrBuilder::create<Wait>(post);
  }
};

// A pass dropped the communication but kept its Wait.
TEST(HostProgramVerifier, RejectsAWaitWhosePostIsNotInTheProgram) {
  CommunicationProgram program;
  program.hic.topLevel().push_back(program.waitFor(program.communication));
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "Wait Communication", "waits for",
                      "which is not in this program");
}

TEST(HostProgramVerifier, RejectsTwoWaitsForOnePost) {
  CommunicationProgram program;
  Scope& top = program.hic.topLevel();
  top.push_back(program.communication);
  top.push_back(program.waitFor(program.communication));
  EXPECT_NO_THROW(verifyHostProgram(program.hic));
  top.push_back(program.waitFor(program.communication));
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "Communication", "has two Waits",
                      "in the top level and in the top level",
                      "each run of a post is completed by exactly one Wait");
}

// Posted once, waited for in every iteration: the second iteration would
// wait for a post that never comes.
TEST(HostProgramVerifier, RejectsAWaitInALoopOnAPostOutsideIt) {
  CommunicationProgram program;
  program.hic.topLevel().push_back(program.communication);
  ForLoop* loop = program.loopOver(program.in->axis(0)->extent());
  loop->body().push_back(program.waitFor(program.communication));
  program.hic.topLevel().push_back(loop);
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "Wait Communication",
                      "does not run as often as its post in the top level",
                      "put the Wait in the post's loops, or in loops over the same iterations");
}

// The pipelined GEMM's shape: a prefetch loop posts, a second loop over the
// same iterations waits; a second loop over other iterations may not.
TEST(HostProgramVerifier, PairsAPrefetchLoopWithALoopOverTheSameIterations) {
  CommunicationProgram program;
  Val* extent = program.in->axis(0)->extent();
  ForLoop* prefetch = program.loopOver(extent);
  prefetch->body().push_back(program.communication);
  program.hic.topLevel().push_back(prefetch);
  ForLoop* compute = program.loopOver(extent);
  compute->body().push_back(program.waitFor(program.communication));
  program.hic.topLevel().push_back(compute);
  EXPECT_NO_THROW(verifyHostProgram(program.hic));

  program.hic.topLevel().erase(compute);
  FusionGuard fg(&program.hic);
  ForLoop* other = program.loopOver(IrBuilder::create<Scalar>(int64_t{3}));
  other->body().push_back(program.waitFor(program.communication));
  program.hic.topLevel().push_back(other);
  EXPECT_HOSTIR_ERROR(verifyHostProgram(program.hic), "does not run as often as its post",
                      "FOR StreamIdx");
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
    // The runtime's dumps are stages too (the pool's `buffers` was refused
    // by the pipeline when it was added).
    ScopedEnv env("HOSTIR_DUMP", "kernels,overlap,buffers");
    EXPECT_NO_THROW(passes.run(program.hic));
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
