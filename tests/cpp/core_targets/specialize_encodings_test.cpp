// The specialize_encodings pass on hand-built host programs (no ATen):
// the cases of IREE's SpecializeEncodings tests, on hostir's IR.
#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {
namespace {

const Encoding kRhs{EncodingKind::MatmulRhs, std::nullopt};

DeviceTargets targets(std::initializer_list<const char*> names) {
  DeviceTargets result;
  int64_t device = 0;
  for (const char* name : names) {
    result[device++] = parseTarget(name);
  }
  return result;
}

// y = linear(x, w): w carries matmul_rhs when `encode_w`, y when `encode_y`.
std::unique_ptr<Fusion> linearFusion(bool encode_w, bool encode_y,
                                     std::optional<Encoding> w_encoding = kRhs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  if (encode_w) {
    w->setEncoding(w_encoding);
  }
  fusion->addInput(x);
  fusion->addInput(w);
  TensorView* y = linear(x, w);
  if (encode_y) {
    y->setEncoding(kRhs);
  }
  fusion->addOutput(y);
  return fusion;
}

struct Program {
  HostIrContainer container;
  PostOnStream* post = nullptr;
};

// PostOnStream(HostUnit(linear), inputs=(x, w), outputs=(y)) on a mesh of `devices`.
void buildLinearProgram(Program& program, int64_t devices, bool encode_w, bool encode_y) {
  FusionGuard fg(&program.container);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  for (TensorView* tv : {x, w, y}) {
    tv->setDeviceMesh(mesh);
  }
  program.container.addInput(x);
  program.container.addInput(w);
  program.container.addOutput(y);
  auto* unit = IrBuilder::create<HostUnit>(linearFusion(encode_w, encode_y));
  program.post =
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{x, w}, std::vector<Val*>{y});
  program.container.pushBackTopLevelExpr(program.post);
}

Layout inputLayout(const HostUnit* unit, size_t i) {
  const auto* tv = unit->fusion()->inputs().at(i)->as<TensorView>();
  EXPECT_TRUE(tv->hasEncoding() && tv->encoding()->isResolved()) << tv->toInlineString();
  return tv->encoding()->resolved.value_or(Layout::identity());
}

Layout outputLayout(const HostUnit* unit, size_t i) {
  const auto* tv = unit->fusion()->outputs().at(i)->as<TensorView>();
  EXPECT_TRUE(tv->hasEncoding() && tv->encoding()->isResolved()) << tv->toInlineString();
  return tv->encoding()->resolved.value_or(Layout::identity());
}

