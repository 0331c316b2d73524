// Results written in an encoded layout, and top-level GEMMs cloned per
// target, run for real and checked against plain ATen.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/specialize_encodings.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "hostir/runtime/packed_gemm.h"

namespace hostir {
namespace {

const Encoding kRhs{EncodingKind::MatmulRhs, std::nullopt};

DeviceTargets avx512AndAvx2() {
  return {{0, parseTarget("cpu:avx512")}, {1, parseTarget("cpu:avx2")}};
}

template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// relu(b) written as `layout` says.
std::unique_ptr<Fusion> reluWritingPanels(const Layout& layout) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* b = makeContigTensor(2);
  fusion->addInput(b);
  TensorView* r = relu(b);
  r->setEncoding(Encoding{EncodingKind::MatmulRhs, layout});
  fusion->addOutput(r);
  return fusion;
}

TEST(EncodedResultTest, AnExecutableWritesItsResultInPanels) {
  at::Tensor b = at::randn({20, 24});
  const Layout layout = Layout::dnnlBlocked(16, /*n_axis=*/0);
  at::Tensor expected = packMatmulRhs(at::relu(b), layout);
  FusionExecutor executor(reluWritingPanels(layout));
  at::Tensor packed = executor.run({b}).at(0);
  EXPECT_EQ(packed.sizes(), at::IntArrayRef({2, 32, 16}));
  EXPECT_TRUE(at::equal(packed, expected));
  EXPECT_EQ(plainSizesOf(packed), (std::vector<int64_t>{20, 24}));
  // Into a buffer laid out so (what the host evaluator allocates).
  at::Tensor buffer = at::full({2, 32, 16}, 7.0);
  executor.run({b}, {buffer});
  EXPECT_TRUE(at::equal(buffer, expected));
  // A plain buffer is not this executable's layout.
  std::string message = errorOf([&] { executor.run({b}, {at::empty({20, 24})}); });
  EXPECT_NE(message.find("is written in panels of sizes [2, 32, 16] but its buffer has sizes "
                         "[20, 24]"),
            std::string::npos)
      << message;
}

// r = relu(b) in a HostUnit, r carrying matmul_rhs; y = linear(x, r) at the
// top level. specialize_encodings makes r's producer write each device's
// panels and clones the linear to read them.
std::unique_ptr<HostIrContainer> encodedIntermediate() {
  auto container = std::make_unique<HostIrContainer>();
  FusionGuard fg(container.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
  TensorView* x = makeConcreteTensor({6, 24});
  TensorView* b = makeConcreteTensor({21, 24});
  TensorView* r = makeConcreteTensor({21, 24});
  for (TensorView* tv : {x, b, r}) {
    tv->setDeviceMesh(mesh);
  }
  r->setEncoding(kRhs);
  container->addInput(x);
  container->addInput(b);
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
  container->pushBackTopLevelExpr(
      IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{b}, std::vector<Val*>{r}));
  TensorView* y = linear(x, r);
  y->setDeviceMesh(mesh);
  container->pushBackTopLevelExpr(y->definition());
  container->addOutput(y);
  return container;
}

TEST(EncodedResultTest, EachDeviceWritesAndReadsItsPanels) {
  at::Tensor x = at::randn({6, 24});
  at::Tensor b = at::randn({21, 24});
  at::Tensor expected = at::linear(x, at::relu(b));
  for (int64_t device : {0, 1}) {
    auto container = encodedIntermediate();
    specializeEncodings(*container, avx512AndAvx2());
    // The linear's executables check that their weight arrives in their
    // device's panels: they would reject a plain r.
    auto* gemm = container->topLevel().back()->as<PostOnStream>();
    EXPECT_EQ(gemm->hostUnitFor(device)->fusion()->inputs()[1]->as<TensorView>()->encoding(),
              (Encoding{EncodingKind::MatmulRhs,
                        device == 0 ? Layout::dnnlBlocked(64, 0) : Layout::identity()}));
    HostIrEvaluator evaluator(std::move(container), {.my_device = device});
    at::Tensor y = evaluator.run({x, b}).at(0);
    EXPECT_TRUE(at::allclose(y, expected, 1e-4, 1e-5))
        << "device " << device << ": max |diff| " << (y - expected).abs().max().item<double>();
  }
}

TEST(EncodedResultTest, AVariantRejectsAPlainOperand) {
  // Without the pass's result layouts the producer would write r plain; the
  // GEMM's variant must refuse it rather than read it as panels.
  auto container = encodedIntermediate();
  specializeEncodings(*container, avx512AndAvx2());
  auto* gemm = container->topLevel().back()->as<PostOnStream>();
  auto copy = std::make_unique<Fusion>();
  copyFusion(*gemm->hostUnitFor(0)->fusion(), *copy);
  FusionExecutor executor(std::move(copy));
  std::string message = errorOf([&] {
    executor.run({at::randn({6, 24}), at::relu(at::randn({21, 24}))});
  });
  EXPECT_NE(message.find("#matmul_rhs:BA16a64b(n=0) expects BA16a64b: blocks of 64 columns"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace hostir
