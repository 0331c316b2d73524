// specialize_encodings beyond HostUnit operands (no ATen): top-level GEMMs
// cloned per target, results written in their readers' layout, encoded
// tensors through collectives, program outputs returned plain.
#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "core_ir/ir_check.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {
namespace {

using test::irCheck;

const Encoding kRhs{EncodingKind::MatmulRhs, std::nullopt};

DeviceTargets targetsOf(const std::vector<const char*>& names) {
  DeviceTargets result;
  int64_t device = 0;
  for (const char* name : names) {
    result[device++] = parseTarget(name);
  }
  return result;
}

std::vector<PostOnStream*> launches(HostIrContainer& container) {
  std::vector<PostOnStream*> result;
  for (Expr* expr : container.topLevel()) {
    if (auto* post = dynamic_cast<PostOnStream*>(expr)) {
      result.push_back(post);
    }
  }
  return result;
}

Layout layoutOf(const Val* val) {
  const auto* tv = val->as<TensorView>();
  EXPECT_TRUE(tv->hasEncoding() && tv->encoding()->isResolved()) << tv->toInlineString();
  return tv->hasEncoding() ? tv->encoding()->resolved.value_or(Layout::identity())
                           : Layout::identity();
}

// y = linear(x, w) at the top level, w an encoded program input, on `devices`.
void buildTopLevelLinear(HostIrContainer& container, int64_t devices) {
  FusionGuard fg(&container);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  x->setDeviceMesh(mesh);
  w->setDeviceMesh(mesh);
  w->setEncoding(kRhs);
  container.addInput(x);
  container.addInput(w);
  TensorView* y = linear(x, w);
  y->setDeviceMesh(mesh);
  container.addOutput(y);
  container.pushBackTopLevelExpr(y->definition());
}

TEST(EncodedDataflowTest, TopLevelLinearIsClonedPerTarget) {
  HostIrContainer container;
  buildTopLevelLinear(container, 2);
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  // The linear became a launch with one executable per target, each reading
  // its device's panels.
  ASSERT_EQ(launches(container).size(), 1u);
  PostOnStream* post = launches(container)[0];
  ASSERT_EQ(post->variants().size(), 2u);
  EXPECT_EQ(container.hostUnits().size(), 2u);
  EXPECT_EQ(layoutOf(post->hostUnitFor(0)->fusion()->inputs()[1]), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(layoutOf(post->hostUnitFor(1)->fusion()->inputs()[1]), Layout::identity());
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK:      targets: 0=cpu:avx512 (512-bit vectors, matmul_rhs BA16a64b) 1=cpu:avx2 (256-bit vectors, matmul_rhs plain)
    CHECK-NEXT: T3_g_float[iS6{i2}, iS7{i3}]#matmul_rhs
    CHECK-NEXT:    = SetEncoding( T1_g_float[iS2{i2}, iS3{i3}], layouts = (0: BA16a64b(n=0), 1: identity) )
    CHECK-NOT:  = linear(
    CHECK-NEXT: PostOnStream (HostUnit 3 on (0) | HostUnit 5 on (1), inputs=(T0_g_float[iS0{i0}, iS1{i1}], T3_g_float[iS6{i2}, iS7{i3}]#matmul_rhs), outputs=(T2_g_float[iS4{i0}, iS5{i2}]))
    CHECK:      HostUnit 3:
    CHECK:      = linear( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}, iS3{i3}]#matmul_rhs:BA16a64b(n=0) )
    CHECK:      HostUnit 5:
    CHECK:      = linear( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}, iS3{i3}]#matmul_rhs:identity )
  )")) << container.toString();
}

TEST(EncodedDataflowTest, OnlyGemmReadersReadThePackedInput) {
  // w feeds a linear (as its weight) and a relu: the relu keeps reading the
  // plain w, which panels would not feed.
  HostIrContainer container;
  {
    FusionGuard fg(&container);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
    TensorView* x = makeContigTensor(2);
    TensorView* w = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    w->setDeviceMesh(mesh);
    w->setEncoding(kRhs);
    container.addInput(x);
    container.addInput(w);
    TensorView* y = linear(x, w);
    TensorView* z = relu(w);
    for (TensorView* tv : {y, z}) {
      tv->setDeviceMesh(mesh);
      container.addOutput(tv);
      container.pushBackTopLevelExpr(tv->definition());
    }
  }
  specializeEncodings(container, targetsOf({"cpu:avx2", "cpu:avx2"}));
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK:      T4_g_float[iS8{i2}, iS9{i3}]#matmul_rhs
    CHECK-NEXT:    = SetEncoding( T1_g_float[iS2{i2}, iS3{i3}], layouts = (0: identity, 1: identity) )
    CHECK-NEXT: T2_g_float[iS4{i0}, iS5{i2}]
    CHECK-NEXT:    = linear( T0_g_float[iS0{i0}, iS1{i1}], T4_g_float[iS8{i2}, iS9{i3}]#matmul_rhs )
    CHECK-NEXT: T3_g_float[iS6{i2}, iS7{i3}]
    CHECK-NEXT:    = relu( T1_g_float[iS2{i2}, iS3{i3}] )
  )")) << container.toString();
}

TEST(EncodedDataflowTest, TopLevelLinearOnOneTargetStaysOneOp) {
  HostIrContainer container;
  buildTopLevelLinear(container, 2);
  specializeEncodings(container, targetsOf({"cpu:avx2", "cpu:neon"}));
  // avx2 and neon both resolve matmul_rhs to identity: nothing to clone.
  EXPECT_TRUE(launches(container).empty());
  EXPECT_TRUE(container.hostUnits().empty());
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK:      layouts = (0: identity, 1: identity) )
    CHECK-NEXT: T2_g_float[iS4{i0}, iS5{i2}]
    CHECK-NEXT:    = linear( T0_g_float[iS0{i0}, iS1{i1}], T3_g_float[iS6{i2}, iS7{i3}]#matmul_rhs )
  )")) << container.toString();
}

TEST(EncodedDataflowTest, FourDevicesOverTwoTargetsCloneTheLinearOnce) {
  HostIrContainer container;
  buildTopLevelLinear(container, 4);
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2", "cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(launches(container).size(), 1u);
  EXPECT_EQ(container.hostUnits().size(), 2u);
  EXPECT_NE(container.toString().find("PostOnStream (HostUnit 3 on (0 2) | HostUnit 5 on (1 3)"),
            std::string::npos)
      << container.toString();
}

// r = relu(b) in a HostUnit, r carrying matmul_rhs; y = linear(x, r) at
// the top level reads r as its weight (so N is r's axis 0).
struct ResultProgram {
  HostIrContainer container;
  PostOnStream* producer = nullptr;
  TensorView* r = nullptr;
};

void buildEncodedResult(ResultProgram& program, bool r_is_output) {
  FusionGuard fg(&program.container);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
  TensorView* x = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  program.r = makeContigTensor(2);
  for (TensorView* tv : {x, b, program.r}) {
    tv->setDeviceMesh(mesh);
  }
  program.r->setEncoding(kRhs);
  program.container.addInput(x);
  program.container.addInput(b);
  auto segment = std::make_unique<Fusion>();
  {
    FusionGuard inner(segment.get());
    TensorView* sb = makeContigTensor(2);
    segment->addInput(sb);
    TensorView* sr = relu(sb);
    sr->setEncoding(kRhs);
    segment->addOutput(sr);
  }
  auto* unit = IrBuilder::create<HostUnit>(std::move(segment));
  program.producer =
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{b}, std::vector<Val*>{program.r});
  program.container.pushBackTopLevelExpr(program.producer);
  if (r_is_output) {
    program.container.addOutput(program.r);
    return;
  }
  TensorView* y = linear(x, program.r);
  y->setDeviceMesh(mesh);
  program.container.pushBackTopLevelExpr(y->definition());
  program.container.addOutput(y);
}

