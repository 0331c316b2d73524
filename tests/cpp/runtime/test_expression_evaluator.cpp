// ExpressionEvaluator used directly (scalar arithmetic, named runtime
// symbols, re-binding, errors, extents bound from tensors, ops evaluated on
// demand) and cloned fusions executed against their originals.

#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/input_validation.h"
#include "hostir/runtime/tensor_memory.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using ExpressionEvaluatorTest = RuntimeTest;

TEST_F(ExpressionEvaluatorTest, IntegerArithmetic) {
  Scalar* a = symbol();
  Scalar* b = symbol();
  Val* ceil_div = ceilDiv(a, b);
  Val* modulo = mod(a, b);
  Val* quotient = div(a, b);
  Val* expr = add(mul(a, b), sub(a, constant(1)));
  Val* biggest = maximum(a, b);
  Val* smallest = minimum(a, b);

  ExpressionEvaluator ee;
  ee.bind(a, int64_t{10});
  ee.bind(b, int64_t{3});
  EXPECT_EQ(ee.evaluateInt(ceil_div), 4);
  EXPECT_EQ(ee.evaluateInt(modulo), 1);
  EXPECT_EQ(ee.evaluateInt(quotient), 3);  // integer division on integer scalars
  EXPECT_EQ(ee.evaluateInt(expr), 39);
  EXPECT_EQ(ee.evaluateInt(biggest), 10);
  EXPECT_EQ(ee.evaluateInt(smallest), 3);

  ee.bind(a, int64_t{12});
  EXPECT_EQ(ee.evaluateInt(ceil_div), 4);
  EXPECT_EQ(ee.evaluateInt(modulo), 0);
  EXPECT_EQ(ee.evaluateInt(quotient), 4);
  EXPECT_EQ(ee.evaluateInt(expr), 47);
}

TEST_F(ExpressionEvaluatorTest, ConstantsNeedNoBinding) {
  ExpressionEvaluator ee;
  EXPECT_EQ(ee.evaluateInt(constant(7)), 7);
  EXPECT_EQ(ee.evaluateInt(ceilDiv(constant(7), constant(2))), 4);  // folded at build time
  PolymorphicValue d = ee.evaluate(IrBuilder::create<Scalar>(1.5));
  ASSERT_TRUE(std::holds_alternative<double>(d));
  EXPECT_EQ(std::get<double>(d), 1.5);
}

TEST_F(ExpressionEvaluatorTest, FloatingScalarArithmetic) {
  auto* x = IrBuilder::create<Scalar>(DataType::Double);
  Val* y = div(mul(x, IrBuilder::create<Scalar>(2.0)), constant(4));
  ExpressionEvaluator ee;
  ee.bind(x, 3.0);
  PolymorphicValue value = ee.evaluate(y);
  ASSERT_TRUE(std::holds_alternative<double>(value));
  EXPECT_DOUBLE_EQ(std::get<double>(value), 1.5);
}

TEST_F(ExpressionEvaluatorTest, StreamIdxRebindingInvalidatesDerivedValues) {
  auto* stream_idx = IrBuilder::create<Scalar>(kStreamIdx, DataType::Int64);
  auto* n_streams = IrBuilder::create<Scalar>(kNumberOfStreams, DataType::Int64);
  Val* which = mod(stream_idx, n_streams);
  Val* offset = mul(which, constant(8));

  ExpressionEvaluator ee;
  ee.bind(n_streams, int64_t{3});
  std::vector<int64_t> seen;
  for (int64_t i = 0; i < 7; ++i) {
    ee.bind(stream_idx, i);
    seen.push_back(ee.evaluateInt(which));
    EXPECT_EQ(ee.evaluateInt(offset), (i % 3) * 8);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));

  ee.bind(n_streams, int64_t{2});
  EXPECT_EQ(ee.evaluateInt(which), 0);  // 6 % 2
  ee.unbind(stream_idx);
  EXPECT_FALSE(ee.isBound(stream_idx));
  EXPECT_HOSTIR_ERROR(ee.evaluateInt(which), {"StreamIdx", "has no value"});
}

TEST_F(ExpressionEvaluatorTest, UnboundValueError) {
  auto* stream_idx = IrBuilder::create<Scalar>(kStreamIdx, DataType::Int64);
  auto* n_streams = IrBuilder::create<Scalar>(kNumberOfStreams, DataType::Int64);
  Val* which = mod(stream_idx, n_streams);
  ExpressionEvaluator ee;
  ee.bind(stream_idx, int64_t{1});
  EXPECT_HOSTIR_ERROR(ee.evaluate(which), {"numberOfStreams", "has no value", "bind it"});
  Scalar* free = symbol();
  EXPECT_HOSTIR_ERROR(ee.evaluateInt(free), {free->toInlineString(), "has no value"});
}

