// Targets at run time and oneDNN's blocked layouts read by the GEMMs,
// checked against plain ATen.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "common/scoped_env.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {
namespace {

const Encoding kRhs{EncodingKind::MatmulRhs, std::nullopt};

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

const Layout kWeightBlocked = Layout::dnnlBlocked(64, /*n_axis=*/0);

TEST(PackedGemmTest, PackUnpackRoundTrip) {
  at::Tensor w = at::randn({70, 7});  // [N, K], neither a multiple of its block
  at::Tensor packed = packMatmulRhs(w, kWeightBlocked);
  // BA16a64b: [ceilDiv(N, 64), K rounded up to 16, 64], zero padded.
  EXPECT_EQ(packed.sizes(), at::IntArrayRef({2, 16, 64}));
  EXPECT_TRUE(at::equal(packed[1].narrow(0, 0, 7).select(1, 2), w[66])) << "column 66 = W row 66";
  EXPECT_EQ(packed[1].narrow(1, 6, 58).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(packed[0].narrow(0, 7, 9).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(plainSizesOf(packed), (std::vector<int64_t>{70, 7}));
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {70, 7}), w));
  at::Tensor b = at::randn({7, 33});  // [K, N]
  const Layout rhs = Layout::dnnlBlocked(32, /*n_axis=*/1);
  EXPECT_TRUE(at::equal(unpackMatmulRhs(packMatmulRhs(b, rhs), rhs, {7, 33}), b));
}

TEST(PackedGemmTest, BadOperandsAreErrors) {
  std::string message = errorOf([] { packMatmulRhs(at::randn({4, 4, 4}), kWeightBlocked); });
  EXPECT_EQ(message.rfind("packing a GEMM right operand needs a 2-D tensor", 0), 0u) << message;
  message = errorOf([] { packMatmulRhs(at::randn({4, 4}, at::kDouble), kWeightBlocked); });
  EXPECT_EQ(message.rfind("oneDNN's GEMMs here take float32, got Double", 0), 0u) << message;
  message = errorOf([] { packMatmulRhs(at::randn({4, 4}), Layout::dnnlBlocked(8, 0)); });
  EXPECT_EQ(message.rfind("layout BA16a8b(n=0) has no oneDNN format tag", 0), 0u) << message;
  message = errorOf([] {
    at::Tensor out = at::empty({3, 70});
    packedMatmulOut(out, at::randn({3, 9}), packMatmulRhs(at::randn({70, 7}), kWeightBlocked),
                    kWeightBlocked);
  });
  EXPECT_EQ(message.rfind("packed GEMM: [3, 9] @ B -> [3, 70] needs B with K = 9 but it was "
                          "packed with K = 7",
                          0),
            0u)
      << message;
  message = errorOf([] {
    at::Tensor out = at::empty({3, 70});
    packedMatmulOut(out, at::randn({3, 20}), packMatmulRhs(at::randn({70, 7}), kWeightBlocked),
                    kWeightBlocked);
  });
  EXPECT_EQ(message.rfind("packed GEMM: [3, 20] @ B -> [3, 70] needs B packed in sizes", 0), 0u)
      << message;
}

// FusionChecks runs every op once on meta tensors: the packed GEMM checks
// the shapes and computes nothing.
TEST(PackedGemmTest, MetaTensorsAreShapeChecksOnly) {
  auto meta = at::TensorOptions().device(at::kMeta);
  at::Tensor out = at::empty({3, 70}, meta);
  EXPECT_NO_THROW(
      packedMatmulOut(out, at::empty({3, 7}, meta), at::empty({2, 16, 64}, meta), kWeightBlocked));
  std::string message = errorOf([&] {
    packedMatmulOut(out, at::empty({3, 40}, meta), at::empty({2, 16, 64}, meta), kWeightBlocked);
  });
  EXPECT_EQ(message.rfind("packed GEMM: [3, 40] @ B -> [3, 70] needs B packed in sizes", 0), 0u)
      << message;
}

