// Every fusion op run through FusionExecutor and compared with plain ATen on
// the same inputs: values, dtypes (incl. type promotion), broadcasting,
// reductions, matmul/linear shapes, views, factories and an MLP chain.

#include <ATen/ScalarOps.h>

#include <algorithm>
#include <complex>
#include <functional>

#include "common/scoped_env.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using OpsTest = RuntimeTest;

// --- unary ops ---------------------------------------------------------------

struct UnaryCase {
  std::string name;
  std::function<TensorView*(TensorView*)> build;
  std::function<at::Tensor(const at::Tensor&)> reference;
  bool positive_inputs = false;
};

void PrintTo(const UnaryCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<UnaryCase> unaryCases() {
  return {
      {"set", [](TensorView* t) { return set(t); }, [](const at::Tensor& t) { return t.clone(); }},
      {"neg", [](TensorView* t) { return neg(t); }, [](const at::Tensor& t) { return at::neg(t); }},
      {"abs", [](TensorView* t) { return abs(t); }, [](const at::Tensor& t) { return at::abs(t); }},
      {"exp", [](TensorView* t) { return exp(t); }, [](const at::Tensor& t) { return at::exp(t); }},
      {"log", [](TensorView* t) { return log(t); }, [](const at::Tensor& t) { return at::log(t); },
       true},
      {"sqrt", [](TensorView* t) { return sqrt(t); },
       [](const at::Tensor& t) { return at::sqrt(t); }, true},
      {"relu", [](TensorView* t) { return relu(t); },
       [](const at::Tensor& t) { return at::relu(t); }},
      {"sigmoid", [](TensorView* t) { return sigmoid(t); },
       [](const at::Tensor& t) { return at::sigmoid(t); }},
      {"tanh", [](TensorView* t) { return tanh(t); },
       [](const at::Tensor& t) { return at::tanh(t); }},
      // hostir's gelu computes integer inputs in float like exp/tanh do; ATen's
      // gelu has no integer kernel, so the reference casts first.
      {"gelu", [](TensorView* t) { return gelu(t); },
       [](const at::Tensor& t) {
         return at::gelu(at::isFloatingType(t.scalar_type()) ? t : t.to(at::kFloat));
       }},
  };
}

class UnaryOpTest : public RuntimeTest,
                    public ::testing::WithParamInterface<std::tuple<UnaryCase, at::ScalarType>> {};

TEST_P(UnaryOpTest, MatchesAten) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  fusion().addOutput(op.build(tv0));

  at::Tensor t0 = randomTensor({5, 7}, type);
  if (op.positive_inputs) {
    t0 = t0.abs() + 1;  // stays integral for integer dtypes
  }
  // ATen's CPU kernels lack Half for most math ops: the reference computes
  // those in float and rounds, as hostir does.
  auto reference = [&](const at::Tensor& t) {
    return type == at::kHalf ? op.reference(t.to(at::kFloat)).to(at::kHalf) : op.reference(t);
  };
  at::Tensor expected = reference(t0);
  at::Tensor before = t0.clone();
  std::vector<at::Tensor> outs = run({t0});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(allClose(outs[0], expected, rtolFor(expected.scalar_type()), 1e-3));
  // The input is not modified.
  EXPECT_TRUE(at::equal(t0, before));
}

std::string unaryName(const ::testing::TestParamInfo<UnaryOpTest::ParamType>& info) {
  return std::get<0>(info.param).name + "_" + toString(fromAtenType(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(FloatingTypes, UnaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(unaryCases()),
                                            ::testing::Values(at::kFloat, at::kDouble, at::kHalf,
                                                              at::kBFloat16)),
                         unaryName);

// Integer inputs: neg/abs/relu stay integral, exp/log/... compute in float as
// in ATen.
INSTANTIATE_TEST_SUITE_P(IntegerTypes, UnaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(unaryCases()),
                                            ::testing::Values(at::kInt, at::kLong)),
                         unaryName);

TEST_F(OpsTest, UnaryOnBoolIsRejectedAtBuildTime) {
  TensorView* tv0 = makeContigTensor(1, DataType::Bool);
  EXPECT_HOSTIR_ERROR(neg(tv0), {"bool", "T0"});
}

// --- complex dtypes ------------------------------------------------------------

class ComplexOpsTest : public RuntimeTest, public ::testing::WithParamInterface<at::ScalarType> {};

// A complex chain, its parts (real dtype) and a sum through the executor
// (ATen runs them: Halide has no complex type), with a complex constant and
// a complex scalar input, against ATen.
TEST_P(ComplexOpsTest, PointwisePartsAndSumMatchAten) {
  const at::ScalarType type = GetParam();
  TensorView* a = makeContigTensor(2, fromAtenType(type));
  auto* s = IrBuilder::create<Scalar>(DataType::ComplexDouble);
  fusion().addInput(a);
  fusion().addInput(s);
  auto* c = IrBuilder::create<Scalar>(std::complex<double>(1.0, -2.0));
  TensorView* chain = div(mul(add(a, c), a), rsqrt(add(a, s)));
  fusion().addOutput(chain);
  fusion().addOutput(add(real(chain), imag(a)));
  fusion().addOutput(sum(a, {1}));
  at::Tensor ta = randomTensor({3, 5}, at::kFloat).to(type) +
                  randomTensor({3, 5}, at::kFloat).to(type) * c10::complex<double>(0, 1);
  const std::complex<double> s_value(0.5, 0.25);
  std::vector<at::Tensor> outs = run({ta, s_value});
  const c10::complex<double> c_aten(1.0, -2.0);
  const c10::complex<double> s_aten(0.5, 0.25);
  at::Tensor expected = (ta + c_aten) * ta / at::rsqrt(ta + s_aten);
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[0].scalar_type(), type);
  EXPECT_TRUE(at::allclose(outs[0], expected, 1e-5, 1e-5));
  EXPECT_EQ(outs[1].scalar_type(), at::toRealValueType(type));
  EXPECT_TRUE(at::allclose(outs[1], at::real(expected) + at::imag(ta), 1e-5, 1e-5));
  EXPECT_EQ(outs[2].scalar_type(), type);
  EXPECT_TRUE(at::allclose(outs[2], ta.sum(1), 1e-5, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(ComplexTypes, ComplexOpsTest,
                         ::testing::Values(at::kComplexFloat, at::kComplexDouble),
                         [](const ::testing::TestParamInfo<at::ScalarType>& info) {
                           return toString(fromAtenType(info.param));
                         });

// --- casts ---------------------------------------------------------------------

struct CastCase {
  at::ScalarType from;
  at::ScalarType to;
};

void PrintTo(const CastCase& c, std::ostream* os) {
  *os << c.from << "->" << c.to;
}

class CastTest : public RuntimeTest, public ::testing::WithParamInterface<CastCase> {};

TEST_P(CastTest, MatchesAtenTo) {
  CastCase c = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(c.from));
  fusion().addInput(tv0);
  TensorView* tv1 = castOp(fromAtenType(c.to), tv0);
  EXPECT_EQ(tv1->dtype(), fromAtenType(c.to));
  fusion().addOutput(tv1);
  at::Tensor t0 = randomTensor({4, 6}, c.from) * 3;
  if (c.from == at::kBool) {
    t0 = randomTensor({4, 6}, c.from);
  }
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], t0.to(c.to), 0, 0));
}

