// Unary ops on scalars and the integer / floating binary ops nvFuser's
// frontend has (gcd, nextafter, the bitwise ops, the shifts, pow): constant
// folding and applyScalar*Op, which the run-time evaluator shares, against
// the values torch gives.

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/scalar_arithmetic.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using ScalarOpsTest = IrTest;

int64_t apply(BinaryOpType type, int64_t a, int64_t b) {
  return std::get<int64_t>(
      *applyScalarBinaryOp(type, a, b, [] { return std::string("the test"); }));
}

TEST_F(ScalarOpsTest, IntegerOpsOfTheFrontend) {
  EXPECT_EQ(apply(BinaryOpType::Gcd, -12, 18), 6);  // torch.gcd: non-negative
  EXPECT_EQ(apply(BinaryOpType::Gcd, 0, 0), 0);
  EXPECT_EQ(apply(BinaryOpType::BitwiseAnd, 12, 10), 8);
  EXPECT_EQ(apply(BinaryOpType::BitwiseOr, 12, 10), 14);
  EXPECT_EQ(apply(BinaryOpType::BitwiseXor, 12, 10), 6);
  EXPECT_EQ(apply(BinaryOpType::Pow, -3, 3), -27);
  EXPECT_EQ(apply(BinaryOpType::Pow, 7, 0), 1);
}