// The epilogues oneDNN runs as post-ops, against the ATen ops they replace.
TEST(PackedGemmTest, EpiloguesEqualTheAtenOps) {
  at::Tensor x = at::randn({2, 5, 24});
  at::Tensor w = at::randn({37, 24});
  at::Tensor bias = at::randn({37});
  at::Tensor residual = at::randn({2, 5, 37});
  at::Tensor packed = packMatmulRhs(w, kWeightBlocked);
  MatmulEpilogue all{bias, MatmulActivation::Gelu, residual};
  at::Tensor out = at::empty({2, 5, 37});
  dnnlMatmulOut(out, x, packed, kWeightBlocked, all);
  EXPECT_TRUE(at::allclose(out, at::gelu(at::linear(x, w, bias)) + residual, 1e-4, 1e-5));
  MatmulEpilogue row_residual{std::nullopt, MatmulActivation::None, bias};  // [N], broadcast
  dnnlMatmulOut(out, x, packed, kWeightBlocked, row_residual);
  EXPECT_TRUE(at::allclose(out, at::linear(x, w) + bias, 1e-4, 1e-5));
  MatmulEpilogue relu{std::nullopt, MatmulActivation::Relu, residual};
  dnnlMatmulOut(out, x, packed, kWeightBlocked, relu);
  EXPECT_TRUE(at::allclose(out, at::relu(at::linear(x, w)) + residual, 1e-4, 1e-5));
}

TEST(PackedGemmTest, PackedLinearAndMatmulEqualPlain) {
  at::Tensor x = at::randn({2, 5, 24});
  at::Tensor w = at::randn({37, 24});
  at::Tensor bias = at::randn({37});
  for (int64_t n_block : {16, 64}) {
    at::Tensor out = at::empty({2, 5, 37});
    const Layout weight_layout = Layout::dnnlBlocked(n_block, 0);
    packedMatmulOut(out, x, packMatmulRhs(w, weight_layout), weight_layout, bias);
    EXPECT_TRUE(at::allclose(out, at::linear(x, w, bias), 1e-4, 1e-5)) << n_block;
    at::Tensor b = at::randn({24, 19});
    at::Tensor wide = at::zeros({10, 40});
    at::Tensor strided = wide.narrow(1, 3, 19);  // a non-contiguous output
    const Layout rhs_layout = Layout::dnnlBlocked(n_block, 1);
    packedMatmulOut(strided, x[0].repeat({2, 1}), packMatmulRhs(b, rhs_layout), rhs_layout);
    EXPECT_TRUE(at::allclose(strided, at::matmul(x[0].repeat({2, 1}), b), 1e-4, 1e-5));
  }
}

TEST(PackedGemmTest, WeightsArePackedOncePerVersion) {
  at::Tensor w = at::randn({24, 16});
  int64_t hits = packCacheHits();
  at::Tensor first = packMatmulRhsCached(w, kWeightBlocked);
  at::Tensor second = packMatmulRhsCached(w, kWeightBlocked);
  EXPECT_EQ(packCacheHits(), hits + 1);
  EXPECT_EQ(first.data_ptr(), second.data_ptr());
  EXPECT_NE(packMatmulRhsCached(w, Layout::dnnlBlocked(16, 0)).data_ptr(), first.data_ptr())
      << "another layout";
  w.mul_(2);  // in place: a new version, packed again
  at::Tensor third = packMatmulRhsCached(w, kWeightBlocked);
  EXPECT_NE(third.data_ptr(), first.data_ptr());
  EXPECT_TRUE(at::equal(unpackMatmulRhs(third, kWeightBlocked, {24, 16}), w));
}

// An operand rewritten before every GEMM (a matmul's computed right
// operand, in a buffer reused per call) is packed per version but holds one
// entry: its stale versions do not pile up and push the weights out.
TEST(PackedGemmTest, ARewrittenOperandHoldsOneEntry) {
  at::Tensor weight = at::randn({24, 16});
  packMatmulRhsCached(weight, kWeightBlocked);
  at::Tensor operand = at::randn({24, 16});
  packMatmulRhsCached(operand, kWeightBlocked);
  const int64_t entries = packCacheEntries();
  for (int call = 0; call < 100; ++call) {
    operand.add_(1.0);
    at::Tensor packed = packMatmulRhsCached(operand, kWeightBlocked);
    ASSERT_TRUE(at::equal(unpackMatmulRhs(packed, kWeightBlocked, {24, 16}), operand)) << call;
  }
  EXPECT_EQ(packCacheEntries(), entries);
  const int64_t hits = packCacheHits();
  packMatmulRhsCached(weight, kWeightBlocked);
  EXPECT_EQ(packCacheHits(), hits + 1) << "the weight is still packed";
}

