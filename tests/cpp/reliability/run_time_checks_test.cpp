// Issue 11, items 3, 4 and 6: what used to be silently wrong or crash at run
// time — split factors given at run time, operand extents the fusion ties
// together, integer overflow in scalar arithmetic, ATen errors escaping
// without naming the op — now ends in a short hostir::Error, cause first.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "hostir/ir/scalar.h"
#include "hostir/runtime/expression_evaluator.h"
#include "reliability/reliability_test_utils.h"

namespace hostir::test {
namespace {

class RunTimeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

// --- item 4a: a split factor given at run time -----------------------------

TEST_F(RunTimeCheckTest, RunTimeSplitFactorMustBePositive) {
  for (bool inner_split : {false, true}) {
    SCOPED_TRACE(inner_split ? "inner split" : "outer split");
    Fusion fusion;
    FusionGuard guard(&fusion);
    TensorView* in = makeContigTensor(2);
    fusion.addInput(in);
    Scalar* factor = scalarInput(DataType::Int64);
    TensorView* out = set(in);
    out->split(0, factor, inner_split);
    out->axis(0)->parallelize(ParallelType::Stream);
    fusion.addOutput(out);

    HostExecutor executor(fusion);
    at::Tensor t0 = at::randn({8, 3});
    for (int64_t good : {1, 2, 3, 8, 11}) {
      std::vector<at::Tensor> outs = executor.run(std::vector<PolymorphicValue>{t0, good});
      EXPECT_TRUE(at::equal(outs[0], t0)) << "factor " << good;
    }
    for (int64_t bad : {0, -1, -4}) {
      std::string message = errorMessage([&] {
        executor.run(std::vector<PolymorphicValue>{t0, bad});
      });
      EXPECT_EQ(message.rfind("split factor", 0), 0u) << message;
      EXPECT_TRUE(containsAll(message, {"evaluates to " + std::to_string(bad), "must be positive",
                                        out->toInlineString()}));
    }
  }
}

// --- item 4b: extents the fusion ties together ------------------------------

TEST_F(RunTimeCheckTest, StreamParallelAddOfMismatchedInputsRaisesNamingTheOp) {
  TensorView* x = makeContigTensor(2);
  TensorView* y = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addInput(y);
  TensorView* out = add(x, y);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);

  for (int streams : {1, 4}) {
    HostExecutor executor(fusion_, HostIrEvaluatorParams{.number_of_streams = streams});
    at::Tensor a = at::randn({4, 4});
    at::Tensor b = at::randn({8, 4});
    std::string message = errorMessage([&] { executor.run({a, b}); });
    EXPECT_TRUE(containsAll(message, {"= add(", "[4, 4]", "[8, 4]"})) << message;
    EXPECT_LT(message.size(), 800u) << message;
    // Either order of the operands.
    message = errorMessage([&] { executor.run({b, a}); });
    EXPECT_TRUE(containsAll(message, {"= add(", "[4, 4]", "[8, 4]"})) << message;
    // Matching inputs still work, also after the errors.
    at::Tensor c = at::randn({4, 4});
    EXPECT_TRUE(allClose(executor.run({a, c})[0], a + c));
  }
}

TEST_F(RunTimeCheckTest, StreamParallelMatmulWithMismatchedInnerExtentRaises) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion_.addInput(a);
  fusion_.addInput(b);
  TensorView* out = matmul(a, b);
  out->split(0, 2, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_);
  std::string message = errorMessage([&] { executor.run({at::randn({6, 5}), at::randn({4, 3})}); });
  EXPECT_TRUE(containsAll(message, {"= matmul(", "[6, 5]", "[4, 3]"})) << message;
}

TEST_F(RunTimeCheckTest, ChecksRunOncePerInputSignature) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  TensorView* out = relu(x);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_);
  executor.run({at::randn({2, 3})});
  executor.run({at::randn({2, 3})});
  EXPECT_EQ(executor.checks().checkedSignatures(), 1u);
  executor.run({at::randn({3, 3})});
  EXPECT_EQ(executor.checks().checkedSignatures(), 2u);
}

// --- item 6: ATen errors name the op, cause first, short ---------------------