INSTANTIATE_TEST_SUITE_P(
    Casts, CastTest,
    ::testing::Values(CastCase{at::kFloat, at::kLong}, CastCase{at::kInt, at::kFloat},
                      CastCase{at::kLong, at::kFloat}, CastCase{at::kFloat, at::kHalf},
                      CastCase{at::kFloat, at::kBFloat16}, CastCase{at::kHalf, at::kFloat},
                      CastCase{at::kDouble, at::kFloat}, CastCase{at::kBool, at::kFloat},
                      CastCase{at::kFloat, at::kBool}, CastCase{at::kInt, at::kLong}),
    [](const ::testing::TestParamInfo<CastCase>& info) {
      return toString(fromAtenType(info.param.from)) + "_to_" +
             toString(fromAtenType(info.param.to));
    });

// --- binary ops ----------------------------------------------------------------

struct BinaryCase {
  std::string name;
  BinaryOpType type;
};

void PrintTo(const BinaryCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<BinaryCase> binaryCases() {
  return {{"add", BinaryOpType::Add},         {"sub", BinaryOpType::Sub},
          {"mul", BinaryOpType::Mul},         {"div", BinaryOpType::Div},
          {"maximum", BinaryOpType::Maximum}, {"minimum", BinaryOpType::Minimum}};
}

Val* buildBinary(BinaryOpType type, Val* lhs, Val* rhs) {
  switch (type) {
    case BinaryOpType::Add: return add(lhs, rhs);
    case BinaryOpType::Sub: return sub(lhs, rhs);
    case BinaryOpType::Mul: return mul(lhs, rhs);
    case BinaryOpType::Div: return div(lhs, rhs);
    case BinaryOpType::Maximum: return maximum(lhs, rhs);
    case BinaryOpType::Minimum: return minimum(lhs, rhs);
    default: break;
  }
  ADD_FAILURE() << "not a tensor op";
  return nullptr;
}

at::Tensor referenceBinary(BinaryOpType type, const at::Tensor& lhs, const at::Tensor& rhs) {
  switch (type) {
    case BinaryOpType::Add: return at::add(lhs, rhs);
    case BinaryOpType::Sub: return at::sub(lhs, rhs);
    case BinaryOpType::Mul: return at::mul(lhs, rhs);
    case BinaryOpType::Div: return at::div(lhs, rhs);
    case BinaryOpType::Maximum: return at::maximum(lhs, rhs);
    case BinaryOpType::Minimum: return at::minimum(lhs, rhs);
    default: break;
  }
  ADD_FAILURE() << "not a tensor op";
  return {};
}

// A tensor op with a Python-style scalar operand: ATen's own result type for
// (tensor, scalar), then the op on a 0-dim tensor of that type.
at::Tensor referenceWithScalar(BinaryOpType type, const at::Tensor& t, const at::Scalar& s,
                               bool scalar_first) {
  at::ScalarType result = at::result_type(t, s);
  at::Tensor st = at::scalar_tensor(s, at::TensorOptions().dtype(result));
  at::Tensor tt = t.to(result);
  return scalar_first ? referenceBinary(type, st, tt) : referenceBinary(type, tt, st);
}

class BinaryOpTest : public RuntimeTest,
                     public ::testing::WithParamInterface<std::tuple<BinaryCase, at::ScalarType>> {
 protected:
  at::Tensor input(at::IntArrayRef sizes) {
    at::ScalarType type = std::get<1>(GetParam());
    at::Tensor t = randomTensor(sizes, type);
    // Keep divisors away from zero.
    if (std::get<0>(GetParam()).type == BinaryOpType::Div) {
      t = at::where(t == 0, at::ones_like(t), t);
    }
    return t;
  }
  double rtol() const {
    return rtolFor(std::get<1>(GetParam()));
  }
};

std::string binaryName(const ::testing::TestParamInfo<BinaryOpTest::ParamType>& info) {
  return std::get<0>(info.param).name + "_" + toString(fromAtenType(std::get<1>(info.param)));
}

TEST_P(BinaryOpTest, TensorTensor) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  TensorView* tv1 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  auto* out = buildBinary(op.type, tv0, tv1)->as<TensorView>();
  fusion().addOutput(out);
  at::Tensor t0 = input({4, 5});
  at::Tensor t1 = input({4, 5});
  at::Tensor expected = referenceBinary(op.type, t0, t1);
  EXPECT_EQ(toAtenType(out->dtype()), expected.scalar_type());
  EXPECT_TRUE(allClose(run({t0, t1})[0], expected, rtol(), 1e-3));
}