// A plain float linear runs through oneDNN on a machine where oneDNN packs
// B (avx512), with its weight packed once per version; elsewhere, for other
// dtypes and with HOSTIR_GEMM=aten it is left to ATen.
TEST(PlainLinearThroughDnnlTest, EqualsAtenAndPacksTheWeightOnce) {
  at::Tensor x = at::randn({3, 50, 96});
  at::Tensor w = at::randn({130, 96});
  at::Tensor bias = at::randn({130});
  const bool packs_here = dnnlPreferredNBlock(96, 130) > 0;
  at::Tensor out = at::full({3, 50, 130}, -7.0f);
  const int64_t hits = packCacheHits();
  EXPECT_EQ(linearThroughDnnlOut(out, x, w, bias), packs_here);
  if (!packs_here) {
    EXPECT_TRUE(at::equal(out, at::full({3, 50, 130}, -7.0f))) << "nothing computed";
    return;
  }
  EXPECT_TRUE(at::allclose(out, at::linear(x, w, bias), 1e-4, 1e-5));
  at::Tensor wide = at::zeros({50, 140});
  at::Tensor strided = wide.narrow(1, 5, 130);  // a non-contiguous output
  EXPECT_TRUE(linearThroughDnnlOut(strided, x[1], w, c10::nullopt));
  EXPECT_TRUE(at::allclose(strided, at::linear(x[1], w), 1e-4, 1e-5));
  EXPECT_EQ(packCacheHits(), hits + 1) << "the second call reused the packed weight";
}

// A matmul's [K, N] right operand is packed with N as its second axis:
// the product equals ATen's, into a strided output too, and one B read by
// several GEMMs (a loop's chunks) is packed once.
TEST(PlainMatmulThroughDnnlTest, EqualsAtenAndPacksTheRightOperandOnce) {
  at::Tensor a = at::randn({50, 96});
  at::Tensor b = at::randn({96, 130});
  const bool packs_here = dnnlPreferredNBlock(96, 130) > 0;
  at::Tensor out = at::full({50, 130}, -7.0f);
  const int64_t hits = packCacheHits();
  EXPECT_EQ(matmulThroughDnnlOut(out, a, b), packs_here);
  if (!packs_here) {
    EXPECT_TRUE(at::equal(out, at::full({50, 130}, -7.0f))) << "nothing computed";
    return;
  }
  EXPECT_TRUE(at::allclose(out, at::matmul(a, b), 1e-4, 1e-5));
  at::Tensor wide = at::zeros({20, 140});
  at::Tensor strided = wide.narrow(1, 5, 130);
  EXPECT_TRUE(matmulThroughDnnlOut(strided, a.narrow(0, 10, 20), b));
  EXPECT_TRUE(at::allclose(strided, at::matmul(a.narrow(0, 10, 20), b), 1e-4, 1e-5));
  EXPECT_EQ(packCacheHits(), hits + 1) << "the second chunk reused the packed operand";
  EXPECT_FALSE(
      matmulThroughDnnlOut(at::empty({50, 130}, at::kDouble), a.to(at::kDouble), b.to(at::kDouble)))
      << "double is ATen's";
}