TEST_F(ExpressionEvaluatorTest, DivisionByZero) {
  Scalar* a = symbol();
  Scalar* b = symbol();
  Val* q = ceilDiv(a, b);
  ExpressionEvaluator ee;
  ee.bind(a, int64_t{4});
  ee.bind(b, int64_t{0});
  EXPECT_HOSTIR_ERROR(ee.evaluateInt(q), {"division by zero"});
}

TEST_F(ExpressionEvaluatorTest, BindKindMismatch) {
  TensorView* tv0 = makeContigTensor(1);
  Scalar* s = symbol();
  ExpressionEvaluator ee;
  EXPECT_HOSTIR_ERROR(ee.bind(tv0, int64_t{3}), {"T0", "needs a tensor", "int 3"});
  EXPECT_HOSTIR_ERROR(ee.bind(s, at::zeros({2})), {"is a scalar", "tensor"});
  EXPECT_HOSTIR_ERROR(ee.bind(tv0, at::zeros({2, 2})), {"T0", "rank 1"});
  ee.bind(s, 2.5);
  EXPECT_HOSTIR_ERROR(ee.evaluateInt(s), {"should be an integer", "double 2.5"});
  EXPECT_HOSTIR_ERROR(ee.evaluateTensor(s), {"should be a tensor"});
}

TEST_F(ExpressionEvaluatorTest, BindingATensorBindsItsExtents) {
  TensorView* tv0 = makeContigTensor(3);
  std::vector<Val*> extents = extentsOf(tv0);
  Val* numel = mul(mul(extents[0], extents[1]), extents[2]);
  Val* chunks = ceilDiv(extents[2], constant(2));
  ExpressionEvaluator ee;
  ee.bind(tv0, at::zeros({2, 3, 5}));
  EXPECT_EQ(ee.evaluateInt(extents[0]), 2);
  EXPECT_EQ(ee.evaluateInt(extents[1]), 3);
  EXPECT_EQ(ee.evaluateInt(extents[2]), 5);
  EXPECT_EQ(ee.evaluateInt(numel), 30);
  EXPECT_EQ(ee.evaluateInt(chunks), 3);
  EXPECT_EQ(ee.evaluateShape(tv0), (std::vector<int64_t>{2, 3, 5}));
}

TEST_F(ExpressionEvaluatorTest, SplitExtentsEvaluate) {
  TensorView* tv0 = makeContigTensor(2);
  tv0->split(0, 4);  // [ceilDiv(i0, 4), 4, i2]
  ExpressionEvaluator ee;
  ee.bind(tv0, at::zeros({10, 3}));
  EXPECT_EQ(ee.evaluateInt(tv0->axis(0)->extent()), 3);
  EXPECT_EQ(ee.evaluateInt(tv0->axis(1)->extent()), 4);
  EXPECT_EQ(ee.evaluateInt(tv0->axis(2)->extent()), 3);
}

TEST_F(ExpressionEvaluatorTest, SharedSymbolConflictNamesBothTensors) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeTensorOver(extentsOf(tv0));
  ExpressionEvaluator ee;
  ee.bind(tv0, at::zeros({2, 3}));
  ee.bind(tv1, at::zeros({2, 3}));  // agrees
  ExpressionEvaluator ee2;
  ee2.bind(tv0, at::zeros({2, 3}));
  EXPECT_HOSTIR_ERROR(ee2.bind(tv1, at::zeros({4, 3})),
                      {"size mismatch", tv0->toInlineString(), tv1->toInlineString(), "axis 0",
                       "size 2", "size 4"});
}

TEST_F(ExpressionEvaluatorTest, ConstantExtentChecked) {
  TensorView* tv0 = makeConcreteTensor({2, 3});
  ExpressionEvaluator ee;
  EXPECT_HOSTIR_ERROR(ee.bind(tv0, at::zeros({2, 4})), {"T0", "axis 1", "size 3", "size 4"});
}

