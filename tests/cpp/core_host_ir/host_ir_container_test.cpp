#include <cstdlib>

#include <gtest/gtest.h>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

namespace {

std::unique_ptr<Fusion> makeReluFusion() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* in = makeContigTensor(1);
  fusion->addInput(in);
  fusion->addOutput(relu(in));
  return fusion;
}

// The stream-parallel program of docs/design.md: allocate the output, then for
// each chunk along axis 0 pick a stream, wait for the caller's stream, take
// views of the input and output chunk and run a segment into the view; then
// an allgather, a nested loop and a kernel launch.
void buildPipelinedProgram(HostIrContainer& hic) {
  FusionGuard fg(&hic);
  TensorView* in = makeContigTensor(2);   // T0 [i0, i1]
  TensorView* out = makeContigTensor(2);  // T1 [i2, i3]
  hic.addInput(in);
  hic.addOutput(out);
  Scope& top = hic.topLevel();

  top.push_back(IrBuilder::create<Allocate>(out));
  auto* get_stream = IrBuilder::create<GetCurrentStream>();
  top.push_back(get_stream);

  auto* stream_idx = IrBuilder::create<Scalar>(std::string(kStreamIdx), DataType::Int64);
  auto* n_streams = IrBuilder::create<Scalar>(std::string(kNumberOfStreams), DataType::Int64);
  auto* stream_axis = IrBuilder::create<IterDomain>(in->axis(0)->extent(), IterType::Iteration,
                                                    ParallelType::Stream);
  auto* loop = IrBuilder::create<ForLoop>(stream_idx, stream_axis);
  top.push_back(loop);
  Scope& body = loop->body();
  body.push_back(
      IrBuilder::create<SetCurrentStream>(IrBuilder::create<Stream>(mod(stream_idx, n_streams))));
  body.push_back(IrBuilder::create<Synchronize>(get_stream->stream()));
  TensorView* in_chunk = makeContigTensor(1);
  TensorView* out_chunk = makeContigTensor(1);
  body.push_back(IrBuilder::create<HirAliasSelect>(in, in_chunk, 0, stream_idx));
  body.push_back(IrBuilder::create<HirAliasSelect>(out, out_chunk, 0, stream_idx));
  auto* unit = IrBuilder::create<HostUnit>(makeReluFusion());
  body.push_back(IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in_chunk},
                                                 std::vector<Val*>{out_chunk}));
  body.push_back(IrBuilder::create<SetCurrentStream>(get_stream->stream()));

  TensorView* gathered = makeContigTensor(2);
  top.push_back(IrBuilder::create<Allocate>(gathered, MemoryType::Global, true));
  auto* allgather = IrBuilder::create<Communication>(
      out, gathered, CommunicationParams{.type = CommunicationType::Allgather, .team = {0, 1}});
  top.push_back(allgather);
  top.push_back(IrBuilder::create<Wait>(allgather));

  // Two nested loops with explicit bounds.
  auto* i = IrBuilder::create<Scalar>(DataType::Int64);
  auto* j = IrBuilder::create<Scalar>(DataType::Int64);
  auto* zero = IrBuilder::create<Scalar>(int64_t{0});
  auto* one = IrBuilder::create<Scalar>(int64_t{1});
  auto* outer = IrBuilder::create<ForLoop>(i, zero, IrBuilder::create<Scalar>(int64_t{2}), one);
  auto* inner = IrBuilder::create<ForLoop>(j, zero, IrBuilder::create<Scalar>(int64_t{3}), one);
  top.push_back(outer);
  outer->body().push_back(inner);
  inner->body().push_back(IrBuilder::create<Synchronize>(get_stream->stream()));
  int64_t kernel = hic.addKernel(makeReluFusion());
  inner->body().push_back(IrBuilder::create<LaunchKernel>(kernel, std::vector<Val*>{in_chunk},
                                                          std::vector<Val*>{out_chunk}));
  top.push_back(IrBuilder::create<Deallocate>(gathered));
}