TEST_P(BinaryOpTest, TensorDoubleConstant) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  auto* out = buildBinary(op.type, tv0, IrBuilder::create<Scalar>(2.5))->as<TensorView>();
  fusion().addOutput(out);
  at::Tensor t0 = input({3, 4});
  at::Tensor expected = referenceWithScalar(op.type, t0, 2.5, false);
  EXPECT_EQ(toAtenType(out->dtype()), expected.scalar_type());
  EXPECT_TRUE(allClose(run({t0})[0], expected, rtol(), 1e-3));
}

TEST_P(BinaryOpTest, IntConstantTensor) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  auto* out = buildBinary(op.type, IrBuilder::create<Scalar>(int64_t{3}), tv0)->as<TensorView>();
  fusion().addOutput(out);
  at::Tensor t0 = input({3, 4});
  at::Tensor expected = referenceWithScalar(op.type, t0, int64_t{3}, true);
  EXPECT_EQ(toAtenType(out->dtype()), expected.scalar_type());
  EXPECT_TRUE(allClose(run({t0})[0], expected, rtol(), 1e-3));
}

TEST_P(BinaryOpTest, ScalarFusionInput) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  Scalar* s = scalarInput(DataType::Double);
  auto* out = buildBinary(op.type, tv0, s)->as<TensorView>();
  fusion().addOutput(out);
  at::Tensor t0 = input({3, 4});
  for (double value : {-1.5, 0.75}) {
    at::Tensor expected = referenceWithScalar(op.type, t0, value, false);
    EXPECT_EQ(toAtenType(out->dtype()), expected.scalar_type());
    EXPECT_TRUE(allClose(run({t0, value})[0], expected, rtol(), 1e-3)) << "scalar " << value;
  }
}

TEST_P(BinaryOpTest, BroadcastSizeOneAxis) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeConcreteTensor({1, -1}, fromAtenType(type));
  TensorView* tv1 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(buildBinary(op.type, tv0, tv1)->as<TensorView>());
  at::Tensor t0 = input({1, 5});
  at::Tensor t1 = input({4, 5});
  EXPECT_TRUE(allClose(run({t0, t1})[0], referenceBinary(op.type, t0, t1), rtol(), 1e-3));
}

// Bit for bit what ATen computes for (tensor, Python number), whatever dtype
// the evaluator makes the wrapped number in (it makes it in the tensor's
// dtype where promotion lands there, so ATen need not convert it per call).
TEST_P(BinaryOpTest, ScalarOperandIsExactlyAtens) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  Scalar* as_double = scalarInput(DataType::Double);
  Scalar* as_int = scalarInput(DataType::Int64);
  auto* with_double = buildBinary(op.type, tv0, as_double)->as<TensorView>();
  auto* with_int = buildBinary(op.type, as_int, tv0)->as<TensorView>();
  fusion().addOutput(with_double);
  fusion().addOutput(with_int);
  at::Tensor t0 = input({5, 7});
  const double number = 0.1;  // not exact in any binary type
  const int64_t integer = 3;
  // Op by op through ATen (a compiled kernel is checked against ATen
  // elsewhere, within a tolerance).
  ScopedEnv aten_only("HOSTIR_KERNELS", "aten");
  std::vector<at::Tensor> outs = run({t0, number, integer});
  at::Tensor wrapped_double = c10::scalar_to_tensor(number);
  wrapped_double.unsafeGetTensorImpl()->set_wrapped_number(true);
  at::Tensor wrapped_int = c10::scalar_to_tensor(integer);
  wrapped_int.unsafeGetTensorImpl()->set_wrapped_number(true);
  at::Tensor expected_double = referenceBinary(op.type, t0, wrapped_double);
  at::Tensor expected_int = referenceBinary(op.type, wrapped_int, t0);
  ASSERT_EQ(outs[0].scalar_type(), expected_double.scalar_type());
  ASSERT_EQ(outs[1].scalar_type(), expected_int.scalar_type());
  EXPECT_TRUE(at::equal(outs[0], expected_double)) << outs[0] << expected_double;
  EXPECT_TRUE(at::equal(outs[1], expected_int)) << outs[1] << expected_int;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, BinaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(binaryCases()),
                                            ::testing::Values(at::kFloat, at::kDouble, at::kHalf,
                                                              at::kBFloat16, at::kInt, at::kLong)),
                         binaryName);