TEST(EncodedDataflowTest, ResultIsWrittenInEachDevicesLayoutForItsReader) {
  ResultProgram program;
  buildEncodedResult(program, /*r_is_output=*/false);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  // The producer writes r in each device's panels, with N on axis 0
  // because the linear reads r as its weight; the linear reading r is
  // cloned the same way.
  ASSERT_EQ(program.producer->variants().size(), 2u);
  EXPECT_EQ(layoutOf(program.producer->hostUnitFor(0)->fusion()->outputs()[0]),
            Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(layoutOf(program.producer->hostUnitFor(1)->fusion()->outputs()[0]), Layout::identity());
  std::vector<PostOnStream*> posts = launches(program.container);
  ASSERT_EQ(posts.size(), 2u);
  PostOnStream* gemm = posts[1];
  ASSERT_EQ(gemm->variants().size(), 2u);
  EXPECT_EQ(layoutOf(gemm->hostUnitFor(0)->fusion()->inputs()[1]), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(layoutOf(gemm->hostUnitFor(1)->fusion()->inputs()[1]), Layout::identity());
  EXPECT_EQ(program.container.hostUnits().size(), 4u);
}

TEST(EncodedDataflowTest, EncodedProgramOutputIsReturnedPlain) {
  ResultProgram program;
  buildEncodedResult(program, /*r_is_output=*/true);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  EXPECT_EQ(layoutOf(program.r), Layout::identity());
  ASSERT_EQ(program.producer->variants().size(), 1u);
  EXPECT_EQ(layoutOf(program.producer->hostUnit()->fusion()->outputs()[0]), Layout::identity());
  EXPECT_EQ(program.container.hostUnits().size(), 1u);
}

TEST(EncodedDataflowTest, AResultAlsoReadByAPointwiseOpStaysPlain) {
  // r = relu(b) carries matmul_rhs and feeds linear(x, r) and exp(r): exp
  // cannot read panels, so r is written plain and nothing is cloned.
  HostIrContainer container;
  TensorView* r = nullptr;
  {
    FusionGuard fg(&container);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
    TensorView* x = makeContigTensor(2);
    TensorView* b = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    b->setDeviceMesh(mesh);
    container.addInput(x);
    container.addInput(b);
    r = relu(b);
    r->setEncoding(kRhs);
    TensorView* y = linear(x, r);
    TensorView* z = exp(r);
    for (TensorView* tv : {r, y, z}) {
      tv->setDeviceMesh(mesh);
      container.pushBackTopLevelExpr(tv->definition());
    }
    container.addOutput(y);
    container.addOutput(z);
  }
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  EXPECT_EQ(layoutOf(r), Layout::identity());
  EXPECT_TRUE(launches(container).empty());
  EXPECT_TRUE(container.hostUnits().empty());
}

// w lives on device 0 only (encoded program input); `type` brings it to
// (0 1), where `reader` reads it: a top-level linear or a HostUnit.
struct CollectiveProgram {
  HostIrContainer container;
  Communication* comm = nullptr;
  TensorView* received = nullptr;
  PostOnStream* post = nullptr;
};

void buildCollective(CollectiveProgram& program, CommunicationType type, bool w_on_both,
                     bool hostunit_reader) {
  FusionGuard fg(&program.container);
  DeviceMesh both({0, 1});
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  program.received = makeContigTensor(2);
  x->setDeviceMesh(both);
  w->setDeviceMesh(w_on_both ? both : DeviceMesh({0}));
  w->setEncoding(kRhs);
  program.received->setDeviceMesh(both);
  program.container.addInput(x);
  program.container.addInput(w);
  CommunicationParams params;
  params.type = type;
  params.team = {0, 1};
  if (hasRoot(type)) {
    params.root = 0;
  }
  if (isReduction(type)) {
    params.reduce_op = ReduceOp::Sum;
  }
  program.comm = IrBuilder::create<Communication>(w, program.received, params);
  program.container.pushBackTopLevelExpr(program.comm);
  program.container.pushBackTopLevelExpr(IrBuilder::create<Wait>(program.comm));
  TensorView* y = nullptr;
  if (hostunit_reader) {
    y = makeContigTensor(2);
    y->setDeviceMesh(both);
    auto segment = std::make_unique<Fusion>();
    {
      FusionGuard inner(segment.get());
      TensorView* sx = makeContigTensor(2);
      TensorView* sw = makeContigTensor(2);
      segment->addInput(sx);
      segment->addInput(sw);
      segment->addOutput(relu(linear(sx, sw)));
    }
    auto* unit = IrBuilder::create<HostUnit>(std::move(segment));
    program.post = IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{x, program.received},
                                                   std::vector<Val*>{y});
    program.container.pushBackTopLevelExpr(program.post);
  } else {
    y = linear(x, program.received);
    y->setDeviceMesh(both);
    program.container.pushBackTopLevelExpr(y->definition());
  }
  program.container.addOutput(y);
}

TEST(EncodedDataflowTest, BroadcastMovesTheRootsPanels) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Broadcast, false, /*hostunit_reader=*/false);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  // The receiver holds the avx512 root's panels: the received tensor's
  // encoding is resolved to them on every device, so the linear reads one
  // layout everywhere and stays one op.
  EXPECT_EQ(layoutOf(program.received), Layout::dnnlBlocked(64, 0));
  EXPECT_TRUE(launches(program.container).empty());
  EXPECT_TRUE(irCheck(program.container.toString(), R"(
    CHECK:      = SetEncoding( T1_g_float[iS2{i2}, iS3{i3}], layouts = (0: BA16a64b(n=0)) )
    CHECK-NEXT: Communication 3 (type=Broadcast, team=(0 1), root=0,
    CHECK-NEXT:      input=T4_g_float[iS8{i2}, iS9{i3}]#matmul_rhs, output=T2_l_float[iS4{i4}, iS5{i5}]#matmul_rhs:BA16a64b(n=0))
    CHECK-NEXT: Wait Communication 3
    CHECK-NEXT: T3_g_float[iS6{i0}, iS7{i4}]
    CHECK-NEXT:    = linear( T0_g_float[iS0{i0}, iS1{i1}], T2_l_float[iS4{i4}, iS5{i5}]#matmul_rhs:BA16a64b(n=0) )
  )")) << program.container.toString();
}

TEST(EncodedDataflowTest, TheWaitFollowsTheCollectiveThatReadsThePackedInput) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Broadcast, false, false);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  // The collective was rebuilt to read the SetEncoding's output; its Wait
  // must wait for the rebuilt one, the one the program posts.
  std::vector<Expr*> top(program.container.topLevel().begin(), program.container.topLevel().end());
  ASSERT_EQ(top.size(), 4u);
  auto* comm = top[1]->as<Communication>();
  EXPECT_EQ(comm->in()->definition(), top[0]);
  EXPECT_EQ(top[2]->as<Wait>()->communication(), comm);
}

