// DataType helpers and PyTorch's type promotion through the op builders.

#include <complex>
#include <tuple>

#include "test_utils.h"

namespace hostir::test {
namespace {

using DT = DataType;

TEST(DataTypeTest, Names) {
  EXPECT_EQ(toString(DT::Float), "float");
  EXPECT_EQ(toString(DT::Double), "double");
  EXPECT_EQ(toString(DT::Half), "half");
  EXPECT_EQ(toString(DT::BFloat16), "bfloat16");
  EXPECT_EQ(toString(DT::Int32), "int32");
  EXPECT_EQ(toString(DT::Int64), "int64");
  EXPECT_EQ(toString(DT::Bool), "bool");
  EXPECT_EQ(toString(DT::ComplexFloat), "complex64");
  EXPECT_EQ(toString(DT::ComplexDouble), "complex128");
}

TEST(DataTypeTest, ComplexTypes) {
  for (DT dt : {DT::ComplexFloat, DT::ComplexDouble}) {
    EXPECT_TRUE(isComplexType(dt)) << toString(dt);
    EXPECT_FALSE(isFloatingType(dt)) << toString(dt);  // as torch.is_floating_point
    EXPECT_FALSE(isIntegralType(dt)) << toString(dt);
  }
  EXPECT_FALSE(isComplexType(DT::Double));
  EXPECT_EQ(dataTypeSize(DT::ComplexFloat), 8);
  EXPECT_EQ(dataTypeSize(DT::ComplexDouble), 16);
  EXPECT_EQ(complexPartType(DT::ComplexFloat), DT::Float);
  EXPECT_EQ(complexPartType(DT::ComplexDouble), DT::Double);
  EXPECT_THROW(complexPartType(DT::Float), Error);
}

TEST(DataTypeTest, CategoriesAndSizes) {
  for (DT dt : {DT::Float, DT::Double, DT::Half, DT::BFloat16}) {
    EXPECT_TRUE(isFloatingType(dt)) << toString(dt);
    EXPECT_FALSE(isIntegralType(dt)) << toString(dt);
  }
  for (DT dt : {DT::Int32, DT::Int64}) {
    EXPECT_TRUE(isIntegralType(dt)) << toString(dt);
    EXPECT_FALSE(isFloatingType(dt)) << toString(dt);
  }
  EXPECT_FALSE(isIntegralType(DT::Bool));
  EXPECT_FALSE(isFloatingType(DT::Bool));
  EXPECT_EQ(dataTypeSize(DT::Double), 8);
  EXPECT_EQ(dataTypeSize(DT::Int64), 8);
  EXPECT_EQ(dataTypeSize(DT::Float), 4);
  EXPECT_EQ(dataTypeSize(DT::Int32), 4);
  EXPECT_EQ(dataTypeSize(DT::Half), 2);
  EXPECT_EQ(dataTypeSize(DT::BFloat16), 2);
  EXPECT_EQ(dataTypeSize(DT::Bool), 1);
}

TEST(DataTypeTest, ParallelAndMemoryTypeNames) {
  EXPECT_EQ(toString(ParallelType::Serial), "S");
  EXPECT_EQ(toString(ParallelType::Stream), "StreamIdx");
  EXPECT_EQ(toString(ParallelType::DIDx), "deviceIdx.x");
  EXPECT_EQ(toString(ParallelType::DIDy), "deviceIdx.y");
  EXPECT_TRUE(isDeviceDim(ParallelType::DIDx));
  EXPECT_TRUE(isDeviceDim(ParallelType::DIDy));
  EXPECT_FALSE(isDeviceDim(ParallelType::Stream));
  EXPECT_FALSE(isDeviceDim(ParallelType::Serial));
  EXPECT_EQ(toString(MemoryType::Global), "global");
  EXPECT_EQ(toString(MemoryType::Local), "local");
}

// (a, b, torch.promote_types(a, b))
const std::tuple<DT, DT, DT> kTensorPromotions[] = {
    {DT::Float, DT::Float, DT::Float},
    {DT::Int32, DT::Float, DT::Float},
    {DT::Int64, DT::Float, DT::Float},
    {DT::Int64, DT::Half, DT::Half},
    {DT::Int32, DT::BFloat16, DT::BFloat16},
    {DT::Half, DT::BFloat16, DT::Float},
    {DT::Half, DT::Float, DT::Float},
    {DT::BFloat16, DT::Double, DT::Double},
    {DT::Float, DT::Double, DT::Double},
    {DT::Int32, DT::Int64, DT::Int64},
    {DT::Bool, DT::Int32, DT::Int32},
    {DT::Bool, DT::Int64, DT::Int64},
    {DT::Bool, DT::Half, DT::Half},
    {DT::Bool, DT::Bool, DT::Bool},
    {DT::Half, DT::Half, DT::Half},
    {DT::BFloat16, DT::BFloat16, DT::BFloat16},
    // complex: the widest of the complex dtype and the other's precision
    {DT::ComplexFloat, DT::Float, DT::ComplexFloat},
    {DT::ComplexFloat, DT::Double, DT::ComplexDouble},
    {DT::ComplexFloat, DT::ComplexDouble, DT::ComplexDouble},
    {DT::ComplexDouble, DT::Half, DT::ComplexDouble},
    {DT::ComplexFloat, DT::Int64, DT::ComplexFloat},
    {DT::ComplexFloat, DT::Bool, DT::ComplexFloat},
    {DT::ComplexFloat, DT::BFloat16, DT::ComplexFloat},
};

TEST(TypePromotionTest, PromoteTypesMatchesPyTorch) {
  for (auto [a, b, expected] : kTensorPromotions) {
    EXPECT_EQ(promoteTypes(a, b), expected) << toString(a) << " with " << toString(b);
    EXPECT_EQ(promoteTypes(b, a), expected) << toString(b) << " with " << toString(a);
  }
}

// (tensor dtype, wrapped scalar dtype, result)
const std::tuple<DT, DT, DT> kScalarPromotions[] = {
    {DT::Int64, DT::Double, DT::Float},
    {DT::Int32, DT::Double, DT::Float},
    {DT::Half, DT::Double, DT::Half},
    {DT::Float, DT::Double, DT::Float},
    {DT::Int32, DT::Int64, DT::Int32},
    {DT::Bool, DT::Int64, DT::Int64},
    {DT::Bool, DT::Double, DT::Float},
    {DT::Bool, DT::Bool, DT::Bool},
    {DT::Float, DT::Bool, DT::Float},
    {DT::BFloat16, DT::Int64, DT::BFloat16},
    // a complex number: complex128 beside a double tensor, else complex64
    {DT::Float, DT::ComplexDouble, DT::ComplexFloat},
    {DT::Double, DT::ComplexDouble, DT::ComplexDouble},
    {DT::Int64, DT::ComplexDouble, DT::ComplexFloat},
    {DT::ComplexFloat, DT::ComplexDouble, DT::ComplexFloat},
    {DT::ComplexDouble, DT::Double, DT::ComplexDouble},
};

TEST(TypePromotionTest, TensorWithScalarMatchesPyTorch) {
  for (auto [tensor, scalar, expected] : kScalarPromotions) {
    EXPECT_EQ(promoteTensorWithScalar(tensor, scalar), expected)
        << toString(tensor) << " tensor with " << toString(scalar) << " scalar";
  }
}

using OpDtypeTest = IrTest;

TEST_F(OpDtypeTest, TensorTensorPromotionThroughBuilders) {
  for (auto [a, b, expected] : kTensorPromotions) {
    TensorView* ta = makeSymbolicTensor(1, a);
    TensorView* tb = makeSymbolicTensor(1, b);
    EXPECT_EQ(add(ta, tb)->dtype(), expected) << toString(a) << " + " << toString(b);
    EXPECT_EQ(mul(tb, ta)->dtype(), expected) << toString(b) << " * " << toString(a);
    if (!isComplexType(expected)) {  // complex numbers have no order
      EXPECT_EQ(maximum(ta, tb)->dtype(), expected);
    }
  }
}

TEST_F(OpDtypeTest, IntPlusFloatIsFloat) {
  TensorView* i = makeContigTensor(2, DT::Int32);
  TensorView* f = makeContigTensor(2, DT::Float);
  EXPECT_EQ(add(i, f)->dtype(), DT::Float);
  EXPECT_EQ(sub(f, i)->dtype(), DT::Float);
}

TEST_F(OpDtypeTest, IntTensorWithDoubleScalarIsFloat) {
  TensorView* i = makeContigTensor(1, DT::Int64);
  EXPECT_EQ(mul(i, 2.5)->dtype(), DT::Float);
  EXPECT_EQ(add(1.0, i)->dtype(), DT::Float);
  EXPECT_EQ(add(i, IrBuilder::create<Scalar>(DT::Double))->dtype(), DT::Float);
}

TEST_F(OpDtypeTest, ScalarsDoNotWidenTensors) {
  TensorView* h = makeContigTensor(1, DT::Half);
  EXPECT_EQ(add(h, 2.0)->dtype(), DT::Half);
  TensorView* i = makeContigTensor(1, DT::Int32);
  EXPECT_EQ(add(i, constant(3))->dtype(), DT::Int32);
  TensorView* f = makeContigTensor(1, DT::Float);
  EXPECT_EQ(mul(f, IrBuilder::create<Scalar>(DT::Double))->dtype(), DT::Float);
}

TEST_F(OpDtypeTest, HalfPlusBFloat16IsFloat) {
  TensorView* h = makeContigTensor(1, DT::Half);
  TensorView* b = makeContigTensor(1, DT::BFloat16);
  EXPECT_EQ(add(h, b)->dtype(), DT::Float);
}

TEST_F(OpDtypeTest, BoolPlusInt) {
  TensorView* b = makeContigTensor(1, DT::Bool);
  TensorView* i = makeContigTensor(1, DT::Int32);
  EXPECT_EQ(add(b, i)->dtype(), DT::Int32);
  EXPECT_EQ(add(b, constant(1))->dtype(), DT::Int64);
  EXPECT_EQ(add(b, b)->dtype(), DT::Bool);
}

TEST_F(OpDtypeTest, DivisionIsTrueDivision) {
  TensorView* i = makeContigTensor(1, DT::Int32);
  TensorView* j = makeContigTensor(1, DT::Int64);
  EXPECT_EQ(div(i, j)->dtype(), DT::Float);
  EXPECT_EQ(div(i, constant(2))->dtype(), DT::Float);
  EXPECT_EQ(div(constant(2), i)->dtype(), DT::Float);
  TensorView* h = makeContigTensor(1, DT::Half);
  EXPECT_EQ(div(h, h)->dtype(), DT::Half);
  TensorView* d = makeContigTensor(1, DT::Double);
  EXPECT_EQ(div(d, i)->dtype(), DT::Double);
  TensorView* b = makeContigTensor(1, DT::Bool);
  EXPECT_EQ(div(b, b)->dtype(), DT::Float);
}

TEST_F(OpDtypeTest, SumOfIntegersIsInt64) {
  EXPECT_EQ(sum(makeContigTensor(2, DT::Int32), {0})->dtype(), DT::Int64);
  EXPECT_EQ(sum(makeContigTensor(2, DT::Int64), {0})->dtype(), DT::Int64);
  EXPECT_EQ(sum(makeContigTensor(2, DT::Bool), {0})->dtype(), DT::Int64);
  EXPECT_EQ(sum(makeContigTensor(2, DT::Int32), {0}, true)->dtype(), DT::Int64);
  EXPECT_EQ(sum(makeContigTensor(2, DT::Half), {0})->dtype(), DT::Half);
  EXPECT_EQ(sum(makeContigTensor(2, DT::Double), {1})->dtype(), DT::Double);
}

TEST_F(OpDtypeTest, ComplexOpsKeepOrSplitTheComplexDtype) {
  for (DT dt : {DT::ComplexFloat, DT::ComplexDouble}) {
    TensorView* c = makeContigTensor(2, dt);
    EXPECT_EQ(sum(c, {0})->dtype(), dt);  // not Int64
    EXPECT_EQ(div(c, c)->dtype(), dt);    // not Float
    EXPECT_EQ(exp(c)->dtype(), dt);
    EXPECT_EQ(rsqrt(c)->dtype(), dt);
    EXPECT_EQ(real(c)->dtype(), complexPartType(dt));
    EXPECT_EQ(imag(c)->dtype(), complexPartType(dt));
    EXPECT_EQ(abs(c)->dtype(), complexPartType(dt));
    EXPECT_EQ(mul(makeContigTensor(2, DT::Float), IrBuilder::create<Scalar>(dt))->dtype(),
              DT::ComplexFloat);
  }
  std::string message = errorMessage([] { real(makeContigTensor(1, DT::Float)); });
  EXPECT_TRUE(containsAll(message, {"real(", "needs a complex operand"})) << message;
  message = errorMessage([] { relu(makeContigTensor(1, DT::ComplexFloat)); });
  EXPECT_TRUE(containsAll(message, {"relu(", "not defined for a complex operand"})) << message;
  message = errorMessage([] {
    TensorView* c = makeContigTensor(1, DT::ComplexDouble);
    maximum(c, c);
  });
  EXPECT_TRUE(containsAll(message, {"maximum(", "is complex", "needs real operands"})) << message;
}

TEST_F(OpDtypeTest, WhereOfTwoScalarsHasTheirDtype) {
  TensorView* cond = makeContigTensor(1, DT::Bool);
  auto* f = IrBuilder::create<Scalar>(ScalarValue(0.1), DT::Float);
  auto* i = IrBuilder::create<Scalar>(ScalarValue(int64_t{3}), DT::Int32);
  auto* c = IrBuilder::create<Scalar>(ScalarValue(std::complex<double>(1, 2)), DT::ComplexFloat);
  EXPECT_EQ(where(cond, f, f)->dtype(), DT::Float);
  EXPECT_EQ(where(cond, i, i)->dtype(), DT::Int32);
  EXPECT_EQ(where(cond, c, c)->dtype(), DT::ComplexFloat);
  EXPECT_EQ(where(cond, IrBuilder::create<Scalar>(1.0), IrBuilder::create<Scalar>(2.0))->dtype(),
            DT::Double);
  // A typed constant holds its value rounded to the dtype.
  EXPECT_EQ(std::get<double>(*f->value()), static_cast<double>(0.1f));
  EXPECT_THROW(IrBuilder::create<Scalar>(ScalarValue(int64_t{1} << 40), DT::Int32), Error);
  EXPECT_THROW(IrBuilder::create<Scalar>(ScalarValue(std::complex<double>(1, 2)), DT::Float),
               Error);
}

TEST_F(OpDtypeTest, MaxAndMinKeepDtype) {
  for (DT dt : {DT::Int32, DT::Bool, DT::BFloat16, DT::Float}) {
    EXPECT_EQ(max(makeContigTensor(2, dt), {0})->dtype(), dt) << toString(dt);
    EXPECT_EQ(min(makeContigTensor(2, dt), {1})->dtype(), dt) << toString(dt);
  }
}

TEST_F(OpDtypeTest, ShapeOpsKeepDtype) {
  for (DT dt : {DT::Int32, DT::Bool, DT::Half, DT::Double}) {
    TensorView* tv = makeConcreteTensor({2, 3}, dt);
    EXPECT_EQ(set(tv)->dtype(), dt);
    EXPECT_EQ(broadcast(tv, {true, false, false})->dtype(), dt);
    EXPECT_EQ(select(tv, 0, 1)->dtype(), dt);
    EXPECT_EQ(slice(tv, 1, 0, 2)->dtype(), dt);
    EXPECT_EQ(permute(tv, {1, 0})->dtype(), dt);
    EXPECT_EQ(reshape(tv, {6})->dtype(), dt);
  }
}

TEST_F(OpDtypeTest, MatmulAndLinearKeepOperandDtype) {
  for (DT dt : {DT::Half, DT::BFloat16, DT::Double}) {
    EXPECT_EQ(matmul(makeContigTensor(2, dt), makeContigTensor(2, dt))->dtype(), dt);
    EXPECT_EQ(linear(makeContigTensor(2, dt), makeContigTensor(2, dt))->dtype(), dt);
  }
}

}  // namespace
}  // namespace hostir::test