TEST_F(OpsTest, BroadcastOpThenAdd) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  TensorView* row = broadcast(tv0, {true, false});  // [1, N]
  TensorView* col = broadcast(tv0, {false, true});  // [N, 1]
  fusion().addOutput(add(row, tv1));
  fusion().addOutput(mul(col, row));
  at::Tensor t0 = at::randn({5});
  at::Tensor t1 = at::randn({3, 5});
  std::vector<at::Tensor> outs = run({t0, t1});
  EXPECT_TRUE(allClose(outs[0], t0.unsqueeze(0) + t1));
  EXPECT_TRUE(allClose(outs[1], t0.unsqueeze(1) * t0.unsqueeze(0)));
}

TEST_F(OpsTest, BroadcastOpOutput) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addOutput(broadcast(tv0, {false, true, false, true}));
  at::Tensor t0 = at::randn({3, 4});
  EXPECT_TRUE(allClose(run({t0})[0], t0.unsqueeze(1).unsqueeze(3)));
}

TEST_F(OpsTest, DifferentRanksAlignRight) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* tv1 = makeContigTensor(1);
  TensorView* tv2 = makeConcreteTensor({-1, 1});
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addInput(tv2);
  fusion().addOutput(sub(tv0, tv1));  // [2,3,4] - [4]
  fusion().addOutput(mul(tv1, tv0));  // [4] * [2,3,4]
  fusion().addOutput(add(tv2, tv1));  // [3,1] + [4] -> [3,4]
  at::Tensor t0 = at::randn({2, 3, 4});
  at::Tensor t1 = at::randn({4});
  at::Tensor t2 = at::randn({3, 1});
  std::vector<at::Tensor> outs = run({t0, t1, t2});
  EXPECT_TRUE(allClose(outs[0], t0 - t1));
  EXPECT_TRUE(allClose(outs[1], t1 * t0));
  EXPECT_TRUE(allClose(outs[2], t2 + t1));
}

// --- type promotion --------------------------------------------------------------

struct PromotionCase {
  std::string name;
  at::ScalarType lhs;
  at::ScalarType rhs;
  BinaryOpType op;
};

void PrintTo(const PromotionCase& c, std::ostream* os) {
  *os << c.name;
}

class PromotionTest : public RuntimeTest, public ::testing::WithParamInterface<PromotionCase> {};

TEST_P(PromotionTest, TensorTensorMatchesAtenDtype) {
  const PromotionCase& c = GetParam();
  TensorView* tv0 = makeContigTensor(1, fromAtenType(c.lhs));
  TensorView* tv1 = makeContigTensor(1, fromAtenType(c.rhs));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  auto* out = buildBinary(c.op, tv0, tv1)->as<TensorView>();
  fusion().addOutput(out);
  at::Tensor t0 = randomTensor({6}, c.lhs);
  at::Tensor t1 = randomTensor({6}, c.rhs);
  if (c.op == BinaryOpType::Div) {
    t1 = at::where(t1 == 0, at::ones_like(t1), t1);
  }
  at::Tensor expected = referenceBinary(c.op, t0, t1);
  EXPECT_EQ(toAtenType(out->dtype()), expected.scalar_type());
  EXPECT_TRUE(allClose(run({t0, t1})[0], expected, 1e-2, 1e-2));
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, PromotionTest,
    ::testing::Values(
        PromotionCase{"int32_add_float", at::kInt, at::kFloat, BinaryOpType::Add},
        PromotionCase{"int64_mul_double", at::kLong, at::kDouble, BinaryOpType::Mul},
        PromotionCase{"int32_add_int64", at::kInt, at::kLong, BinaryOpType::Add},
        PromotionCase{"int64_div_int64", at::kLong, at::kLong, BinaryOpType::Div},
        PromotionCase{"int32_div_int32", at::kInt, at::kInt, BinaryOpType::Div},
        PromotionCase{"half_add_float", at::kHalf, at::kFloat, BinaryOpType::Add},
        PromotionCase{"half_add_bfloat16", at::kHalf, at::kBFloat16, BinaryOpType::Add},
        PromotionCase{"float_sub_double", at::kFloat, at::kDouble, BinaryOpType::Sub},
        PromotionCase{"bool_maximum_bool", at::kBool, at::kBool, BinaryOpType::Maximum},
        PromotionCase{"bool_minimum_bool", at::kBool, at::kBool, BinaryOpType::Minimum},
        PromotionCase{"bool_add_int32", at::kBool, at::kInt, BinaryOpType::Add},
        PromotionCase{"bool_mul_float", at::kBool, at::kFloat, BinaryOpType::Mul}),
    [](const ::testing::TestParamInfo<PromotionCase>& info) { return info.param.name; });

TEST_F(OpsTest, Int32PlusDoubleScalarIsFloat) {
  TensorView* tv0 = makeContigTensor(1, DataType::Int32);
  fusion().addInput(tv0);
  TensorView* out = add(tv0, 2.5);
  EXPECT_EQ(out->dtype(), DataType::Float);
  fusion().addOutput(out);
  at::Tensor t0 = at::randint(-5, 5, {7}, at::TensorOptions().dtype(at::kInt));
  at::Tensor expected = t0 + 2.5;
  ASSERT_EQ(expected.scalar_type(), at::kFloat);
  EXPECT_TRUE(allClose(run({t0})[0], expected));
}

