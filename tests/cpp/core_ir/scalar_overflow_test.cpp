// Issue 11, item 3: integer scalar arithmetic never overflows silently and
// never traps (INT64_MIN / -1 used to kill the process with SIGFPE), in
// constant folding and in applyScalarBinaryOp, which the run-time evaluator
// shares.

#include <cstdint>
#include <limits>

#include "hostir/ir/arith.h"
#include "hostir/ir/scalar_arithmetic.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using ScalarOverflowTest = IrTest;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t apply(BinaryOpType type, int64_t a, int64_t b) {
  return std::get<int64_t>(
      *applyScalarBinaryOp(type, a, b, [] { return std::string("the test"); }));
}

TEST_F(ScalarOverflowTest, OverflowingOperationsAreErrors) {
  struct Case {
    BinaryOpType type;
    int64_t a;
    int64_t b;
  };
  for (const Case& c : {Case{BinaryOpType::Div, kMin, -1}, Case{BinaryOpType::CeilDiv, kMin, -1},
                        Case{BinaryOpType::Add, kMax, 1}, Case{BinaryOpType::Add, kMin, -1},
                        Case{BinaryOpType::Sub, kMin, 1}, Case{BinaryOpType::Sub, 0, kMin},
                        Case{BinaryOpType::Mul, kMax, 2}, Case{BinaryOpType::Mul, kMin, -1},
                        Case{BinaryOpType::Mul, int64_t{1} << 32, int64_t{1} << 32}}) {
    std::string message = errorMessage([&] { apply(c.type, c.a, c.b); });
    EXPECT_EQ(message.rfind("integer overflow: ", 0), 0u) << message;
    EXPECT_TRUE(containsAll(message, {std::to_string(c.a), std::to_string(c.b), "the test"}));
  }
}

TEST_F(ScalarOverflowTest, EdgeValuesThatFitAreExact) {
  EXPECT_EQ(apply(BinaryOpType::Mod, kMin, -1), 0);  // the CPU traps on it; the answer is 0
  EXPECT_EQ(apply(BinaryOpType::Mod, kMax, -1), 0);
  EXPECT_EQ(apply(BinaryOpType::Div, kMin, 1), kMin);
  EXPECT_EQ(apply(BinaryOpType::Add, kMax, kMin), -1);
  EXPECT_EQ(apply(BinaryOpType::Mul, kMin, 1), kMin);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, kMax, 2), kMax / 2 + 1);  // no overflow in a + b - 1
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, kMax, 1), kMax);
}

TEST_F(ScalarOverflowTest, CeilDivRoundsUpForEverySign) {
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, 7, 2), 4);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, 8, 2), 4);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, 0, 3), 0);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, -7, 2), -3);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, -8, 2), -4);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, 7, -2), -3);
  EXPECT_EQ(apply(BinaryOpType::CeilDiv, -7, -2), 4);
}

TEST_F(ScalarOverflowTest, ConstantFoldingOverflowIsAnErrorNamingTheExpression) {
  std::string message = errorMessage([&] { div(constant(kMin), constant(-1)); });
  EXPECT_EQ(message.rfind("integer overflow: ", 0), 0u) << message;
  message = errorMessage([&] { mul(constant(kMax), constant(3)); });
  EXPECT_EQ(message.rfind("integer overflow: ", 0), 0u) << message;
  EXPECT_EQ(errorMessage([&] { mod(constant(kMin), constant(0)); }).rfind("division by zero", 0),
            0u);
}

}  // namespace
}  // namespace hostir::test