const char* const kPipelinedProgram =
    "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{i1}]) -> (T1_g_float[iS2{i2}, iS3{i3}]) :\n"
    "  T1_g_float[iS2{i2}, iS3{i3}] = ALLOCATE("
    "mem_type=global, size=( i2 * i3 ), zero_init=false)\n"
    "  GetCurrentStream into Stream 0\n"
    "  FOR StreamIdx in iStreamIdx4{i0}:\n"
    "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )\n"
    "    Synchronize Stream 0\n"
    "    T2_l_float[iS5{i9}]\n"
    "       = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i1}], axis = iS0{i0}, index = StreamIdx )\n"
    "    T3_l_float[iS6{i10}]\n"
    "       = HirAliasSelect( T1_g_float[iS2{i2}, iS3{i3}], axis = iS2{i2}, index = StreamIdx )\n"
    "    PostOnStream (HostUnit 8, inputs=(T2_l_float[iS5{i9}]), "
    "outputs=(T3_l_float[iS6{i10}]))\n"
    "    SetCurrentStream to Stream 0\n"
    "  T4_l_float[iS7{i11}, iS8{i12}] = ALLOCATE("
    "mem_type=global, size=( i11 * i12 ), zero_init=true)\n"
    "  Communication 12 (type=Allgather, team=(0 1), input=T1_g_float[iS2{i2}, iS3{i3}], "
    "output=T4_l_float[iS7{i11}, iS8{i12}])\n"
    "  Wait Communication 12\n"
    "  FOR i13 from 0 to 2 step 1:\n"
    "    FOR i14 from 0 to 3 step 1:\n"
    "      Synchronize Stream 0\n"
    "      LaunchKernel (kernel=0, inputs=(T2_l_float[iS5{i9}]), "
    "outputs=(T3_l_float[iS6{i10}]))\n"
    "  Deallocate T4_l_float[iS7{i11}, iS8{i12}]\n"
    "} // %HostIrContainer\n"
    "\n"
    "HostUnit 8:\n"
    "  %Fusion {\n"
    "    inputs:\n"
    "      T0_g_float[iS0{i0}]\n"
    "    outputs:\n"
    "      T1_g_float[iS1{i0}]\n"
    "    exprs:\n"
    "      T1_g_float[iS1{i0}]\n"
    "         = relu( T0_g_float[iS0{i0}] )\n"
    "  } // %Fusion\n"
    "\n"
    "Kernel 0:\n"
    "  %Fusion {\n"
    "    inputs:\n"
    "      T0_g_float[iS0{i0}]\n"
    "    outputs:\n"
    "      T1_g_float[iS1{i0}]\n"
    "    exprs:\n"
    "      T1_g_float[iS1{i0}]\n"
    "         = relu( T0_g_float[iS0{i0}] )\n"
    "  } // %Fusion\n";

}  // namespace

TEST(HostIrContainerTest, PrintsTheProgramWithNestedScopes) {
  HostIrContainer hic;
  buildPipelinedProgram(hic);
  EXPECT_EQ(hic.toString(), kPipelinedProgram);
}

TEST(HostIrContainerTest, ExprsFollowTheTopLevelScope) {
  HostIrContainer hic;
  buildPipelinedProgram(hic);
  std::vector<Expr*> exprs = hic.exprs();
  ASSERT_EQ(exprs.size(), 8u);
  EXPECT_EQ(exprs, hic.topLevel().toVector());
  const Fusion& as_fusion = hic;
  EXPECT_EQ(as_fusion.exprs(), exprs);  // virtual: no topological sort of a host program
  std::vector<std::string> kinds;
  for (Expr* expr : exprs) {
    kinds.push_back(expr->opName());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"Allocate", "GetCurrentStream", "ForLoop", "Allocate",
                                             "Communication", "Wait", "ForLoop", "Deallocate"}));
  ASSERT_EQ(hic.hostUnits().size(), 1u);
  EXPECT_EQ(hic.hostUnits()[0]->fusion()->inputs().size(), 1u);
}