// Rows [start, stop) of t as torch's documented rule takes them: a negative
// bound counts from the end, then both are clamped into [0, n].
at::Tensor torchRows(const at::Tensor& t, int64_t start, int64_t stop) {
  const int64_t n = t.size(0);
  auto bound = [n](int64_t b) { return std::clamp(b < 0 ? b + n : b, int64_t{0}, n); };
  return t.slice(0, bound(start), std::max(bound(start), bound(stop)));
}

// Issue 22, item 1: run-time bounds are taken as torch takes them (negative
// from the end, clamped into [0, n], start after stop empty), in the
// extent every later use reads: the op computing on the slice, the output,
// fd.ops.size of it. Before, the extent was stop - start: rows 2:20 of 6
// rows made a [18, 3] output that the computed [4, 3] did not fill.
TEST_F(RunTimeCheckTest, RunTimeSliceBoundsClampLikeTorch) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  TensorView* sliced = slice(x, 0, start, stop);
  fusion_.addOutput(mul(sliced, 2.0));
  fusion_.addOutput(sliced);
  TensorView* extent =
      full({sliced->axis(0)->extent()}, IrBuilder::create<Scalar>(1.0), DataType::Float);
  fusion_.addOutput(extent);
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({6, 3});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const std::vector<std::pair<int64_t, int64_t>> bounds = {
      {1, 4}, {2, 20}, {-2, 6},   {-3, -1},     {-20, 2},
      {5, 2}, {7, 9},  {0, kMax}, {kMin, kMax}, {6, 6}};
  for (const auto& [first, last] : bounds) {
    SCOPED_TRACE("rows " + std::to_string(first) + ":" + std::to_string(last));
    at::Tensor expected = torchRows(t0, first, last);
    std::vector<at::Tensor> outs = executor.run(std::vector<PolymorphicValue>{t0, first, last});
    EXPECT_TRUE(allClose(outs[0], expected * 2.0));
    EXPECT_TRUE(allClose(outs[1], expected));
    EXPECT_EQ(outs[2].size(0), expected.size(0));
    // Preallocated outputs of torch's extents are what the program expects.
    std::vector<at::Tensor> buffers = {at::empty_like(expected), at::empty_like(expected),
                                       at::empty({expected.size(0)})};
    outs = executor.run(std::vector<PolymorphicValue>{t0, first, last}, buffers);
    EXPECT_TRUE(allClose(buffers[0], expected * 2.0));
  }
}

TEST_F(RunTimeCheckTest, RunTimeSliceOverStreamsCoversTorchsRows) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  TensorView* out = mul(relu(slice(x, 0, start, stop)), 3.0);
  out->split(0, 2, /*inner_split=*/false);
  out->axis(0)->parallelize(ParallelType::Stream);
  fusion_.addOutput(out);
  HostExecutor executor(fusion_, HostIrEvaluatorParams{.number_of_streams = 2});
  at::Tensor t0 = at::randn({8, 4});
  for (const auto& [first, last] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 20}, {-5, 100}, {1, 4}, {6, 3}}) {
    EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, first, last})[0],
                         at::relu(torchRows(t0, first, last)) * 3.0))
        << first << ":" << last;
  }
}

// Issue 22, item 2: a scalar input's value must fit its dtype.
TEST_F(RunTimeCheckTest, ScalarInputThatDoesNotFitItsDtypeNamesTheInput) {
  struct Case {
    DataType dtype;
    PolymorphicValue value;
    std::string valid;
  };
  const std::vector<Case> bad = {
      {DataType::Bool, int64_t{7}, "True, False, 0 or 1"},
      {DataType::Bool, 0.5, "True, False, 0 or 1"},
      {DataType::Int64, 2.5, "an integer"},
      {DataType::Int32, int64_t{1} << 31, "an integer from -2147483648 to 2147483647"},
  };
  for (const Case& c : bad) {
    Fusion fusion;
    FusionGuard guard(&fusion);
    TensorView* x = makeContigTensor(1);
    fusion.addInput(x);
    Scalar* s = scalarInput(c.dtype);
    fusion.addOutput(mul(x, s));
    HostExecutor executor(fusion);
    std::string message = errorMessage([&] {
      executor.run(std::vector<PolymorphicValue>{at::ones({3}), c.value});
    });
    EXPECT_EQ(message.rfind("scalar value out of its dtype", 0), 0u) << message;
    EXPECT_TRUE(containsAll(message, {"input 1 " + s->toInlineString(),
                                      "has dtype " + toString(c.dtype) + " but got", c.valid}))
        << message;
  }
  // What fits is taken as torch takes it: a bool for an Int64 extent is 0 or
  // 1 (before: "std::get: wrong index for variant"), an int for a Double.
  Fusion fusion;
  FusionGuard guard(&fusion);
  Scalar* n = scalarInput(DataType::Int64);
  Scalar* d = scalarInput(DataType::Double);
  fusion.addOutput(full({n, IrBuilder::create<Scalar>(int64_t{2})}, d, DataType::Float));
  HostExecutor executor(fusion);
  at::Tensor out = executor.run(std::vector<PolymorphicValue>{true, int64_t{3}})[0];
  EXPECT_TRUE(allClose(out, at::full({1, 2}, 3.0)));
}