// A count of the width or more shifts every bit out (C++ leaves it undefined).
TEST_F(ScalarOpsTest, ShiftsByEveryCount) {
  EXPECT_EQ(apply(BinaryOpType::BitwiseRightShift, -8, 1), -4);
  EXPECT_EQ(apply(BinaryOpType::BitwiseRightShift, -8, 64), -1);
  EXPECT_EQ(apply(BinaryOpType::BitwiseRightShift, 8, 100), 0);
  EXPECT_EQ(apply(BinaryOpType::LogicalRightShift, -1, 60), 15);
  EXPECT_EQ(apply(BinaryOpType::LogicalRightShift, -1, 64), 0);
  EXPECT_EQ(apply(BinaryOpType::LogicalRightShift, -1, 0), -1);
  EXPECT_EQ(apply(BinaryOpType::BitwiseLeftShift, 1, 63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(apply(BinaryOpType::BitwiseLeftShift, 1, 64), 0);
}

TEST_F(ScalarOpsTest, IntegerPowerErrors) {
  std::string overflow = errorMessage([] { apply(BinaryOpType::Pow, 10, 19); });
  EXPECT_EQ(overflow.rfind("integer overflow: ", 0), 0u) << overflow;
  std::string negative = errorMessage([] { apply(BinaryOpType::Pow, 2, -1); });
  EXPECT_TRUE(containsAll(negative, {"negative power", "the test"})) << negative;
}

TEST_F(ScalarOpsTest, FloatingOpsOfTheFrontend) {
  auto apply_double = [](BinaryOpType type, double a, double b) {
    return std::get<double>(*applyScalarBinaryOp(type, a, b, [] { return std::string(); }));
  };
  EXPECT_EQ(apply_double(BinaryOpType::NextAfter, 1.0, 2.0), std::nextafter(1.0, 2.0));
  EXPECT_EQ(apply_double(BinaryOpType::Pow, 2.5, 2.5), std::pow(2.5, 2.5));
}

TEST_F(ScalarOpsTest, UnaryOpsOnScalars) {
  auto value = [](UnaryOpType type, ScalarValue in, DataType out) {
    return applyScalarUnaryOp(type, in, out);
  };
  EXPECT_EQ(std::get<int64_t>(value(UnaryOpType::Neg, int64_t{3}, DataType::Int64)), -3);
  EXPECT_EQ(std::get<int64_t>(value(UnaryOpType::Abs, int64_t{-3}, DataType::Int64)), 3);
  EXPECT_EQ(std::get<double>(value(UnaryOpType::Abs, -2.5, DataType::Double)), 2.5);
  EXPECT_EQ(std::get<double>(value(UnaryOpType::Sin, 0.5, DataType::Double)), std::sin(0.5));
  EXPECT_TRUE(std::get<bool>(value(UnaryOpType::Signbit, -0.0, DataType::Bool)));
  // A cast truncates towards zero, as torch's.
  EXPECT_EQ(std::get<int64_t>(value(UnaryOpType::Cast, 17.5, DataType::Int64)), 17);
  EXPECT_EQ(std::get<int64_t>(value(UnaryOpType::Cast, -17.5, DataType::Int32)), -17);
  EXPECT_TRUE(std::get<bool>(value(UnaryOpType::Cast, 0.5, DataType::Bool)));
  std::string huge = errorMessage([&] { value(UnaryOpType::Cast, 1e300, DataType::Int64); });
  EXPECT_TRUE(containsAll(huge, {"cast of", "does not fit"})) << huge;
  std::string min = errorMessage(
      [&] { value(UnaryOpType::Neg, std::numeric_limits<int64_t>::min(), DataType::Int64); });
  EXPECT_EQ(min.rfind("integer overflow: ", 0), 0u) << min;
}

TEST_F(ScalarOpsTest, ComplexScalarsComputeAsPythonsComplex) {
  using C = std::complex<double>;
  const ScalarValue a = C(1.0, 2.0);
  const ScalarValue b = 0.5;
  auto fold = [&](BinaryOpType type, const ScalarValue& x, const ScalarValue& y) {
    return applyScalarBinaryOp(type, x, y, [] { return std::string("the test"); });
  };
  EXPECT_EQ(std::get<C>(*fold(BinaryOpType::Mul, a, b)), C(0.5, 1.0));
  EXPECT_EQ(std::get<C>(*fold(BinaryOpType::Add, b, a)), C(1.5, 2.0));
  EXPECT_EQ(std::get<C>(*fold(BinaryOpType::Div, a, a)), C(1.0, 0.0));
  EXPECT_TRUE(std::get<bool>(*fold(BinaryOpType::Ne, a, b)));
  std::string ordered = errorMessage([&] { fold(BinaryOpType::Lt, a, b); });
  EXPECT_TRUE(containsAll(ordered, {"lt", "not defined for complex", "the test"})) << ordered;
  auto applyUnary = [](UnaryOpType type, const ScalarValue& x, DataType out) {
    return applyScalarUnaryOp(type, x, out);
  };
  EXPECT_EQ(std::get<double>(applyUnary(UnaryOpType::Real, a, DataType::Double)), 1.0);
  EXPECT_EQ(std::get<double>(applyUnary(UnaryOpType::Imag, a, DataType::Double)), 2.0);
  EXPECT_EQ(std::get<double>(applyUnary(UnaryOpType::Abs, C(3, 4), DataType::Double)), 5.0);
  EXPECT_EQ(std::get<C>(applyUnary(UnaryOpType::Exp, C(0, 0), DataType::ComplexDouble)), C(1, 0));
  EXPECT_EQ(std::get<C>(applyUnary(UnaryOpType::Cast, 2.0, DataType::ComplexFloat)), C(2, 0));
  // A cast to a real dtype keeps the real part, as torch's.
  EXPECT_EQ(std::get<double>(applyUnary(UnaryOpType::Cast, a, DataType::Double)), 1.0);
  // Folded by the builder: a complex constant.
  Val* product =
      binary(BinaryOpType::Mul, IrBuilder::create<Scalar>(C(1, 2)), IrBuilder::create<Scalar>(2.0));
  EXPECT_EQ(product->dtype(), DataType::ComplexDouble);
  EXPECT_EQ(product->as<Scalar>()->toInlineString(), "complex(2, 4)");
}

// A complex constant is written `scalar complex REAL IMAG` and reads back as
// itself (before, printing one was an error; the compile stage's text round
// trip under HOSTIR_VERIFY found every complex program refused).
TEST_F(ScalarOpsTest, TheTextFormatWritesComplexConstants) {
  TensorView* c = makeContigTensor(1, DataType::ComplexFloat);
  fusion_.addInput(c);
  fusion_.addOutput(mul(c, IrBuilder::create<Scalar>(std::complex<double>(1, -2.5))));
  const std::string text = printFusionText(fusion_);
  EXPECT_NE(text.find("scalar complex 1.0 -2.5"), std::string::npos) << text;
  std::unique_ptr<Fusion> parsed = parseFusionText(text, "complex constant");
  EXPECT_EQ(printFusionText(*parsed), text);
}

// On a constant the builder folds; on a symbolic scalar it makes a scalar
// UnaryOp (no tensor), which is not a tensor op.
TEST_F(ScalarOpsTest, UnaryBuilderFoldsConstantsAndKeepsSymbols) {
  Val* folded = unary(UnaryOpType::Cast, IrBuilder::create<Scalar>(17.5), DataType::Int64);
  ASSERT_TRUE(folded->as<Scalar>()->isConstInt());
  EXPECT_EQ(folded->as<Scalar>()->constInt(), 17);
  Val* symbol = IrBuilder::create<Scalar>(DataType::Double);
  Val* negated = unary(UnaryOpType::Neg, symbol);
  ASSERT_NE(negated->definition(), nullptr);
  EXPECT_EQ(negated->vtype(), ValType::Scalar);
  EXPECT_EQ(negated->dtype(), DataType::Double);
  EXPECT_EQ(unary(UnaryOpType::Signbit, symbol)->dtype(), DataType::Bool);
  std::string message = errorMessage([&] { unary(UnaryOpType::Cast, symbol); });
  EXPECT_TRUE(containsAll(message, {"cast", "names the dtype"})) << message;
}

}  // namespace
}  // namespace hostir::test