TEST_F(OpsTest, Int32PlusIntScalarStaysInt32) {
  TensorView* tv0 = makeContigTensor(1, DataType::Int32);
  fusion().addInput(tv0);
  fusion().addOutput(add(tv0, IrBuilder::create<Scalar>(int64_t{7})));
  at::Tensor t0 = at::randint(-5, 5, {7}, at::TensorOptions().dtype(at::kInt));
  at::Tensor expected = t0 + 7;
  ASSERT_EQ(expected.scalar_type(), at::kInt);
  EXPECT_TRUE(allClose(run({t0})[0], expected));
}

TEST_F(OpsTest, HalfTimesDoubleScalarStaysHalf) {
  TensorView* tv0 = makeContigTensor(1, DataType::Half);
  fusion().addInput(tv0);
  fusion().addOutput(mul(tv0, 0.5));
  at::Tensor t0 = at::randn({7}).to(at::kHalf);
  at::Tensor expected = t0 * 0.5;
  ASSERT_EQ(expected.scalar_type(), at::kHalf);
  EXPECT_TRUE(allClose(run({t0})[0], expected));
}

TEST_F(OpsTest, BoolPlusIntScalarIsInt64) {
  TensorView* tv0 = makeContigTensor(1, DataType::Bool);
  fusion().addInput(tv0);
  fusion().addOutput(add(tv0, IrBuilder::create<Scalar>(int64_t{2})));
  at::Tensor t0 = randomTensor({7}, at::kBool);
  EXPECT_TRUE(allClose(run({t0})[0], t0 + 2));
}

TEST_F(OpsTest, BoolCastToFloatThenAdd) {
  TensorView* tv0 = makeContigTensor(2, DataType::Bool);
  TensorView* tv1 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(castOp(DataType::Float, tv0), tv1));
  at::Tensor t0 = randomTensor({3, 4}, at::kBool);
  at::Tensor t1 = at::randn({3, 4});
  EXPECT_TRUE(allClose(run({t0, t1})[0], t0.to(at::kFloat) + t1));
}

// --- reductions --------------------------------------------------------------------

struct ReductionCase {
  std::string name;
  ReductionOpType type;
  std::vector<int64_t> axes;
  bool keep_dim;
};

void PrintTo(const ReductionCase& c, std::ostream* os) {
  *os << c.name;
}

class ReductionTest : public RuntimeTest, public ::testing::WithParamInterface<ReductionCase> {};

TEST_P(ReductionTest, MatchesAten) {
  const ReductionCase& c = GetParam();
  TensorView* tv0 = makeContigTensor(3);
  fusion().addInput(tv0);
  TensorView* out = nullptr;
  switch (c.type) {
    case ReductionOpType::Sum: out = sum(tv0, c.axes, c.keep_dim); break;
    case ReductionOpType::Max: out = max(tv0, c.axes, c.keep_dim); break;
    case ReductionOpType::Min: out = min(tv0, c.axes, c.keep_dim); break;
    case ReductionOpType::Product: out = prod(tv0, c.axes, c.keep_dim); break;
  }
  fusion().addOutput(out);
  // Values near 1 keep a product of up to 60 of them well inside float range.
  at::Tensor t0 = at::rand({3, 4, 5}) + 0.5;
  at::Tensor expected;
  switch (c.type) {
    case ReductionOpType::Sum: expected = at::sum(t0, c.axes, c.keep_dim); break;
    case ReductionOpType::Max: expected = at::amax(t0, c.axes, c.keep_dim); break;
    case ReductionOpType::Min: expected = at::amin(t0, c.axes, c.keep_dim); break;
    case ReductionOpType::Product: {
      // at::prod takes one axis: reduce the highest first.
      std::vector<int64_t> axes;
      for (int64_t axis : c.axes) {
        axes.push_back(axis < 0 ? axis + t0.dim() : axis);
      }
      std::sort(axes.rbegin(), axes.rend());
      expected = t0;
      for (int64_t axis : axes) {
        expected = at::prod(expected, axis, c.keep_dim);
      }
      break;
    }
  }
  EXPECT_EQ(out->rank(), expected.dim());
  EXPECT_TRUE(allClose(run({t0})[0], expected, 1e-5, 1e-5));
}