TEST(HostIrContainerTest, CloneIsADeepCopyThatPrintsIdentically) {
  auto original = std::make_unique<HostIrContainer>();
  buildPipelinedProgram(*original);
  std::unique_ptr<HostIrContainer> copy = original->clone();
  EXPECT_EQ(copy->toString(), kPipelinedProgram);
  ASSERT_EQ(copy->topLevel().size(), original->topLevel().size());

  // Everything in the copy belongs to the copy.
  auto* loop = copy->exprs()[2]->as<ForLoop>();
  EXPECT_EQ(loop->container(), copy.get());
  EXPECT_NE(loop, original->exprs()[2]);
  for (Expr* expr : loop->body()) {
    EXPECT_EQ(expr->container(), copy.get());
  }
  Expr* post = *std::next(loop->body().begin(), 4);
  HostUnit* unit = post->as<PostOnStream>()->hostUnit();
  EXPECT_EQ(unit->container(), copy.get());
  EXPECT_NE(unit->fusion(), original->hostUnits()[0]->fusion());
  EXPECT_EQ(copy->hostUnits(), std::vector<HostUnit*>{unit});
  auto* wait = copy->exprs()[5]->as<Wait>();
  EXPECT_EQ(wait->communication(), copy->exprs()[4]);
  EXPECT_EQ(copy->numKernels(), 1);
  EXPECT_NE(copy->kernel(0), original->kernel(0));

  // The copy outlives the original.
  original.reset();
  EXPECT_EQ(copy->toString(), kPipelinedProgram);
  EXPECT_EQ(copy->clone()->toString(), kPipelinedProgram);
}

TEST(HostIrContainerTest, EditingTheCopyLeavesTheOriginal) {
  HostIrContainer original;
  buildPipelinedProgram(original);
  std::unique_ptr<HostIrContainer> copy = original.clone();
  copy->topLevel().erase(copy->exprs()[7]);
  auto* loop = copy->exprs()[2]->as<ForLoop>();
  loop->body().erase(loop->body().begin());
  EXPECT_EQ(original.toString(), kPipelinedProgram);
  EXPECT_NE(copy->toString(), kPipelinedProgram);
}

TEST(HostIrContainerTest, DumpsWhenHostIrIsListed) {
  HostIrContainer hic;
  buildPipelinedProgram(hic);
  ::setenv("HOSTIR_DUMP", "fusion,host_ir", 1);
  testing::internal::CaptureStdout();
  hic.printIfHostIrDumpEnabled();
  std::string printed = testing::internal::GetCapturedStdout();
  ::setenv("HOSTIR_DUMP", "fusion", 1);
  testing::internal::CaptureStdout();
  hic.printIfHostIrDumpEnabled();
  std::string silent = testing::internal::GetCapturedStdout();
  ::unsetenv("HOSTIR_DUMP");
  EXPECT_EQ(printed, kPipelinedProgram);
  EXPECT_EQ(silent, "");
}

TEST(HostIrContainerTest, EmptyContainerPrintsItsFrame) {
  HostIrContainer hic;
  EXPECT_EQ(hic.toString(), "%HostIrContainer { () -> () :\n} // %HostIrContainer\n");
  EXPECT_TRUE(hic.exprs().empty());
  EXPECT_EQ(hic.clone()->toString(), hic.toString());
}

// The header shows the mesh of each input and output that has one.
TEST(HostIrContainerTest, HeaderPrintsTheMeshesOfInputsAndOutputs) {
  HostIrContainer hic;
  FusionGuard fg(&hic);
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  in->setDeviceMesh(DeviceMesh({0, 1}));
  hic.addInput(in);
  hic.addOutput(out);
  EXPECT_EQ(hic.toString(),
            "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{0 1})) -> (T1_g_float[iS1{i1}]) "
            ":\n} // %HostIrContainer\n");
}

TEST(HostIrContainerTest, ClonedNodesCarryTheirBodiesAndReferences) {
  // A pass copying single nodes into another container (not a whole clone).
  HostIrContainer original;
  buildPipelinedProgram(original);
  HostIrContainer target;
  IrCloner cloner(&target);
  auto* loop = cloner.clone(original.exprs()[2])->as<ForLoop>();
  ASSERT_EQ(loop->body().size(), 6u);
  EXPECT_EQ(loop->body().owner(), loop);
  for (Expr* expr : loop->body()) {
    EXPECT_EQ(expr->container(), &target);
  }
  auto* post = (*std::next(loop->body().begin(), 4))->as<PostOnStream>();
  EXPECT_EQ(post->hostUnit()->container(), &target);
  EXPECT_EQ(post->hostUnit()->fusion()->toString(), original.hostUnits()[0]->fusion()->toString());
  auto* wait = cloner.clone(original.exprs()[5])->as<Wait>();
  EXPECT_EQ(wait->communication()->container(), &target);
  auto* allgather = wait->communication()->as<Communication>();
  EXPECT_EQ(allgather->type(), CommunicationType::Allgather);
  EXPECT_EQ(allgather->team(), (std::vector<int64_t>{0, 1}));
}

}  // namespace hostir