TEST_F(ExpressionEvaluatorTest, EvaluatesTensorOpsOnDemand) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = add(tv0, 1.0);
  TensorView* tv2 = sum(mul(tv1, tv1), {1});
  ExpressionEvaluator ee;
  at::Tensor t0 = at::randn({3, 4});
  ee.bind(tv0, t0);
  EXPECT_TRUE(
      allClose(ee.evaluateTensor(tv2), ((t0 + 1) * (t0 + 1)).sum(at::IntArrayRef{1}), 1e-5, 1e-5));
  EXPECT_EQ(ee.evaluateShape(tv2), (std::vector<int64_t>{3}));
}

TEST_F(ExpressionEvaluatorTest, RebindingATensorInvalidatesDerivedTensors) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  ExpressionEvaluator ee;
  at::Tensor first = at::randn({4});
  at::Tensor second = at::randn({4});
  ee.bind(tv0, first);
  EXPECT_TRUE(allClose(ee.evaluateTensor(tv1), -first));
  ee.bind(tv0, second);
  EXPECT_TRUE(allClose(ee.evaluateTensor(tv1), -second));
}

TEST_F(ExpressionEvaluatorTest, SymbolicSelectIndex) {
  TensorView* tv0 = makeContigTensor(2);
  Scalar* index = symbol();
  TensorView* row = select(tv0, 0, add(index, constant(1)));
  ExpressionEvaluator ee;
  at::Tensor t0 = at::randn({4, 3});
  ee.bind(tv0, t0);
  for (int64_t i = 0; i < 3; ++i) {
    ee.bind(index, i);
    EXPECT_TRUE(allClose(ee.evaluateTensor(row), t0[i + 1])) << "index " << i;
  }
}

TEST_F(ExpressionEvaluatorTest, AtenOpEvaluatorDirect) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = tanh(tv0);
  Expr* def = tv1->definition();
  ASSERT_TRUE(isAtenEvaluable(def));
  ExpressionEvaluator ee;
  at::Tensor t0 = at::randn({2, 3});
  ee.bind(tv0, t0);
  std::vector<at::Tensor> outs = evaluateFusionOp(def, ee);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(allClose(outs[0], t0.tanh()));
  at::Tensor into = at::empty({2, 3});
  void* data = into.data_ptr();
  evaluateFusionOpInto(def, ee, into);
  EXPECT_EQ(into.data_ptr(), data);
  EXPECT_TRUE(allClose(into, t0.tanh()));
  // Scalar arithmetic is not an ATen op.
  Val* extent_sum = add(tv0->axis(0)->extent(), tv0->axis(1)->extent());
  EXPECT_FALSE(isAtenEvaluable(extent_sum->definition()));
}

// Merging permuted axes (the attention's heads back into rows) is no view
// of the input: into a given buffer it is one copy, with no tensor memory
// of ATen's own (a clone copied again, before).
TEST_F(ExpressionEvaluatorTest, AReshapeThatIsNoViewCopiesOnceIntoItsBuffer) {
  TensorView* heads = makeContigTensor(3);
  TensorView* merged = reshape(permute(heads, {1, 0, 2}), {5, 12});
  ExpressionEvaluator ee;
  at::Tensor t0 = at::randn({4, 5, 3});
  ee.bind(heads, t0);
  at::Tensor into = at::empty({5, 12});
  runtime::countTensorMemory();
  const int64_t extra =
      runtime::peakTensorBytesOf([&] { evaluateFusionOpInto(merged->definition(), ee, into); });
  EXPECT_EQ(extra, 0);
  EXPECT_TRUE(at::equal(into, t0.permute({1, 0, 2}).reshape({5, 12})));
  // A reshape that is a view, and one into a strided buffer, as before.
  TensorView* flat = reshape(heads, {20, 3});
  at::Tensor rows = at::empty({20, 6}).narrow(1, 0, 3);
  evaluateFusionOpInto(flat->definition(), ee, rows);
  EXPECT_TRUE(at::equal(rows, t0.reshape({20, 3})));
  at::Tensor strided = at::empty({5, 24}).narrow(1, 0, 12);
  evaluateFusionOpInto(merged->definition(), ee, strided);
  EXPECT_TRUE(at::equal(strided, t0.permute({1, 0, 2}).reshape({5, 12})));
  // A buffer of another element count: ATen's error, which names the sizes.
  at::Tensor wrong = at::empty({5, 11});
  EXPECT_HOSTIR_ERROR(evaluateFusionOpInto(merged->definition(), ee, wrong),
                      {"shape '[5, 11]' is invalid for input of size 60"});
}