std::vector<ReductionCase> reductionCases() {
  std::vector<ReductionCase> cases;
  std::vector<std::pair<std::string, std::vector<int64_t>>> axes = {
      {"axis0", {0}}, {"axis1", {1}}, {"last", {-1}}, {"axes02", {0, 2}}, {"all", {0, 1, 2}}};
  std::vector<std::pair<std::string, ReductionOpType>> types = {{"sum", ReductionOpType::Sum},
                                                                {"max", ReductionOpType::Max},
                                                                {"min", ReductionOpType::Min},
                                                                {"prod", ReductionOpType::Product}};
  for (const auto& [type_name, type] : types) {
    for (const auto& [axes_name, axis_list] : axes) {
      for (bool keep : {false, true}) {
        cases.push_back(
            {type_name + "_" + axes_name + (keep ? "_keepdim" : ""), type, axis_list, keep});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Float, ReductionTest, ::testing::ValuesIn(reductionCases()),
                         [](const ::testing::TestParamInfo<ReductionCase>& info) {
                           return info.param.name;
                         });

TEST_F(OpsTest, IntSumIsInt64) {
  TensorView* tv0 = makeContigTensor(2, DataType::Int32);
  TensorView* tv1 = makeContigTensor(1, DataType::Bool);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  TensorView* s0 = sum(tv0, {1});
  TensorView* s1 = sum(tv1, {0});
  TensorView* m0 = max(tv0, {0}, true);
  EXPECT_EQ(s0->dtype(), DataType::Int64);
  EXPECT_EQ(s1->dtype(), DataType::Int64);
  EXPECT_EQ(m0->dtype(), DataType::Int32);
  fusion().addOutput(s0);
  fusion().addOutput(s1);
  fusion().addOutput(m0);
  at::Tensor t0 = randomTensor({4, 6}, at::kInt);
  at::Tensor t1 = randomTensor({9}, at::kBool);
  std::vector<at::Tensor> outs = run({t0, t1});
  EXPECT_TRUE(allClose(outs[0], at::sum(t0, at::IntArrayRef{1})));
  EXPECT_TRUE(allClose(outs[1], at::sum(t1, at::IntArrayRef{0})));
  EXPECT_TRUE(allClose(outs[2], at::amax(t0, {0}, true)));
}

TEST_F(OpsTest, ReductionOfHalfAndDouble) {
  TensorView* tv0 = makeContigTensor(2, DataType::Half);
  TensorView* tv1 = makeContigTensor(2, DataType::Double);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(sum(tv0, {1}));
  fusion().addOutput(min(tv1, {0, 1}));
  at::Tensor t0 = at::randn({4, 8}).to(at::kHalf);
  at::Tensor t1 = at::randn({4, 8}, at::TensorOptions().dtype(at::kDouble));
  std::vector<at::Tensor> outs = run({t0, t1});
  EXPECT_TRUE(allClose(outs[0], at::sum(t0, at::IntArrayRef{1}), 1e-2, 1e-2));
  EXPECT_TRUE(allClose(outs[1], at::amin(t1, {0, 1})));
}

// --- matmul and linear -----------------------------------------------------------

struct MatmulCase {
  std::string name;
  std::vector<int64_t> a;  // sizes; 1 makes a broadcast axis
  std::vector<int64_t> b;
};

void PrintTo(const MatmulCase& c, std::ostream* os) {
  *os << c.name;
}

class MatmulTest : public RuntimeTest, public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(MatmulTest, MatchesAten) {
  const MatmulCase& c = GetParam();
  auto symbolicExceptOnes = [](const std::vector<int64_t>& sizes) {
    std::vector<int64_t> spec;
    for (int64_t s : sizes) {
      spec.push_back(s == 1 ? 1 : -1);
    }
    return spec;
  };
  TensorView* tv0 = makeConcreteTensor(symbolicExceptOnes(c.a));
  TensorView* tv1 = makeConcreteTensor(symbolicExceptOnes(c.b));
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  TensorView* out = matmul(tv0, tv1);
  fusion().addOutput(out);
  at::Tensor t0 = at::randn(c.a);
  at::Tensor t1 = at::randn(c.b);
  at::Tensor expected = at::matmul(t0, t1);
  EXPECT_EQ(out->rank(), expected.dim());
  EXPECT_TRUE(allClose(run({t0, t1})[0], expected, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulTest,
    ::testing::Values(MatmulCase{"vec_vec", {6}, {6}}, MatmulCase{"mat_vec", {3, 6}, {6}},
                      MatmulCase{"vec_mat", {6}, {6, 4}}, MatmulCase{"mat_mat", {3, 6}, {6, 4}},
                      MatmulCase{"batched", {2, 3, 6}, {2, 6, 4}},
                      MatmulCase{"batched_times_mat", {2, 3, 6}, {6, 4}},
                      MatmulCase{"mat_times_batched", {3, 6}, {2, 6, 4}},
                      MatmulCase{"broadcast_batch", {1, 3, 6}, {2, 6, 4}},
                      MatmulCase{"batched_times_vec", {2, 3, 6}, {6}},
                      MatmulCase{"four_d", {2, 2, 3, 6}, {2, 6, 4}}),
    [](const ::testing::TestParamInfo<MatmulCase>& info) { return info.param.name; });

TEST_F(OpsTest, MatmulDouble) {
  TensorView* tv0 = makeContigTensor(2, DataType::Double);
  TensorView* tv1 = makeContigTensor(2, DataType::Double);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(matmul(tv0, tv1));
  at::Tensor t0 = at::randn({3, 5}, at::TensorOptions().dtype(at::kDouble));
  at::Tensor t1 = at::randn({5, 2}, at::TensorOptions().dtype(at::kDouble));
  EXPECT_TRUE(allClose(run({t0, t1})[0], at::matmul(t0, t1)));
}

struct LinearCase {
  std::string name;
  std::vector<int64_t> in;
  std::vector<int64_t> weight;
  bool bias;
};

void PrintTo(const LinearCase& c, std::ostream* os) {
  *os << c.name;
}

class LinearTest : public RuntimeTest, public ::testing::WithParamInterface<LinearCase> {};

TEST_P(LinearTest, MatchesAten) {
  const LinearCase& c = GetParam();
  TensorView* tv0 = makeContigTensor(static_cast<int64_t>(c.in.size()));
  TensorView* tw = makeContigTensor(static_cast<int64_t>(c.weight.size()));
  fusion().addInput(tv0);
  fusion().addInput(tw);
  TensorView* tb = nullptr;
  if (c.bias) {
    tb = makeContigTensor(1);
    fusion().addInput(tb);
  }
  TensorView* out = linear(tv0, tw, tb);
  fusion().addOutput(out);
  at::Tensor x = at::randn(c.in);
  at::Tensor w = at::randn(c.weight);
  std::vector<PolymorphicValue> inputs{x, w};
  c10::optional<at::Tensor> b;
  if (c.bias) {
    b = at::randn({c.weight[0]});
    inputs.push_back(*b);
  }
  at::Tensor expected = at::linear(x, w, b);
  EXPECT_EQ(out->rank(), expected.dim());
  EXPECT_TRUE(allClose(run(inputs)[0], expected, 1e-4, 1e-4));
}

INSTANTIATE_TEST_SUITE_P(Shapes, LinearTest,
                         ::testing::Values(LinearCase{"two_d", {3, 4}, {5, 4}, false},
                                           LinearCase{"two_d_bias", {3, 4}, {5, 4}, true},
                                           LinearCase{"three_d", {2, 3, 4}, {5, 4}, false},
                                           LinearCase{"three_d_bias", {2, 3, 4}, {5, 4}, true},
                                           LinearCase{"one_d_input_bias", {4}, {5, 4}, true},
                                           LinearCase{"one_d_weight", {3, 4}, {4}, false}),
                         [](const ::testing::TestParamInfo<LinearCase>& info) {
                           return info.param.name;
                         });

// --- select, slice, permute, reshape ----------------------------------------------

TEST_F(OpsTest, SelectConstantIndex) {
  TensorView* tv0 = makeContigTensor(3);
  fusion().addInput(tv0);
  fusion().addOutput(select(tv0, 1, 2));
  fusion().addOutput(select(tv0, -1, 0));
  at::Tensor t0 = at::randn({2, 3, 4});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], t0.select(1, 2)));
  EXPECT_TRUE(allClose(outs[1], t0.select(2, 0)));
}

TEST_F(OpsTest, SelectSymbolicIndex) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  Scalar* index = scalarInput(DataType::Int64);
  fusion().addOutput(select(tv0, 0, index));
  at::Tensor t0 = at::randn({4, 3});
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(allClose(run({t0, i})[0], t0.select(0, i))) << "index " << i;
  }
}