// A batched matmul on views of bigger buffers (the attention's q·kᵀ: a
// query chunk of Q against a key prefix of Kᵀ; p·v into a slice of a ring
// buffer) equals ATen's, its operands read in place; what oneDNN does not
// take (double, a broadcast batch, HOSTIR_GEMM=aten) is left untouched.
TEST(BatchedMatmulThroughDnnlTest, EqualsAtenOnStridedViews) {
  at::Tensor q = at::randn({3, 40, 8});
  at::Tensor kt = at::randn({3, 8, 40});
  at::Tensor scores = at::full({3, 12, 25}, -7.0f);
  at::Tensor q_chunk = q.narrow(1, 10, 12);
  at::Tensor key_prefix = kt.narrow(2, 0, 25);
  ASSERT_TRUE(batchedMatmulThroughDnnlOut(scores, q_chunk, key_prefix));
  EXPECT_TRUE(at::allclose(scores, at::matmul(q_chunk, key_prefix), 1e-4, 1e-5));

  at::Tensor v = at::randn({3, 40, 8});
  at::Tensor ring = at::full({2, 3, 12, 8}, -7.0f);
  at::Tensor slot = ring[1];  // a slice: strides of the whole ring
  ASSERT_TRUE(batchedMatmulThroughDnnlOut(slot, scores, v.narrow(1, 0, 25)));
  EXPECT_TRUE(at::allclose(slot, at::matmul(scores, v.narrow(1, 0, 25)), 1e-4, 1e-5));
  EXPECT_TRUE(at::equal(ring[0], at::full({3, 12, 8}, -7.0f))) << "the other slot untouched";

  at::Tensor untouched = at::full({3, 12, 25}, -7.0f);
  EXPECT_FALSE(batchedMatmulThroughDnnlOut(untouched.to(at::kDouble), q_chunk.to(at::kDouble),
                                           key_prefix.to(at::kDouble)));
  EXPECT_FALSE(batchedMatmulThroughDnnlOut(untouched, q_chunk[0].expand({3, 12, 8}), key_prefix))
      << "a broadcast batch";
  {
    test::ScopedEnv aten("HOSTIR_GEMM", "aten");
    EXPECT_FALSE(batchedMatmulThroughDnnlOut(untouched, q_chunk, key_prefix));
  }
  EXPECT_TRUE(at::equal(untouched, at::full({3, 12, 25}, -7.0f)));
}

// Every key prefix of a causal query loop is a shape of its own: a program
// run at many sequence lengths must not grow the primitive cache without
// end. Past its bound the oldest primitives go, and GEMMs of every shape
// stay right (a dropped shape is built again).
TEST(BatchedMatmulThroughDnnlTest, PrimitiveCacheStaysBounded) {
  at::Tensor a = at::randn({2, 3, 4});
  for (int64_t keys = 1; keys <= 600; ++keys) {
    at::Tensor b = at::randn({2, 4, keys});
    at::Tensor out = at::empty({2, 3, keys});
    ASSERT_TRUE(batchedMatmulThroughDnnlOut(out, a, b));
    if (keys % 97 == 0 || keys == 600) {
      EXPECT_TRUE(at::allclose(out, at::matmul(a, b), 1e-4, 1e-5)) << keys << " keys";
    }
  }
  EXPECT_LE(dnnlCachedPrimitives(), 512u);
  at::Tensor b = at::randn({2, 4, 1});
  at::Tensor out = at::empty({2, 3, 1});
  ASSERT_TRUE(batchedMatmulThroughDnnlOut(out, a, b)) << "the first shape, dropped, again";
  EXPECT_TRUE(at::allclose(out, at::matmul(a, b), 1e-4, 1e-5));
}

TEST(PlainLinearThroughDnnlTest, LeavesWhatItDoesNotTakeToAten) {
  at::Tensor out = at::empty({4, 8});
  EXPECT_FALSE(linearThroughDnnlOut(out.to(at::kDouble), at::randn({4, 16}, at::kDouble),
                                    at::randn({8, 16}, at::kDouble), c10::nullopt));
  EXPECT_FALSE(
      linearThroughDnnlOut(at::empty({0, 8}), at::randn({0, 16}), at::randn({8, 16}), c10::nullopt))
      << "an empty chunk";
  at::Tensor meta = at::empty({4, 16}, at::TensorOptions().device(at::kMeta));
  EXPECT_FALSE(linearThroughDnnlOut(at::empty({4, 8}, at::TensorOptions().device(at::kMeta)), meta,
                                    at::empty({8, 16}, at::TensorOptions().device(at::kMeta)),
                                    c10::nullopt));
  {
    test::ScopedEnv aten("HOSTIR_GEMM", "aten");
    EXPECT_FALSE(linearThroughDnnlOut(out, at::randn({4, 16}), at::randn({8, 16}), c10::nullopt));
  }
  test::ScopedEnv bad("HOSTIR_GEMM", "blas");
  EXPECT_EQ(
      errorOf([&] {
        linearThroughDnnlOut(out, at::randn({4, 16}), at::randn({8, 16}), c10::nullopt);
      }).rfind("HOSTIR_GEMM='blas' is not a GEMM engine; valid: dnnl (the default) or aten", 0),
      0u);
}