TEST(SpecializeEncodingsTest, SameTargetOnTwoDevicesKeepsOneExecutable) {
  Program program;
  buildLinearProgram(program, 2, /*encode_w=*/true, /*encode_y=*/true);
  specializeEncodings(program.container, targets({"cpu:avx512", "cpu:avx512"}));
  // No copy exists: the container still holds exactly one HostUnit.
  ASSERT_EQ(program.container.hostUnits().size(), 1u);
  ASSERT_EQ(program.post->variants().size(), 1u);
  EXPECT_EQ(program.post->variants()[0].devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(inputLayout(program.post->hostUnit(), 1), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(outputLayout(program.post->hostUnit(), 0), Layout::dnnlBlocked(64, 1));
  EXPECT_EQ(program.post->hostUnitFor(0), program.post->hostUnitFor(1));
  EXPECT_NE(program.container.toString().find("PostOnStream (HostUnit 0 on (0 1), inputs="),
            std::string::npos)
      << program.container.toString();
}

TEST(SpecializeEncodingsTest, TwoTargetsGiveTwoExecutablesEachWithItsLayouts) {
  Program program;
  buildLinearProgram(program, 2, true, true);
  specializeEncodings(program.container, targets({"cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(program.container.hostUnits().size(), 2u);
  ASSERT_EQ(program.post->variants().size(), 2u);
  HostUnit* on0 = program.post->hostUnitFor(0);
  HostUnit* on1 = program.post->hostUnitFor(1);
  EXPECT_NE(on0, on1);
  // Each reads its producer's layout (the inputs live on the device itself)
  // and writes its own.
  EXPECT_EQ(inputLayout(on0, 1), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(outputLayout(on0, 0), Layout::dnnlBlocked(64, 1));
  EXPECT_EQ(inputLayout(on1, 1), Layout::identity());
  EXPECT_EQ(outputLayout(on1, 0), Layout::identity());
  // x carries no encoding: identity in both, and not rewritten.
  EXPECT_FALSE(on1->fusion()->inputs()[0]->as<TensorView>()->hasEncoding());
  std::string printed = program.container.toString();
  EXPECT_NE(printed.find(
                "targets: 0=cpu:avx512 (512-bit vectors, matmul_rhs BA16a64b) 1=cpu:avx2 (256-bit "
                "vectors, matmul_rhs plain)"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("PostOnStream (HostUnit 0 on (0) | HostUnit 2 on (1), inputs="),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("#matmul_rhs:identity"), std::string::npos) << printed;
  EXPECT_NE(printed.find("#matmul_rhs:BA16a64b(n=0)"), std::string::npos) << printed;
}

TEST(SpecializeEncodingsTest, FourDevicesOverTwoTargetsGiveExactlyTwo) {
  Program program;
  buildLinearProgram(program, 4, true, true);
  specializeEncodings(program.container,
                      targets({"cpu:avx512", "cpu:avx2", "cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(program.container.hostUnits().size(), 2u);
  ASSERT_EQ(program.post->variants().size(), 2u);
  EXPECT_EQ(program.post->variants()[0].devices, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(program.post->variants()[1].devices, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(program.post->hostUnitFor(2), program.post->hostUnitFor(0));
  EXPECT_EQ(program.post->hostUnitFor(3), program.post->hostUnitFor(1));
  EXPECT_EQ(inputLayout(program.post->hostUnitFor(3), 1), Layout::identity());
}

TEST(SpecializeEncodingsTest, ManyDevicesFormClassesNotPairs) {
  // 64 devices over 3 targets: 3 executables.
  Program program;
  buildLinearProgram(program, 64, true, false);
  DeviceTargets many;
  const char* names[] = {"cpu:avx512", "cpu:avx2", "cpu:neon"};
  for (int64_t d = 0; d < 64; ++d) {
    many[d] = parseTarget(names[d % 3]);
  }
  specializeEncodings(program.container, many);
  EXPECT_EQ(program.container.hostUnits().size(), 2u)
      << "avx2 and neon both resolve to identity (oneDNN keeps their weights plain): one class";
  ASSERT_EQ(program.post->variants().size(), 2u);
  EXPECT_EQ(program.post->variants()[0].devices.size(), 22u);
  EXPECT_EQ(program.post->variants()[1].devices.size(), 42u);
}

// A produces t on device 0 (avx512); a Broadcast from 0 brings it to (0 1);
// B reads it there and writes an encoded result.
struct CrossTargetProgram {
  HostIrContainer container;
  PostOnStream* consumer = nullptr;
};

void buildCrossTarget(CrossTargetProgram& program, bool tie_output) {
  FusionGuard fg(&program.container);
  TensorView* x = makeContigTensor(2);
  TensorView* t = makeContigTensor(2);
  TensorView* t2 = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  x->setDeviceMesh(DeviceMesh({0, 1}));
  t->setDeviceMesh(DeviceMesh({0}));
  t2->setDeviceMesh(DeviceMesh({0, 1}));
  y->setDeviceMesh(DeviceMesh({0, 1}));
  program.container.addInput(x);
  program.container.addInput(t);
  CommunicationParams params;
  params.type = CommunicationType::Broadcast;
  params.team = {0, 1};
  params.root = 0;
  program.container.pushBackTopLevelExpr(IrBuilder::create<Communication>(t, t2, params));
  auto* unit = IrBuilder::create<HostUnit>(linearFusion(true, !tie_output));
  Val* out = tie_output ? static_cast<Val*>(t2) : y;
  if (tie_output) {
    // The segment writes its result into its encoded operand's buffer.
    unit->fusion()->outputs()[0]->as<TensorView>()->setEncoding(kRhs);
  }
  program.consumer =
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{x, t2}, std::vector<Val*>{out});
  program.container.pushBackTopLevelExpr(program.consumer);
  program.container.addOutput(out);
}

TEST(SpecializeEncodingsTest, OperandFromAnotherTargetKeysTheMixedTuple) {
  CrossTargetProgram program;
  buildCrossTarget(program, /*tie_output=*/false);
  specializeEncodings(program.container, targets({"cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(program.consumer->variants().size(), 2u);
  HostUnit* on1 = program.consumer->hostUnitFor(1);
  // Device 1 reads the avx512 producer's BA16a64b, writes its own (plain) layout.
  EXPECT_EQ(inputLayout(on1, 1), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(outputLayout(on1, 0), Layout::identity());
  HostUnit* on0 = program.consumer->hostUnitFor(0);
  EXPECT_EQ(inputLayout(on0, 1), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(outputLayout(on0, 0), Layout::dnnlBlocked(64, 1));
}

TEST(SpecializeEncodingsTest, TiedOperandIsKeyedOnce) {
  CrossTargetProgram program;
  buildCrossTarget(program, /*tie_output=*/true);
  specializeEncodings(program.container, targets({"cpu:avx512", "cpu:avx2"}));
  // The result aliases the operand, which both devices hold in the
  // producer's layout: one key, one executable.
  ASSERT_EQ(program.container.hostUnits().size(), 1u);
  ASSERT_EQ(program.consumer->variants().size(), 1u);
  EXPECT_EQ(program.consumer->variants()[0].devices, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(inputLayout(program.consumer->hostUnit(), 1), Layout::dnnlBlocked(64, 0));
}

TEST(SpecializeEncodingsTest, AlreadyResolvedEncodingsAreLeftAlone) {
  Program program;
  {
    FusionGuard fg(&program.container);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
    TensorView* x = makeContigTensor(2);
    TensorView* w = makeContigTensor(2);
    TensorView* y = makeContigTensor(2);
    for (TensorView* tv : {x, w, y}) {
      tv->setDeviceMesh(mesh);
    }
    program.container.addInput(x);
    program.container.addInput(w);
    auto* unit = IrBuilder::create<HostUnit>(
        linearFusion(true, false, Encoding{EncodingKind::MatmulRhs, Layout::dnnlBlocked(32, 0)}));
    program.post =
        IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{x, w}, std::vector<Val*>{y});
    program.container.pushBackTopLevelExpr(program.post);
  }
  specializeEncodings(program.container, targets({"cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(program.container.hostUnits().size(), 1u);
  EXPECT_EQ(inputLayout(program.post->hostUnit(), 1), Layout::dnnlBlocked(32, 0));
}

TEST(SpecializeEncodingsTest, IdentityFallback) {
  // generic has no resolver: identity; no encoding: identity too, so a
  // generic device and a device without encodings agree.
  Program program;
  buildLinearProgram(program, 2, true, true);
  specializeEncodings(program.container, targets({"cpu:generic", "cpu:generic"}));
  ASSERT_EQ(program.container.hostUnits().size(), 1u);
  EXPECT_EQ(inputLayout(program.post->hostUnit(), 1), Layout::identity());
  EXPECT_NE(program.container.toString().find("#matmul_rhs:identity"), std::string::npos);

  // matmul_lhs has no resolver on avx512/avx2: identity everywhere, one copy.
  Program lhs;
  buildLinearProgram(lhs, 2, true, false);
  lhs.post->hostUnit()->fusion()->inputs()[1]->as<TensorView>()->setEncoding(
      Encoding{EncodingKind::MatmulLhs, std::nullopt});
  specializeEncodings(lhs.container, targets({"cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(lhs.container.hostUnits().size(), 1u);
  EXPECT_EQ(inputLayout(lhs.post->hostUnit(), 1), Layout::identity());

  // No encodings at all: the pass leaves the launch unspecialized.
  Program plain;
  buildLinearProgram(plain, 2, false, false);
  specializeEncodings(plain.container, targets({"cpu:avx512", "cpu:avx2"}));
  EXPECT_TRUE(plain.post->variants().empty());
  EXPECT_EQ(plain.container.hostUnits().size(), 1u);
}

TEST(SpecializeEncodingsTest, UnresolvableEncodingNamesTensorAndTarget) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* bad = nullptr;
  {
    FusionGuard fg(fusion.get());
    bad = makeContigTensor(3, DataType::Int64);
    bad->setEncoding(kRhs);
    fusion->addInput(bad);
    fusion->addOutput(set(bad));
  }
  HostIrContainer container;
  {
    FusionGuard fg(&container);
    TensorView* in = makeContigTensor(3, DataType::Int64);
    TensorView* out = makeContigTensor(3, DataType::Int64);
    in->setDeviceMesh(DeviceMesh({0, 1}));
    out->setDeviceMesh(DeviceMesh({0, 1}));
    container.addInput(in);
    auto* unit = IrBuilder::create<HostUnit>(std::move(fusion));
    container.pushBackTopLevelExpr(
        IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in}, std::vector<Val*>{out}));
  }
  EXPECT_HOSTIR_ERROR(
      specializeEncodings(container, targets({"cpu:avx512", "cpu:avx2"})),
      "cannot resolve encoding matmul_rhs of T0_g_int64[iS0{i0}, iS1{i1}, iS2{i2}]#matmul_rhs",
      "cpu:avx512", "give a 2-D float tensor");
}

TEST(SpecializeEncodingsTest, EncodedProgramInputGetsASetEncodingPerDevice) {
  HostIrContainer container;
  TensorView* w = nullptr;
  LinearOp* gemm = nullptr;
  {
    FusionGuard fg(&container);
    DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
    TensorView* x = makeContigTensor(2);
    w = makeContigTensor(2);
    x->setDeviceMesh(mesh);
    w->setDeviceMesh(mesh);
    w->setEncoding(kRhs);
    container.addInput(x);
    container.addInput(w);
    TensorView* y = linear(x, w);
    y->setDeviceMesh(mesh);
    container.addOutput(y);
    gemm = y->definition()->as<LinearOp>();
    container.pushBackTopLevelExpr(gemm);
  }
  specializeEncodings(container, targets({"cpu:avx512", "cpu:avx2"}));
  ASSERT_EQ(container.topLevel().size(), 2u);
  auto* set_encoding = container.topLevel().front()->as<SetEncoding>();
  EXPECT_EQ(set_encoding->in(), w);
  EXPECT_FALSE(w->hasEncoding())
      << "the program input is plain; its packed copy carries the request";
  EXPECT_EQ(set_encoding->layoutFor(0), Layout::dnnlBlocked(64, 0));
  EXPECT_EQ(set_encoding->layoutFor(1), Layout::identity());
  // The devices read the packed weight in different layouts: the linear
  // became a launch with one executable per target (encoded_dataflow_test).
  auto* reader = container.topLevel().back()->as<PostOnStream>();
  EXPECT_EQ(reader->inputs()[1], set_encoding->out());
  std::string printed = container.toString();
  EXPECT_NE(
      printed.find("  T3_g_float[iS6{i2}, iS7{i3}]#matmul_rhs\n"
                   "     = SetEncoding( T1_g_float[iS2{i2}, iS3{i3}], layouts = (0: "
                   "BA16a64b(n=0), 1: identity) )\n"
                   "  PostOnStream (HostUnit 3 on (0) | HostUnit 5 on (1), inputs=(T0_g_float["
                   "iS0{i0}, iS1{i1}], T3_g_float[iS6{i2}, iS7{i3}]#matmul_rhs), "
                   "outputs=(T2_g_float[iS4{i0}, iS5{i2}]))\n"),
      std::string::npos)
      << printed;
}

}  // namespace
}  // namespace hostir