TEST_F(OpsTest, SelectOutOfRangeIndexAtRunTime) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  Scalar* index = scalarInput(DataType::Int64);
  fusion().addOutput(select(tv0, 0, index));
  at::Tensor t0 = at::randn({4, 3});
  // Compiled, the kernel's check; through ATen, ATen's (HOSTIR_KERNELS=aten).
  EXPECT_HOSTIR_ERROR(run({t0, int64_t{7}}), {"index 7", "out of range", "T0"});
}

TEST_F(OpsTest, SliceConstantAndSymbolic) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  fusion().addOutput(slice(tv0, 1, 1, 5));
  fusion().addOutput(slice(tv0, 0, start, stop));
  at::Tensor t0 = at::randn({6, 7});
  std::vector<at::Tensor> outs = run({t0, int64_t{2}, int64_t{5}});
  EXPECT_TRUE(allClose(outs[0], t0.slice(1, 1, 5)));
  EXPECT_TRUE(allClose(outs[1], t0.slice(0, 2, 5)));
}

TEST_F(OpsTest, SliceThenCompute) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  TensorView* lo = slice(tv0, 0, 0, 4);
  TensorView* hi = slice(tv0, 0, 4, 8);
  fusion().addOutput(add(lo, hi));
  at::Tensor t0 = at::randn({8});
  EXPECT_TRUE(allClose(run({t0})[0], t0.slice(0, 0, 4) + t0.slice(0, 4, 8)));
}

TEST_F(OpsTest, Permute) {
  TensorView* tv0 = makeContigTensor(3);
  fusion().addInput(tv0);
  fusion().addOutput(permute(tv0, {2, 0, 1}));
  fusion().addOutput(exp(permute(tv0, {1, 0, 2})));
  at::Tensor t0 = at::randn({2, 3, 4});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], t0.permute({2, 0, 1})));
  EXPECT_TRUE(allClose(outs[1], t0.permute({1, 0, 2}).exp()));
}

TEST_F(OpsTest, Reshape) {
  TensorView* tv0 = makeContigTensor(3);
  fusion().addInput(tv0);
  fusion().addOutput(reshape(tv0, {6, 4}));
  fusion().addOutput(reshape(tv0, {-1, 4}));
  fusion().addOutput(reshape(tv0, {2, -1}));
  fusion().addOutput(reshape(tv0, {24}));
  at::Tensor t0 = at::randn({2, 3, 4});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], t0.reshape({6, 4})));
  EXPECT_TRUE(allClose(outs[1], t0.reshape({-1, 4})));
  EXPECT_TRUE(allClose(outs[2], t0.reshape({2, -1})));
  EXPECT_TRUE(allClose(outs[3], t0.reshape({24})));
}

TEST_F(OpsTest, ReshapeOfPermutedNeedsCopy) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  TensorView* tv1 = reshape(permute(tv0, {1, 0}), {-1});
  fusion().addOutput(add(tv1, 1.0));
  at::Tensor t0 = at::randn({3, 4});
  EXPECT_TRUE(allClose(run({t0})[0], t0.t().reshape({-1}) + 1.0));
}