// A GELU and a residual add as post-ops of the packed GEMM; a residual of
// another shape, or one sharing the output's memory, is left to ATen.
TEST(PlainLinearThroughDnnlTest, RunsTheEpilogueOrLeavesItToAten) {
  at::Tensor x = at::randn({50, 96});
  at::Tensor w = at::randn({130, 96});
  MatmulEpilogue epilogue;
  epilogue.bias = at::randn({130});
  epilogue.activation = MatmulActivation::Gelu;
  epilogue.residual = at::randn({50, 130});
  const bool packs_here = dnnlPreferredNBlock(96, 130) > 0;
  at::Tensor out = at::full({50, 130}, -7.0f);
  EXPECT_EQ(linearThroughDnnlOut(out, x, w, epilogue), packs_here);
  if (packs_here) {
    EXPECT_TRUE(at::allclose(out, at::gelu(at::linear(x, w, *epilogue.bias)) + *epilogue.residual,
                             1e-4, 1e-5));
  } else {
    EXPECT_TRUE(at::equal(out, at::full({50, 130}, -7.0f))) << "nothing computed";
  }
  at::Tensor untouched = at::full({50, 130}, -7.0f);
  epilogue.residual = at::randn({50, 1});
  EXPECT_FALSE(linearThroughDnnlOut(untouched, x, w, epilogue)) << "a [50, 1] residual";
  epilogue.residual = untouched;
  EXPECT_FALSE(linearThroughDnnlOut(untouched, x, w, epilogue)) << "a residual that is the output";
  epilogue.residual.reset();
  epilogue.bias = at::randn({129});
  EXPECT_FALSE(linearThroughDnnlOut(untouched, x, w, epilogue)) << "a bias of another width";
  EXPECT_TRUE(at::equal(untouched, at::full({50, 130}, -7.0f))) << "nothing computed";
}

TEST(TargetDetectionTest, EnvironmentOverridesAndPerRankLists) {
  const std::string cpuinfo = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n";
  EXPECT_EQ(cpuFlags(cpuinfo), " fpu sse2 avx avx2 fma");
  EXPECT_EQ(chooseTarget("", 0, cpuinfo).toString(), "cpu:avx2");
  EXPECT_EQ(chooseTarget("cpu:avx512", 3, cpuinfo).toString(), "cpu:avx512");
  EXPECT_EQ(chooseTarget("cpu:avx512,cpu:avx2", 0, cpuinfo).toString(), "cpu:avx512");
  EXPECT_EQ(chooseTarget("cpu:avx512,cpu:avx2", 3, cpuinfo).toString(), "cpu:avx2");
  std::string message = errorOf([&] { chooseTarget("cpu:avx3", 0, cpuinfo); });
  EXPECT_EQ(message.rfind("HOSTIR_TARGET='cpu:avx3': unknown target 'cpu:avx3'", 0), 0u) << message;
  EXPECT_NE(message.find("cpu:generic, cpu:avx2, cpu:avx512, cpu:neon"), std::string::npos);
  EXPECT_EQ(chooseTarget("", 0, "Features\t: fp asimd\n").toString(), "cpu:neon");
}

DeviceTargets twoTargets() {
  return {{0, parseTarget("cpu:avx512")}, {1, parseTarget("cpu:avx2")}};
}

// y = linear(x, w) at the top level, w carrying matmul_rhs.
std::unique_ptr<HostIrContainer> topLevelLinear() {
  auto container = std::make_unique<HostIrContainer>();
  FusionGuard fg(container.get());
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  w->setEncoding(kRhs);
  container->addInput(x);
  container->addInput(w);
  TensorView* y = linear(x, w);
  container->addOutput(y);
  container->pushBackTopLevelExpr(y->definition());
  return container;
}