// Issue 22, item 3: a preallocated output that shares memory with an input
// is an error naming both (before: ATen's out= rule gave zeros).
TEST_F(RunTimeCheckTest, OutputBufferAliasingAnInputIsAnError) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  fusion_.addOutput(add(relu(x), 1.0));
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({4, 3});
  for (const at::Tensor& alias : {t0, t0.view({4, 3}), t0.t().t(), t0.slice(0, 0, 4)}) {
    std::string message = errorMessage([&] { executor.run({t0}, {alias}); });
    EXPECT_EQ(message.rfind("an output buffer aliases an input", 0), 0u) << message;
    // The host program's own copies of the tensors are named (T1, T0).
    EXPECT_TRUE(containsAll(message, {"output 0 T1_g_float", "input 0 T0_g_float"})) << message;
  }
  // Disjoint parts of one storage, and a buffer of its own, are fine.
  at::Tensor storage = at::randn({8, 3});
  at::Tensor top = storage.slice(0, 0, 4);
  at::Tensor bottom = storage.slice(0, 4, 8);
  executor.run({top}, {bottom});
  EXPECT_TRUE(allClose(bottom, at::relu(top) + 1.0));
  at::Tensor own = at::empty({4, 3});
  executor.run({t0}, {own});
  EXPECT_TRUE(allClose(own, at::relu(t0) + 1.0));
}

// Found while writing the test above: a HostUnit reading a tensor whose
// extents are expressions of scalar inputs (`i3 - i2` of a run-time slice)
// is not given those scalars, so its FusionExecutor failed with "i2 has no
// value". The segment now takes such an extent from the tensor bound to it.
TEST_F(RunTimeCheckTest, SegmentReadingARunTimeSliceKnowsItsExtents) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  fusion_.addOutput(relu(slice(x, 0, start, stop)));  // relu: a HostUnit
  HostExecutor executor(fusion_);
  at::Tensor t0 = at::randn({6, 3});
  EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, int64_t{1}, int64_t{4}})[0],
                       at::relu(t0.slice(0, 1, 4))));
  // Other bounds on the next runs: nothing of the first run's extent stays.
  EXPECT_TRUE(allClose(executor.run(std::vector<PolymorphicValue>{t0, int64_t{0}, int64_t{6}})[0],
                       at::relu(t0)));
  EXPECT_EQ(executor.run(std::vector<PolymorphicValue>{t0, int64_t{2}, int64_t{2}})[0].size(0), 0);
}

TEST_F(RunTimeCheckTest, HugeAllocationNamesTheTensor) {
  TensorView* x = makeContigTensor(2);
  fusion_.addInput(x);
  Scalar* rows = scalarInput(DataType::Int64);
  // 2^40 x 2^30 floats: more bytes than 64 bits count, caught before any
  // memory is touched.
  TensorView* big = full({rows, IrBuilder::create<Scalar>(int64_t{1} << 30)},
                         IrBuilder::create<Scalar>(1.0), DataType::Float);
  fusion_.addOutput(relu(x));
  fusion_.addOutput(big);
  HostExecutor executor(fusion_);
  std::string message = errorMessage([&] {
    executor.run(std::vector<PolymorphicValue>{at::randn({1, 1}), int64_t{1} << 40});
  });
  EXPECT_EQ(message.rfind("tensor too large", 0), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"full("})) << message;
  // A large allocation that fits in 64 bits but not in memory: ATen's
  // error, without its backtrace, naming the allocation.
  message = errorMessage([&] {
    executor.run(std::vector<PolymorphicValue>{at::randn({1, 1}), int64_t{1} << 28});
  });
  EXPECT_TRUE(containsAll(message, {"T"})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
  EXPECT_LT(message.size(), 800u) << message;
}