TEST_F(ExpressionEvaluatorTest, ValidateInputsStandalone) {
  TensorView* tv0 = makeContigTensor(1);
  Scalar* s = symbol();
  std::vector<Val*> expected{tv0, s};
  validateInputs(expected, {at::zeros({3}), int64_t{2}}, "my program");
  EXPECT_HOSTIR_ERROR(validateInputs(expected, {at::zeros({3})}, "my program"),
                      {"my program", "expects 2 inputs"});
}

// --- cloning ---------------------------------------------------------------------------

// Builds the same small program into `fusion`: linear -> gelu -> slice ->
// sum with a scalar input, a broadcast and a reshape.
void buildProgram(Fusion& fusion) {
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  Scalar* scale = IrBuilder::create<Scalar>(DataType::Double);
  fusion.addInput(x);
  fusion.addInput(w);
  fusion.addInput(scale);
  TensorView* h = gelu(linear(x, w));
  TensorView* s = mul(slice(h, 1, 1, 3), scale);
  TensorView* r = sum(s, {0}, /*keep_dim=*/true);
  fusion.addOutput(add(s, r));
  fusion.addOutput(reshape(h, {-1}));
}

TEST(CloneTest, ClonedFusionRunsAndPrintsIdentically) {
  at::manual_seed(0);
  auto original = std::make_unique<Fusion>();
  buildProgram(*original);
  auto copy = std::make_unique<Fusion>();
  copyFusion(*original, *copy);
  EXPECT_EQ(copy->toString(), original->toString());
  EXPECT_EQ(copy->exprs().size(), original->exprs().size());

  at::Tensor x = at::randn({4, 3});
  at::Tensor w = at::randn({5, 3});
  std::vector<PolymorphicValue> inputs{x, w, 0.5};
  at::Tensor h = at::gelu(at::linear(x, w));
  at::Tensor s = h.slice(1, 1, 3) * 0.5;
  at::Tensor expected0 = s + s.sum(at::IntArrayRef{0}, true);

  FusionExecutor original_fe(std::move(original));
  FusionExecutor copy_fe(std::move(copy));
  std::vector<at::Tensor> a = original_fe.run(inputs);
  std::vector<at::Tensor> b = copy_fe.run(inputs);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_TRUE(allClose(a[0], expected0, 1e-5, 1e-5));
  EXPECT_TRUE(allClose(a[1], h.reshape({-1}), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(b[0], a[0], 0, 0));
  EXPECT_TRUE(allClose(b[1], a[1], 0, 0));
}

// FusionExecutor takes a `const Fusion&` as HostExecutor and
// MultiDeviceExecutor do, and keeps a copy: the fusion may go away.
TEST(CloneTest, FusionExecutorOfAConstFusionKeepsACopy) {
  at::manual_seed(0);
  auto original = std::make_unique<Fusion>();
  buildProgram(*original);
  const Fusion& borrowed = *original;
  FusionExecutor fe(borrowed);
  EXPECT_NE(&fe.fusion(), original.get());
  EXPECT_EQ(fe.fusion().toString(), original->toString());
  original.reset();
  at::Tensor x = at::randn({2, 3});
  at::Tensor w = at::randn({4, 3});
  std::vector<at::Tensor> outs = fe.run({x, w, 2.0});
  at::Tensor h = at::gelu(at::linear(x, w));
  at::Tensor s = h.slice(1, 1, 3) * 2.0;
  EXPECT_TRUE(allClose(outs[0], s + s.sum(at::IntArrayRef{0}, true), 1e-5, 1e-5));
}

TEST(CloneTest, CloneOutlivesOriginal) {
  at::manual_seed(0);
  auto copy = std::make_unique<Fusion>();
  {
    Fusion original;
    buildProgram(original);
    copyFusion(original, *copy);
  }
  FusionExecutor fe(std::move(copy));
  at::Tensor x = at::randn({2, 3});
  at::Tensor w = at::randn({4, 3});
  std::vector<at::Tensor> outs = fe.run({x, w, 2.0});
  at::Tensor h = at::gelu(at::linear(x, w));
  at::Tensor s = h.slice(1, 1, 3) * 2.0;
  EXPECT_TRUE(allClose(outs[0], s + s.sum(at::IntArrayRef{0}, true), 1e-5, 1e-5));
  // Validation still names the cloned inputs.
  EXPECT_HOSTIR_ERROR(fe.run(std::vector<PolymorphicValue>{x, w}), {"expects 3 inputs"});
}

}  // namespace
}  // namespace hostir::test