TEST(EncodedEvaluationTest, TopLevelLinearReadsEachDevicesLayout) {
  // The encoding's packing alone: a plain linear would pack its weight too.
  test::ScopedEnv plain_linear_on_aten("HOSTIR_GEMM", "aten");
  at::Tensor x = at::randn({6, 24});
  at::Tensor w = at::randn({20, 24});
  at::Tensor expected = at::linear(x, w);
  for (int64_t device : {0, 1}) {
    auto container = topLevelLinear();
    specializeEncodings(*container, twoTargets());
    auto* set_encoding = container->topLevel().front()->as<SetEncoding>();
    HostIrEvaluator evaluator(std::move(container), {.my_device = device});
    int64_t hits = packCacheHits();
    at::Tensor y = evaluator.run({x, w}).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-4, 1e-5)) << "device " << device;
    y = evaluator.run({x, w}).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-4, 1e-5));
    // avx512 reads oneDNN's blocks, avx2 the plain weight (nothing to pack).
    EXPECT_EQ(packCacheHits(), hits + (device == 0 ? 1 : 0))
        << "the second run reuses the packed weight";
    EXPECT_EQ(set_encoding->layoutFor(device)->toString(),
              device == 0 ? "BA16a64b(n=0)" : "identity");
  }
}

// PostOnStream(HostUnit(linear(x, w))) with w encoded: one variant per target.
std::unique_ptr<HostIrContainer> postedLinear() {
  auto container = std::make_unique<HostIrContainer>();
  FusionGuard fg(container.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
  TensorView* x = makeConcreteTensor({6, 24});
  TensorView* w = makeConcreteTensor({20, 24});
  TensorView* y = makeConcreteTensor({6, 20});
  for (TensorView* tv : {x, w, y}) {
    tv->setDeviceMesh(mesh);
  }
  w->setEncoding(kRhs);
  container->addInput(x);
  container->addInput(w);
  container->addOutput(y);
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
  container->pushBackTopLevelExpr(
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{x, w}, std::vector<Val*>{y}));
  return container;
}

TEST(EncodedEvaluationTest, EachDeviceRunsItsVariantOnItsLayout) {
  at::Tensor x = at::randn({6, 24});
  at::Tensor w = at::randn({20, 24});
  at::Tensor expected = at::relu(at::linear(x, w));
  for (int64_t device : {0, 1}) {
    auto container = postedLinear();
    specializeEncodings(*container, twoTargets());
    ASSERT_EQ(container->hostUnits().size(), 2u);
    HostIrEvaluator evaluator(std::move(container), {.my_device = device});
    EXPECT_TRUE(at::allclose(evaluator.run({x, w}).at(0), expected, 1e-4, 1e-5))
        << "device " << device;
  }
}

TEST(EncodedEvaluationTest, AVariantRejectsAnotherTargetsLayout) {
  auto container = postedLinear();
  specializeEncodings(*container, twoTargets());
  auto* post = container->topLevel().back()->as<PostOnStream>();
  Fusion* avx512_variant = post->hostUnitFor(0)->fusion();
  auto copy = std::make_unique<Fusion>();
  copyFusion(*avx512_variant, *copy);
  FusionExecutor executor(std::move(copy));
  at::Tensor w = at::randn({20, 24});
  std::string message = errorOf([&] {
    executor.run({at::randn({6, 24}), packMatmulRhs(w, Layout::dnnlBlocked(16, 0))});
  });
  EXPECT_NE(message.find("#matmul_rhs:BA16a64b(n=0) expects BA16a64b: blocks of 64 columns"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("laid out for another target"), std::string::npos) << message;
}

TEST(EncodedEvaluationTest, UnsetEncodingRestoresThePlainTensor) {
  auto container = std::make_unique<HostIrContainer>();
  {
    FusionGuard fg(container.get());
    TensorView* w = makeConcreteTensor({5, 13});
    TensorView* packed = makeConcreteTensor({5, 13});
    packed->setEncoding(kRhs);
    TensorView* back = makeConcreteTensor({5, 13});
    container->addInput(w);
    container->addOutput(back);
    IrBuilder::create<SetEncoding>(w, packed, DeviceLayouts{{0}, {Layout::dnnlBlocked(64, 1)}});
    container->pushBackTopLevelExpr(packed->definition());
    auto* unset = IrBuilder::create<UnsetEncoding>(
        packed, back, DeviceLayouts{{0}, {Layout::dnnlBlocked(64, 1)}});
    container->pushBackTopLevelExpr(unset);
  }
  HostIrEvaluator evaluator(std::move(container));
  at::Tensor w = at::randn({5, 13});
  at::Tensor out = at::empty({5, 13});
  EXPECT_TRUE(at::equal(evaluator.run({w}, {out}).at(0), w));
}

}  // namespace
}  // namespace hostir
