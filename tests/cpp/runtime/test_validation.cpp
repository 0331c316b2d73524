// Input validation of FusionExecutor (every error with its message checked),
// symbolic extents shared by several inputs, and shape mismatches that only
// show inside an op at run time.

#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using ValidationTest = RuntimeTest;

TEST_F(ValidationTest, WrongInputCount) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  at::Tensor t0 = at::randn({3});
  EXPECT_HOSTIR_ERROR(run({t0}), {"expects 2 inputs", "got 1"});
  EXPECT_HOSTIR_ERROR(run({t0, t0, t0}), {"expects 2 inputs", "got 3"});
  EXPECT_HOSTIR_ERROR(run({}), {"expects 2 inputs", "got 0"});
  // Still usable after the errors.
  EXPECT_TRUE(allClose(run({t0, t0})[0], t0 + t0));
}

TEST_F(ValidationTest, WrongDtype) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2, DataType::Int32);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  at::Tensor f = at::randn({2, 3});
  at::Tensor i = at::randint(0, 5, {2, 3}, at::TensorOptions().dtype(at::kInt));
  EXPECT_HOSTIR_ERROR(run({f.to(at::kDouble), i}),
                      {"input 0", "T0_g_float", "expects dtype float", "Double"});
  EXPECT_HOSTIR_ERROR(run({f, i.to(at::kLong)}),
                      {"input 1", "T1_g_int32", "expects dtype int32", "Long"});
  EXPECT_HOSTIR_ERROR(run({f.to(at::kHalf), i}), {"input 0", "expects dtype float", "Half"});
}

TEST_F(ValidationTest, WrongRank) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addOutput(neg(tv0));
  EXPECT_HOSTIR_ERROR(run({at::randn({6})}), {"input 0", "T0", "expects rank 2", "[6]"});
  EXPECT_HOSTIR_ERROR(run({at::randn({1, 2, 3})}), {"input 0", "expects rank 2", "[1, 2, 3]"});
}

TEST_F(ValidationTest, ConstantSizeMismatch) {
  TensorView* tv0 = makeConcreteTensor({3, 4});
  fusion().addInput(tv0);
  fusion().addOutput(neg(tv0));
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 5})}),
                      {"input 0", "T0", "axis 1", "expects size 4", "got 5"});
  EXPECT_HOSTIR_ERROR(run({at::randn({2, 4})}), {"axis 0", "expects size 3", "got 2"});
  at::Tensor ok = at::randn({3, 4});
  EXPECT_TRUE(allClose(run({ok})[0], -ok));
}

TEST_F(ValidationTest, BroadcastAxisNeedsSizeOne) {
  TensorView* tv0 = makeConcreteTensor({1, -1});
  TensorView* tv1 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  EXPECT_HOSTIR_ERROR(run({at::randn({4, 5}), at::randn({4, 5})}),
                      {"input 0", "T0", "axis 0", "broadcast axis", "size 1", "got 4"});
}

TEST_F(ValidationTest, NonContiguousTensorForContigInput) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addOutput(neg(tv0));
  at::Tensor transposed = at::randn({4, 3}).t();
  ASSERT_FALSE(transposed.is_contiguous());
  EXPECT_HOSTIR_ERROR(run({transposed}),
                      {"input 0", "T0", "contiguous", "makeContigTensor", "strides"});
  EXPECT_TRUE(allClose(run({transposed.contiguous()})[0], -transposed));
}

TEST_F(ValidationTest, SymbolicTensorAcceptsAnyStrides) {
  TensorView* tv0 = makeSymbolicTensor(2);
  TensorView* tv1 = makeConcreteTensor({-1, 3});
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(mul(tv0, tv1));
  at::Tensor t0 = at::randn({3, 4}).t();
  at::Tensor t1 = at::randn({8, 3}).slice(0, 0, 8, 2);  // every other row
  EXPECT_TRUE(allClose(run({t0, t1})[0], t0 * t1));
}

TEST_F(ValidationTest, TensorWhereScalarExpected) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  Scalar* s = scalarInput(DataType::Double);
  fusion().addOutput(mul(tv0, s));
  at::Tensor t0 = at::randn({3});
  EXPECT_HOSTIR_ERROR(run({t0, at::randn({1})}), {"input 1", "expects a scalar", "got tensor"});
  EXPECT_HOSTIR_ERROR(run({t0, PolymorphicValue{}}), {"input 1", "expects a scalar", "nothing"});
}