// --- factories -----------------------------------------------------------------------

TEST_F(OpsTest, FullZerosOnesFromInputExtents) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  std::vector<Val*> shape = extentsOf(tv0);
  fusion().addOutput(full(shape, IrBuilder::create<Scalar>(2.5), DataType::Float));
  fusion().addOutput(zeros(shape, DataType::Int64));
  fusion().addOutput(ones({shape[1]}, DataType::Double));
  fusion().addOutput(add(tv0, ones(shape)));
  fusion().addOutput(
      full({mul(shape[0], shape[1])}, IrBuilder::create<Scalar>(true), DataType::Bool));
  for (std::vector<int64_t> sizes : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{2, 7}}) {
    at::Tensor t0 = at::randn(sizes);
    std::vector<at::Tensor> outs = run({t0});
    EXPECT_TRUE(allClose(outs[0], at::full(sizes, 2.5, at::TensorOptions().dtype(at::kFloat))));
    EXPECT_TRUE(allClose(outs[1], at::zeros(sizes, at::TensorOptions().dtype(at::kLong))));
    EXPECT_TRUE(allClose(outs[2], at::ones({sizes[1]}, at::TensorOptions().dtype(at::kDouble))));
    EXPECT_TRUE(allClose(outs[3], t0 + 1));
    EXPECT_TRUE(
        allClose(outs[4], at::ones({sizes[0] * sizes[1]}, at::TensorOptions().dtype(at::kBool))));
  }
}

TEST_F(OpsTest, FullWithScalarInputFillAndSize) {
  Scalar* n = scalarInput(DataType::Int64);
  Scalar* value = scalarInput(DataType::Double);
  fusion().addOutput(full({n, IrBuilder::create<Scalar>(int64_t{3})}, value, DataType::Float));
  std::vector<at::Tensor> outs = run({int64_t{5}, -0.25});
  EXPECT_TRUE(allClose(outs[0], at::full({5, 3}, -0.25, at::TensorOptions().dtype(at::kFloat))));
}

// --- chains --------------------------------------------------------------------------

TEST_F(OpsTest, MlpBlock) {
  TensorView* x = makeContigTensor(2);
  TensorView* w1 = makeContigTensor(2);
  TensorView* b1 = makeContigTensor(1);
  TensorView* w2 = makeContigTensor(2);
  TensorView* b2 = makeContigTensor(1);
  for (TensorView* tv : {x, w1, b1, w2, b2}) {
    fusion().addInput(tv);
  }
  TensorView* h = relu(linear(x, w1, b1));
  TensorView* y = linear(h, w2, b2);
  fusion().addOutput(sum(y, {0, 1}));
  fusion().addOutput(y);
  at::Tensor tx = at::randn({8, 16});
  at::Tensor tw1 = at::randn({32, 16});
  at::Tensor tb1 = at::randn({32});
  at::Tensor tw2 = at::randn({4, 32});
  at::Tensor tb2 = at::randn({4});
  at::Tensor ty = at::linear(at::relu(at::linear(tx, tw1, tb1)), tw2, tb2);
  std::vector<at::Tensor> outs = run({tx, tw1, tb1, tw2, tb2});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(allClose(outs[0], at::sum(ty, at::IntArrayRef{0, 1}), 1e-4, 1e-3));
  EXPECT_TRUE(allClose(outs[1], ty, 1e-4, 1e-4));
}

TEST_F(OpsTest, LongElementwiseChainWithSharedIntermediates) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  TensorView* a = mul(tv0, 2.0);
  TensorView* b = sigmoid(sub(a, tv1));
  TensorView* c = maximum(b, tanh(a));
  TensorView* d = div(c, add(abs(tv1), 1.0));
  fusion().addOutput(d);
  fusion().addOutput(a);
  at::Tensor t0 = at::randn({5, 6});
  at::Tensor t1 = at::randn({5, 6});
  at::Tensor ta = t0 * 2.0;
  at::Tensor td = at::maximum(at::sigmoid(ta - t1), at::tanh(ta)) / (t1.abs() + 1.0);
  std::vector<at::Tensor> outs = run({t0, t1});
  EXPECT_TRUE(allClose(outs[0], td));
  EXPECT_TRUE(allClose(outs[1], ta));
}

TEST_F(OpsTest, InputAsOutputAndRepeatedRuns) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addOutput(tv0);
  fusion().addOutput(neg(tv0));
  for (int64_t n : {3, 5, 1}) {
    at::Tensor t0 = at::randn({n});
    std::vector<at::Tensor> outs = run({t0});
    EXPECT_TRUE(allClose(outs[0], t0));
    EXPECT_TRUE(allClose(outs[1], -t0));
  }
}

TEST_F(OpsTest, ExecutorRunTakesTensorList) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(add(tv0, tv1));
  FusionExecutor fe(std::move(fusion_));
  at::Tensor t0 = at::randn({4});
  at::Tensor t1 = at::randn({4});
  std::vector<at::Tensor> inputs{t0, t1};
  EXPECT_TRUE(allClose(fe.run(inputs)[0], t0 + t1));
  EXPECT_TRUE(allClose(fe.run({t0, t1})[0], t0 + t1));
}

}  // namespace
}  // namespace hostir::test