TEST(EncodedDataflowTest, TopLevelPointwiseOpWritingAnEncodedResultIsCloned) {
  // r = relu(b) and y = linear(x, r) both at the top level (as the host
  // lowering emits a group with a linear), r carrying matmul_rhs: relu
  // becomes a launch whose copies write each device's panels, and the linear
  // one whose copies read them.
  HostIrContainer container;
  {
    FusionGuard fg(&container);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
    TensorView* x = makeContigTensor(2);
    TensorView* b = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    b->setDeviceMesh(mesh);
    container.addInput(x);
    container.addInput(b);
    TensorView* r = relu(b);
    r->setDeviceMesh(mesh);
    r->setEncoding(kRhs);
    TensorView* y = linear(x, r);
    y->setDeviceMesh(mesh);
    container.addOutput(y);
    container.pushBackTopLevelExpr(r->definition());
    container.pushBackTopLevelExpr(y->definition());
  }
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  std::vector<PostOnStream*> posts = launches(container);
  ASSERT_EQ(posts.size(), 2u);
  ASSERT_EQ(posts[0]->variants().size(), 2u);
  EXPECT_EQ(layoutOf(posts[0]->hostUnitFor(0)->fusion()->outputs()[0]), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(layoutOf(posts[0]->hostUnitFor(1)->fusion()->outputs()[0]), Layout::identity());
  ASSERT_EQ(posts[1]->variants().size(), 2u);
  EXPECT_EQ(layoutOf(posts[1]->hostUnitFor(1)->fusion()->inputs()[1]), Layout::identity());
  EXPECT_EQ(container.hostUnits().size(), 4u);
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK:      PostOnStream (HostUnit 2 on (0) | HostUnit 6 on (1), inputs=(T1_g_float[iS2{i2}, iS3{i3}]), outputs=(T2_l_float[iS4{i2}, iS5{i3}]#matmul_rhs))
    CHECK-NEXT: PostOnStream (HostUnit 4 on (0) | HostUnit 7 on (1), inputs=(T0_g_float[iS0{i0}, iS1{i1}], T2_l_float[iS4{i2}, iS5{i3}]#matmul_rhs), outputs=(T3_g_float[iS6{i0}, iS7{i2}]))
    CHECK:      HostUnit 2:
    CHECK:      exprs:
    CHECK-NEXT:   T1_g_float[iS2{i0}, iS3{i1}]#matmul_rhs:BA16a64b(n=0)
    CHECK-NEXT:      = relu( T0_g_float[iS0{i0}, iS1{i1}] )
    CHECK:      HostUnit 6:
    CHECK:      exprs:
    CHECK-NEXT:   T1_g_float[iS2{i0}, iS3{i1}]#matmul_rhs:identity
    CHECK-NEXT:      = relu( T0_g_float[iS0{i0}, iS1{i1}] )
  )")) << container.toString();
}

TEST(EncodedDataflowTest, ReceiverOfAnotherTargetRunsTheVariantOfTheProducersLayout) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Broadcast, false, /*hostunit_reader=*/true);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  // Both devices read the avx512 panels and write plain: one executable.
  ASSERT_EQ(program.post->variants().size(), 1u);
  EXPECT_EQ(program.post->variants()[0].devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(program.container.hostUnits().size(), 1u);
  EXPECT_EQ(layoutOf(program.post->hostUnitFor(1)->fusion()->inputs()[1]),
            Layout::dnnlBlocked(64, 0));
}

TEST(EncodedDataflowTest, AllreduceOfAgreeingSendersKeepsTheirLayout) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Allreduce, true, false);
  specializeEncodings(program.container, targetsOf({"cpu:avx2", "cpu:neon"}));
  EXPECT_EQ(layoutOf(program.received), Layout::identity());
}

// Senders holding w in BA16a64b and plain cannot add their bytes up: the
// Allreduce reads the plain w (its packing is dropped), and each receiver
// packs the sum in its own panels for its linear.
TEST(EncodedDataflowTest, AllreduceOfDisagreeingSendersSendsPlainAndRepacks) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Allreduce, true, false);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  EXPECT_TRUE(irCheck(program.container.toString(), R"(
    CHECK-NOT:  SetEncoding( T1_g_float
    CHECK:      Communication 6 (type=Allreduce, team=(0 1), reduce_op=sum, input=T1_g_float[iS2{i2}, iS3{i3}], output=T2_l_float[iS4{i4}, iS5{i5}])
    CHECK-NEXT: Wait Communication 6
    CHECK-NEXT: T5_l_float[iS10{i4}, iS11{i5}]#matmul_rhs
    CHECK-NEXT:    = SetEncoding( T2_l_float[iS4{i4}, iS5{i5}], layouts = (0: BA16a64b(n=0), 1: identity) )
    CHECK-NEXT: PostOnStream (HostUnit 10 on (0) | HostUnit 12 on (1), inputs=(T0_g_float[iS0{i0}, iS1{i1}], T5_l_float[iS10{i4}, iS11{i5}]#matmul_rhs), outputs=(T3_g_float[iS6{i0}, iS7{i4}]))
    CHECK:      HostUnit 10:
    CHECK:         = linear( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}, iS3{i3}]#matmul_rhs:BA16a64b(n=0) )
    CHECK:      HostUnit 12:
    CHECK:         = linear( T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i2}, iS3{i3}]#matmul_rhs:identity )
  )")) << program.container.toString();
}

// An Allgather concatenates along an axis, which panels do not allow, even
// when every sender agrees: plain through the collective, packed after.
TEST(EncodedDataflowTest, AllgatherOfPanelsSendsPlainAndRepacks) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Allgather, true, false);
  specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx512"}));
  EXPECT_TRUE(irCheck(program.container.toString(), R"(
    CHECK-NOT:  SetEncoding( T1_g_float
    CHECK:      Communication 6 (type=Allgather, team=(0 1), input=T1_g_float[iS2{i2}, iS3{i3}], output=T2_l_float[iS4{i4}, iS5{i5}])
    CHECK-NEXT: Wait Communication 6
    CHECK-NEXT: T5_l_float[iS10{i4}, iS11{i5}]#matmul_rhs
    CHECK-NEXT:    = SetEncoding( T2_l_float[iS4{i4}, iS5{i5}], layouts = (0: BA16a64b(n=0), 1: BA16a64b(n=0)) )
    CHECK-NEXT: T3_g_float[iS6{i0}, iS7{i4}]
    CHECK-NEXT:    = linear( T0_g_float[iS0{i0}, iS1{i1}], T5_l_float[iS10{i4}, iS11{i5}]#matmul_rhs )
  )")) << program.container.toString();
}

// w (encoded, on both devices) is allreduced; the sum is read by `relu`
// only (not in panels) and returned.
TEST(EncodedDataflowTest, ReceivedTensorWithoutAPanelReaderStaysPlain) {
  HostIrContainer container;
  {
    FusionGuard fg(&container);
    DeviceMesh both({0, 1});
    TensorView* w = makeContigTensor(2);
    TensorView* received = makeContigTensor(2);
    w->setDeviceMesh(both);
    w->setEncoding(kRhs);
    received->setDeviceMesh(both);
    container.addInput(w);
    CommunicationParams params;
    params.type = CommunicationType::Allreduce;
    params.team = {0, 1};
    params.reduce_op = ReduceOp::Sum;
    auto* comm = IrBuilder::create<Communication>(w, received, params);
    container.pushBackTopLevelExpr(comm);
    container.pushBackTopLevelExpr(IrBuilder::create<Wait>(comm));
    TensorView* z = relu(received);
    z->setDeviceMesh(both);
    container.pushBackTopLevelExpr(z->definition());
    container.addOutput(z);
  }
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK-NOT:  SetEncoding
    CHECK:      Communication 6 (type=Allreduce, team=(0 1), reduce_op=sum,
    CHECK-NEXT:      input=T0_g_float[iS0{i0}, iS1{i1}], output=T1_l_float[iS2{i2}, iS3{i3}]#matmul_rhs:identity)
    CHECK-NEXT: Wait Communication 6
    CHECK-NEXT: T2_g_float[iS4{i2}, iS5{i3}]
    CHECK-NEXT:    = relu( T1_l_float[iS2{i2}, iS3{i3}]#matmul_rhs:identity )
    CHECK-NOT:  SetEncoding
  )")) << container.toString();
}

// r = relu(b) carries matmul_rhs and is read by linear(x, r) on each device
// (in its own panels) and allreduced: each device unpacks its panels before
// the Allreduce.
TEST(EncodedDataflowTest, EncodedResultIsUnpackedBeforeAnAllreduceOfDisagreeingSenders) {
  HostIrContainer container;
  {
    FusionGuard fg(&container);
    DeviceMesh both({0, 1});
    TensorView* x = makeContigTensor(2);
    TensorView* b = makeContigTensor(2);
    TensorView* received = makeContigTensor(2);
    x->setDeviceMesh(both);
    b->setDeviceMesh(both);
    received->setDeviceMesh(both);
    container.addInput(x);
    container.addInput(b);
    TensorView* r = relu(b);
    r->setDeviceMesh(both);
    r->setEncoding(kRhs);
    container.pushBackTopLevelExpr(r->definition());
    TensorView* y = linear(x, r);
    y->setDeviceMesh(both);
    container.pushBackTopLevelExpr(y->definition());
    CommunicationParams params;
    params.type = CommunicationType::Allreduce;
    params.team = {0, 1};
    params.reduce_op = ReduceOp::Sum;
    auto* comm = IrBuilder::create<Communication>(r, received, params);
    container.pushBackTopLevelExpr(comm);
    container.pushBackTopLevelExpr(IrBuilder::create<Wait>(comm));
    TensorView* z = linear(x, received);
    z->setDeviceMesh(both);
    container.pushBackTopLevelExpr(z->definition());
    container.addOutput(y);
    container.addOutput(z);
  }
  specializeEncodings(container, targetsOf({"cpu:avx512", "cpu:avx2"}));
  EXPECT_TRUE(irCheck(container.toString(), R"(
    CHECK:      PostOnStream (HostUnit 10 on (0) | HostUnit 16 on (1), inputs=(T1_g_float[iS2{i2}, iS3{i3}]), outputs=(T3_l_float[iS6{i2}, iS7{i3}]#matmul_rhs))
    CHECK-NEXT: PostOnStream (HostUnit 12 on (0) | HostUnit 17 on (1), inputs=(T0_g_float[iS0{i0}, iS1{i1}], T3_l_float[iS6{i2}, iS7{i3}]#matmul_rhs), outputs=(T4_g_float[iS8{i0}, iS9{i2}]))
    CHECK-NEXT: T6_l_float[iS12{i2}, iS13{i3}]
    CHECK-NEXT:    = UnsetEncoding( T3_l_float[iS6{i2}, iS7{i3}]#matmul_rhs, layouts = (0: BA16a64b(n=0), 1: identity) )
    CHECK-NEXT: Communication 6 (type=Allreduce, team=(0 1), reduce_op=sum, input=T6_l_float[iS12{i2}, iS13{i3}], output=T2_l_float[iS4{i4}, iS5{i5}])
    CHECK-NEXT: Wait Communication 6
    CHECK-NEXT: T7_l_float[iS14{i4}, iS15{i5}]#matmul_rhs
    CHECK-NEXT:    = SetEncoding( T2_l_float[iS4{i4}, iS5{i5}], layouts = (0: BA16a64b(n=0), 1: identity) )
    CHECK-NEXT: PostOnStream (HostUnit 14 on (0) | HostUnit 18 on (1), inputs=(T0_g_float[iS0{i0}, iS1{i1}], T7_l_float[iS14{i4}, iS15{i5}]#matmul_rhs), outputs=(T5_g_float[iS10{i0}, iS11{i4}]))
  )")) << container.toString();
}

// Every collective that cannot carry the senders' panels (they disagree, or
// it cuts or concatenates) reads the plain w and packs after its Wait.
TEST(EncodedDataflowTest, EveryCollectiveThatCannotCarryPanelsSendsPlain) {
  for (CommunicationType type : {CommunicationType::Reduce, CommunicationType::Gather,
                                 CommunicationType::Scatter, CommunicationType::Allgather}) {
    CollectiveProgram program;
    buildCollective(program, type, true, false);
    specializeEncodings(program.container, targetsOf({"cpu:avx512", "cpu:avx2"}));
    const std::string text = program.container.toString();
    EXPECT_TRUE(irCheck(text, R"(
      CHECK-NOT:  SetEncoding( T1_g_float
      CHECK:      input=T1_g_float[iS2{i2}, iS3{i3}], output=T2_l_float[iS4{i4}, iS5{i5}])
      CHECK-NEXT: Wait Communication
      CHECK-NEXT: T5_l_float[iS10{i4}, iS11{i5}]#matmul_rhs
      CHECK-NEXT:    = SetEncoding( T2_l_float[iS4{i4}, iS5{i5}], layouts = (0: BA16a64b(n=0), 1: identity) )
      CHECK-NEXT: PostOnStream (HostUnit
    )")) << text;
  }
}

TEST(EncodedDataflowTest, AllgatherOfIdentityLayoutsIsFine) {
  CollectiveProgram program;
  buildCollective(program, CommunicationType::Allgather, true, false);
  specializeEncodings(program.container, targetsOf({"cpu:generic", "cpu:generic"}));
  EXPECT_EQ(layoutOf(program.received), Layout::identity());
}

}  // namespace
}  // namespace hostir