TEST_F(ValidationTest, ScalarWhereTensorExpected) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addOutput(neg(tv0));
  EXPECT_HOSTIR_ERROR(run({2.0}), {"input 0", "T0", "expects a tensor", "double 2"});
  EXPECT_HOSTIR_ERROR(run({at::Tensor()}), {"input 0", "undefined"});
}

// --- symbolic extents ------------------------------------------------------------------

TEST_F(ValidationTest, SharedSymbolMatchingSizesRun) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeTensorOver(extentsOf(tv0));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  for (std::vector<int64_t> sizes : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{5, 2}}) {
    at::Tensor t0 = at::randn(sizes);
    at::Tensor t1 = at::randn(sizes);
    EXPECT_TRUE(allClose(run({t0, t1})[0], t0 + t1));
  }
}

TEST_F(ValidationTest, SharedSymbolMismatchNamesBothTensors) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeTensorOver(extentsOf(tv0));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  std::string extent = tv0->axis(1)->extent()->toInlineString();
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 4}), at::randn({3, 5})}),
                      {"size mismatch", extent, "T0", "T1", "axis 1", "4", "5"});
  // One axis of the second tensor shares the first's symbol, the other is free.
  EXPECT_TRUE(allClose(run({at::ones({3, 4}), at::ones({3, 4})})[0],
                       at::full({3, 4}, 2.0, at::TensorOptions().dtype(at::kFloat))));
}

TEST_F(ValidationTest, SharedSymbolAcrossDifferentAxes) {
  // tv1 is [i1, i0] over tv0's [i0, i1]: a transpose-shaped pair.
  TensorView* tv0 = makeContigTensor(2);
  std::vector<Val*> extents = extentsOf(tv0);
  TensorView* tv1 = makeTensorOver({extents[1], extents[0]});
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, permute(tv1, {1, 0})));
  at::Tensor t0 = at::randn({2, 3});
  at::Tensor t1 = at::randn({3, 2});
  EXPECT_TRUE(allClose(run({t0, t1})[0], t0 + t1.t()));
  EXPECT_HOSTIR_ERROR(run({t0, at::randn({2, 3})}), {"size mismatch", "T0", "T1"});
}

TEST_F(ValidationTest, ShapeMismatchInsideAnOp) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  TensorView* out = add(tv0, tv1);
  fusion().addOutput(out);
  std::string error = errorMessage([&]() { run({at::randn({3}), at::randn({4})}); });
  EXPECT_TRUE(containsAll(error, {"add", "T0", "T1", out->toInlineString()}));
}

// where's three operands are checked against each other as a binary op's
// two are (compiled: the kernel's check; through ATen: ATen's).
TEST_F(ValidationTest, WhereShapeMismatchInsideAnOp) {
  TensorView* condition = makeContigTensor(1, DataType::Bool);
  TensorView* tv1 = makeContigTensor(1);
  TensorView* tv2 = makeContigTensor(1);
  fusion().addInput(condition);
  fusion().addInput(tv1);
  fusion().addInput(tv2);
  TensorView* out = where(condition, tv1, tv2);
  fusion().addOutput(out);
  at::Tensor mask = at::ones({3}, at::kBool);
  std::string error = errorMessage([&]() { run({mask, at::randn({3}), at::randn({4})}); });
  EXPECT_TRUE(containsAll(error, {"where", "T1", "T2", out->toInlineString()})) << error;
  error = errorMessage([&]() { run({at::ones({5}, at::kBool), at::randn({3}), at::randn({3})}); });
  EXPECT_TRUE(containsAll(error, {"where", "T0", "T1", out->toInlineString()})) << error;
  EXPECT_TRUE(allClose(run({mask, at::ones({3}), at::zeros({3})})[0], at::ones({3})));
}

TEST_F(ValidationTest, MatmulInnerSizeMismatchAtRunTime) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(matmul(tv0, tv1));
  EXPECT_HOSTIR_ERROR(run({at::randn({2, 3}), at::randn({4, 5})}), {"T0", "T1"});
}

TEST_F(ValidationTest, ReshapeWithWrongElementCountAtRunTime) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addOutput(reshape(tv0, {4, 3}));
  EXPECT_TRUE(allClose(run({at::ones({2, 6})})[0], at::ones({4, 3})));
  // Compiled, the kernel's check; through ATen, ATen's (HOSTIR_KERNELS=aten).
  EXPECT_HOSTIR_ERROR(run({at::ones({2, 5})}), {"T0", "[4, 3]"});
}

}  // namespace
}  // namespace hostir::test