TEST_F(RunTimeCheckTest, AtenErrorOnAStreamIsShortWithTheCauseFirst) {
  // A host program built by hand (no fusion checks): the ATen error happens
  // on a worker stream inside a loop.
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  hic->addInput(a);
  hic->addInput(b);
  hic->pushBackTopLevelExpr(IrBuilder::create<SetCurrentStream>(
      IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}))));
  TensorView* product = matmul(a, b);
  hic->pushBackTopLevelExpr(product->definition());
  hic->addOutput(product);
  HostIrEvaluator evaluator(std::move(hic));
  std::string message = errorMessage([&] {
    evaluator.run({at::randn({2, 3}), at::randn({4, 5})});
  });
  EXPECT_EQ(message.find("mat1 and mat2 shapes cannot be multiplied"), 0u) << message;
  EXPECT_TRUE(containsAll(message, {"stream 2 failed running", "= matmul("})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;  // no backtrace
  EXPECT_LT(message.size(), 600u) << message;
}

TEST_F(RunTimeCheckTest, AtenErrorOnTheHostNamesTheOp) {
  // A reshape whose target does not fit, bound on the host (a view).
  auto hic = std::make_unique<HostIrContainer>();
  FusionGuard guard(hic.get());
  TensorView* x = makeContigTensor(2);
  hic->addInput(x);
  TensorView* reshaped = reshape(x, {5, 5});
  hic->pushBackTopLevelExpr(reshaped->definition());
  hic->addOutput(reshaped);
  HostIrEvaluator evaluator(std::move(hic));
  std::string message = errorMessage([&] { evaluator.run({at::randn({3, 4})}); });
  EXPECT_TRUE(containsAll(message, {"reshape("})) << message;
  EXPECT_EQ(message.find("Exception raised from"), std::string::npos) << message;
  EXPECT_LT(message.size(), 600u) << message;
}

// --- item 3: scalar arithmetic overflow --------------------------------------

TEST_F(RunTimeCheckTest, ScalarOverflowAtRunTimeIsAnError) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto* a = IrBuilder::create<Scalar>(DataType::Int64);
  auto* b = IrBuilder::create<Scalar>(DataType::Int64);
  struct Case {
    Val* expr;
    int64_t lhs;
    int64_t rhs;
  };
  for (const Case& c :
       {Case{div(a, b), kMin, -1}, Case{ceilDiv(a, b), kMin, -1}, Case{add(a, b), kMax, 1},
        Case{sub(a, b), kMin, 1}, Case{mul(a, b), kMax / 2 + 1, 2}, Case{ceilDiv(a, b), kMax, 2}}) {
    ExpressionEvaluator ee;
    ee.bind(a, c.lhs);
    ee.bind(b, c.rhs);
    if (c.lhs == kMax && c.rhs == 2 &&
        c.expr->definition()->as<BinaryOp>()->type() == BinaryOpType::CeilDiv) {
      EXPECT_EQ(ee.evaluateInt(c.expr), kMax / 2 + 1);  // no overflow in (a + b - 1)
      continue;
    }
    std::string message = errorMessage([&] { ee.evaluateInt(c.expr); });
    EXPECT_EQ(message.rfind("integer overflow", 0), 0u) << message;
    EXPECT_TRUE(containsAll(message, {c.expr->toInlineString()})) << message;
  }
  ExpressionEvaluator ee;
  ee.bind(a, kMin);
  ee.bind(b, int64_t{-1});
  EXPECT_EQ(ee.evaluateInt(mod(a, b)), 0);  // defined, and no SIGFPE
}

}  // namespace
}  // namespace hostir::test
