// Op builders: output rank, extents, iteration types and the recorded expr.

#include <string>
#include <vector>

#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using OpBuilderTest = IrTest;

// Every output axis is a fresh IterDomain whose extent is sameAs the input's.
void expectSameExtents(const TensorView* in, const TensorView* out) {
  std::vector<IterDomain*> a = in->shapeDomain();
  std::vector<IterDomain*> b = out->shapeDomain();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NE(a[i], b[i]) << "axis " << i << " is shared, not fresh";
    EXPECT_TRUE(a[i]->extent()->sameAs(b[i]->extent())) << "axis " << i;
    EXPECT_EQ(a[i]->iterType(), b[i]->iterType()) << "axis " << i;
  }
}

TEST_F(OpBuilderTest, SetCopiesShapeAndDtype) {
  TensorView* tv0 = makeContigTensor(2, DataType::Half);
  fusion_.addInput(tv0);
  TensorView* tv1 = set(tv0);
  EXPECT_EQ(tv1->rank(), 2);
  EXPECT_EQ(tv1->dtype(), DataType::Half);
  EXPECT_EQ(tv1->getMemoryType(), MemoryType::Local);
  expectSameExtents(tv0, tv1);
  ASSERT_NE(tv1->definition(), nullptr);
  EXPECT_TRUE(tv1->definition()->isA<LoadStoreOp>());
  EXPECT_EQ(tv1->definition()->input(0), tv0);
  EXPECT_EQ(tv1->definition()->displayName(), "Set");
  ASSERT_EQ(tv0->uses().size(), 1u);
  EXPECT_EQ(tv0->uses()[0], tv1->definition());
}

struct UnaryCase {
  const char* name;
  TensorView* (*build)(TensorView*);
  UnaryOpType type;
  bool int_to_float;  // whether an integer input gives a float output
};

const UnaryCase kUnaryCases[] = {
    {"neg", &hostir::neg, UnaryOpType::Neg, false},
    {"abs", &hostir::abs, UnaryOpType::Abs, false},
    {"exp", &hostir::exp, UnaryOpType::Exp, true},
    {"log", &hostir::log, UnaryOpType::Log, true},
    {"sqrt", &hostir::sqrt, UnaryOpType::Sqrt, true},
    {"relu", &hostir::relu, UnaryOpType::Relu, false},
    {"sigmoid", &hostir::sigmoid, UnaryOpType::Sigmoid, true},
    {"tanh", &hostir::tanh, UnaryOpType::Tanh, true},
    {"gelu", &hostir::gelu, UnaryOpType::Gelu, true},
};

TEST_F(OpBuilderTest, UnaryOpsKeepShapeAndRecordType) {
  TensorView* tv0 = makeSymbolicTensor(3);
  fusion_.addInput(tv0);
  for (const UnaryCase& c : kUnaryCases) {
    SCOPED_TRACE(c.name);
    TensorView* out = c.build(tv0);
    EXPECT_EQ(out->rank(), 3);
    EXPECT_EQ(out->dtype(), DataType::Float);
    expectSameExtents(tv0, out);
    auto* op = dynamic_cast<UnaryOp*>(out->definition());
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->type(), c.type);
    EXPECT_EQ(op->in(), tv0);
    EXPECT_EQ(op->out(), out);
    EXPECT_EQ(op->displayName(), c.name);
  }
  EXPECT_EQ(tv0->uses().size(), std::size(kUnaryCases));
}

TEST_F(OpBuilderTest, UnaryOpsOnIntegersFollowPyTorchDtypes) {
  TensorView* tv0 = makeSymbolicTensor(1, DataType::Int32);
  for (const UnaryCase& c : kUnaryCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.build(tv0)->dtype(), c.int_to_float ? DataType::Float : DataType::Int32);
  }
}

TEST_F(OpBuilderTest, UnaryOpsKeepReducedPrecisionFloats) {
  TensorView* half = makeSymbolicTensor(1, DataType::Half);
  TensorView* bf16 = makeSymbolicTensor(1, DataType::BFloat16);
  for (const UnaryCase& c : kUnaryCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.build(half)->dtype(), DataType::Half);
    EXPECT_EQ(c.build(bf16)->dtype(), DataType::BFloat16);
  }
}

TEST_F(OpBuilderTest, FloatingUnaryOpsAcceptBool) {
  TensorView* tv0 = makeSymbolicTensor(1, DataType::Bool);
  EXPECT_EQ(exp(tv0)->dtype(), DataType::Float);
  EXPECT_EQ(sigmoid(tv0)->dtype(), DataType::Float);
}

TEST_F(OpBuilderTest, CastChangesDtypeOnly) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = castOp(DataType::BFloat16, tv0);
  EXPECT_EQ(tv1->dtype(), DataType::BFloat16);
  expectSameExtents(tv0, tv1);
  auto* op = tv1->definition()->as<UnaryOp>();
  EXPECT_EQ(op->type(), UnaryOpType::Cast);
  EXPECT_EQ(op->displayName(), "cast<bfloat16>");
  EXPECT_EQ(castOp(DataType::Bool, tv0)->dtype(), DataType::Bool);
  EXPECT_EQ(castOp(DataType::Int64, tv0)->dtype(), DataType::Int64);
}

struct BinaryCase {
  const char* name;
  TensorView* (*build)(TensorView*, TensorView*);
  BinaryOpType type;
};

const BinaryCase kBinaryCases[] = {
    {"add", &hostir::add, BinaryOpType::Add},
    {"sub", &hostir::sub, BinaryOpType::Sub},
    {"mul", &hostir::mul, BinaryOpType::Mul},
    {"div", &hostir::div, BinaryOpType::Div},
    {"maximum", &hostir::maximum, BinaryOpType::Maximum},
    {"minimum", &hostir::minimum, BinaryOpType::Minimum},
};

TEST_F(OpBuilderTest, BinaryOpsOnSameShapes) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2);
  for (const BinaryCase& c : kBinaryCases) {
    SCOPED_TRACE(c.name);
    TensorView* out = c.build(tv0, tv1);
    EXPECT_EQ(out->rank(), 2);
    EXPECT_EQ(out->dtype(), DataType::Float);
    expectSameExtents(tv0, out);
    auto* op = dynamic_cast<BinaryOp*>(out->definition());
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->type(), c.type);
    EXPECT_EQ(op->lhs(), tv0);
    EXPECT_EQ(op->rhs(), tv1);
    EXPECT_EQ(op->displayName(), c.name);
  }
}

TEST_F(OpBuilderTest, BinaryOpWithTensorOnTheRightKeepsOperandOrder) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* out = sub(2.0, tv0);
  auto* op = out->definition()->as<BinaryOp>();
  ASSERT_TRUE(op->lhs()->isA<Scalar>());
  EXPECT_EQ(op->lhs()->as<Scalar>()->value(), ScalarValue(2.0));
  EXPECT_EQ(op->rhs(), tv0);
  expectSameExtents(tv0, out);
}

TEST_F(OpBuilderTest, BinaryOpWithScalarVal) {
  TensorView* tv0 = makeContigTensor(3);
  Scalar* s = IrBuilder::create<Scalar>(DataType::Double);
  TensorView* out = mul(tv0, s);
  expectSameExtents(tv0, out);
  EXPECT_EQ(out->definition()->input(1), s);
  EXPECT_EQ(out->dtype(), DataType::Float);
  // Val* overloads return the tensor when one side is a tensor.
  Val* generic = add(static_cast<Val*>(s), static_cast<Val*>(tv0));
  ASSERT_TRUE(generic->isA<TensorView>());
  EXPECT_EQ(generic->as<TensorView>()->rank(), 3);
}

TEST_F(OpBuilderTest, BinaryOpBroadcastsLowerRankRightAligned) {
  TensorView* tv0 = makeContigTensor(3);  // [i0, i1, i2]
  TensorView* tv1 = makeContigTensor(1);  // [i3]
  TensorView* out = add(tv0, tv1);
  ASSERT_EQ(out->rank(), 3);
  EXPECT_TRUE(out->axis(0)->extent()->sameAs(tv0->axis(0)->extent()));
  EXPECT_TRUE(out->axis(1)->extent()->sameAs(tv0->axis(1)->extent()));
  // Symbolic with symbolic: the left operand's extent is kept.
  EXPECT_TRUE(out->axis(2)->extent()->sameAs(tv0->axis(2)->extent()));
  // Rank-1 on the left broadcasts too.
  TensorView* out2 = add(tv1, tv0);
  ASSERT_EQ(out2->rank(), 3);
  EXPECT_TRUE(out2->axis(0)->extent()->sameAs(tv0->axis(0)->extent()));
}

TEST_F(OpBuilderTest, BinaryOpExpandsBroadcastAxes) {
  TensorView* tv0 = makeConcreteTensor({3, 1});
  TensorView* tv1 = makeConcreteTensor({1, 4});
  EXPECT_TRUE(tv0->axis(1)->isBroadcast());
  EXPECT_TRUE(tv1->axis(0)->isBroadcast());
  TensorView* out = mul(tv0, tv1);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_EQ(constExtent(out->axis(0)), 3);
  EXPECT_EQ(constExtent(out->axis(1)), 4);
  EXPECT_FALSE(out->axis(0)->isBroadcast());
  EXPECT_FALSE(out->axis(1)->isBroadcast());
}

TEST_F(OpBuilderTest, BinaryOpOfTwoBroadcastAxesStaysBroadcast) {
  TensorView* tv0 = makeConcreteTensor({1, 5});
  TensorView* tv1 = makeConcreteTensor({1, 5});
  TensorView* out = add(tv0, tv1);
  EXPECT_TRUE(out->axis(0)->isBroadcast());
  EXPECT_EQ(constExtent(out->axis(0)), 1);
  EXPECT_EQ(constExtent(out->axis(1)), 5);
}

TEST_F(OpBuilderTest, BinaryOpPrefersConstantExtent) {
  TensorView* tv0 = makeSymbolicTensor(1);  // [i0]
  TensorView* tv1 = makeConcreteTensor({8});
  EXPECT_EQ(constExtent(add(tv0, tv1)->axis(0)), 8);
  EXPECT_EQ(constExtent(add(tv1, tv0)->axis(0)), 8);
}

TEST_F(OpBuilderTest, BinaryOpWithBroadcastOpOutput) {
  TensorView* tv0 = makeContigTensor(2);            // [i0, i1]
  TensorView* tv1 = makeContigTensor(1);            // [i2]
  TensorView* tv2 = broadcast(tv1, {false, true});  // [i2, b]
  TensorView* out = add(tv0, tv2);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_TRUE(out->axis(1)->extent()->sameAs(tv0->axis(1)->extent()));
  EXPECT_FALSE(out->axis(1)->isBroadcast());
}

TEST_F(OpBuilderTest, SumReducesAxesIntoReductionDomains) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* tv1 = sum(tv0, {1});
  EXPECT_EQ(tv1->rank(), 2);
  EXPECT_EQ(tv1->nDims(), 3);  // the loop domain keeps the reduction axis
  ASSERT_EQ(tv1->getLogicalDomain().size(), 3u);
  EXPECT_FALSE(tv1->getLogicalDomain()[0]->isReduction());
  EXPECT_TRUE(tv1->getLogicalDomain()[1]->isReduction());
  EXPECT_FALSE(tv1->getLogicalDomain()[2]->isReduction());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(tv1->getLogicalDomain()[i]->extent()->sameAs(tv0->axis(i)->extent()));
  }
  auto* op = tv1->definition()->as<ReductionOp>();
  EXPECT_EQ(op->type(), ReductionOpType::Sum);
  EXPECT_EQ(op->axes(), std::vector<int64_t>({1}));
  EXPECT_EQ(op->in(), tv0);
  EXPECT_EQ(op->out(), tv1);
  EXPECT_EQ(tv1->axis(1)->toInlineString().substr(0, 2), "rS");
}

TEST_F(OpBuilderTest, ReductionNormalizesAndSortsAxes) {
  TensorView* tv0 = makeContigTensor(4);
  TensorView* tv1 = max(tv0, {-1, 0});
  EXPECT_EQ(tv1->rank(), 2);
  EXPECT_EQ(tv1->definition()->as<ReductionOp>()->axes(), std::vector<int64_t>({0, 3}));
  EXPECT_EQ(tv1->definition()->as<ReductionOp>()->type(), ReductionOpType::Max);
  EXPECT_TRUE(tv1->getLogicalDomain()[0]->isReduction());
  EXPECT_TRUE(tv1->getLogicalDomain()[3]->isReduction());
}

TEST_F(OpBuilderTest, ReductionOverAllAxesGivesRankZero) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = min(tv0, {0, 1});
  EXPECT_EQ(tv1->rank(), 0);
  EXPECT_EQ(tv1->nDims(), 2);
  EXPECT_EQ(tv1->definition()->as<ReductionOp>()->type(), ReductionOpType::Min);
}

TEST_F(OpBuilderTest, ReductionWithKeepDimAddsBroadcast) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* tv1 = sum(tv0, {0, 2}, /*keep_dim=*/true);
  ASSERT_EQ(tv1->rank(), 3);
  EXPECT_TRUE(tv1->axis(0)->isBroadcast());
  EXPECT_FALSE(tv1->axis(1)->isBroadcast());
  EXPECT_TRUE(tv1->axis(2)->isBroadcast());
  EXPECT_EQ(constExtent(tv1->axis(0)), 1);
  EXPECT_TRUE(tv1->axis(1)->extent()->sameAs(tv0->axis(1)->extent()));
  auto* bcast = tv1->definition()->as<BroadcastOp>();
  EXPECT_EQ(bcast->isBroadcastDims(), std::vector<int64_t>({1, 0, 1}));
  TensorView* reduced = bcast->in();
  EXPECT_EQ(reduced->rank(), 1);
  EXPECT_TRUE(reduced->definition()->isA<ReductionOp>());
  EXPECT_EQ(reduced->definition()->input(0), tv0);
}

TEST_F(OpBuilderTest, MaxAndMinWithKeepDim) {
  TensorView* tv0 = makeContigTensor(2, DataType::Int32);
  for (TensorView* out : {max(tv0, {1}, true), min(tv0, {1}, true)}) {
    ASSERT_EQ(out->rank(), 2);
    EXPECT_FALSE(out->axis(0)->isBroadcast());
    EXPECT_TRUE(out->axis(1)->isBroadcast());
    EXPECT_EQ(out->dtype(), DataType::Int32);
  }
  EXPECT_EQ(max(tv0, {1})->rank(), 1);
}

TEST_F(OpBuilderTest, BroadcastInsertsAxes) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = broadcast(tv0, {true, false, false, true});
  ASSERT_EQ(tv1->rank(), 4);
  EXPECT_TRUE(tv1->axis(0)->isBroadcast());
  EXPECT_TRUE(tv1->axis(3)->isBroadcast());
  EXPECT_EQ(constExtent(tv1->axis(0)), 1);
  EXPECT_EQ(constExtent(tv1->axis(3)), 1);
  EXPECT_TRUE(tv1->axis(1)->extent()->sameAs(tv0->axis(0)->extent()));
  EXPECT_TRUE(tv1->axis(2)->extent()->sameAs(tv0->axis(1)->extent()));
  auto* op = tv1->definition()->as<BroadcastOp>();
  EXPECT_EQ(op->isBroadcastDims(), std::vector<int64_t>({1, 0, 0, 1}));
  EXPECT_EQ(op->in(), tv0);
  EXPECT_EQ(tv1->axis(0)->toInlineString().substr(0, 2), "bS");
}

TEST_F(OpBuilderTest, BroadcastWithoutNewAxesIsACopy) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = broadcast(tv0, {false, false});
  expectSameExtents(tv0, tv1);
}

TEST_F(OpBuilderTest, MatmulOneDByOneDIsScalar) {
  TensorView* a = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  TensorView* out = matmul(a, b);
  EXPECT_EQ(out->rank(), 0);
  auto* op = out->definition()->as<MatmulOp>();
  EXPECT_EQ(op->a(), a);
  EXPECT_EQ(op->b(), b);
}

TEST_F(OpBuilderTest, Matmul2D) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({3, 5});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_EQ(constExtent(out->axis(0)), 2);
  EXPECT_EQ(constExtent(out->axis(1)), 5);
  EXPECT_EQ(out->dtype(), DataType::Float);
}

TEST_F(OpBuilderTest, Matmul2DSymbolic) {
  TensorView* a = makeContigTensor(2);  // [m, k]
  TensorView* b = makeContigTensor(2);  // [k', n]
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_TRUE(out->axis(0)->extent()->sameAs(a->axis(0)->extent()));
  EXPECT_TRUE(out->axis(1)->extent()->sameAs(b->axis(1)->extent()));
}

TEST_F(OpBuilderTest, MatmulVectorMatrix) {
  TensorView* a = makeConcreteTensor({3});
  TensorView* b = makeConcreteTensor({3, 7});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 1);
  EXPECT_EQ(constExtent(out->axis(0)), 7);
}

TEST_F(OpBuilderTest, MatmulMatrixVector) {
  TensorView* a = makeConcreteTensor({4, 3});
  TensorView* b = makeConcreteTensor({3});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 1);
  EXPECT_EQ(constExtent(out->axis(0)), 4);
}

TEST_F(OpBuilderTest, MatmulBatched) {
  TensorView* a = makeConcreteTensor({6, 2, 3});
  TensorView* b = makeConcreteTensor({6, 3, 5});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 3);
  EXPECT_EQ(constExtent(out->axis(0)), 6);
  EXPECT_EQ(constExtent(out->axis(1)), 2);
  EXPECT_EQ(constExtent(out->axis(2)), 5);
}

TEST_F(OpBuilderTest, MatmulBatchedByMatrix) {
  TensorView* a = makeConcreteTensor({6, 2, 3});
  TensorView* b = makeConcreteTensor({3, 5});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 3);
  EXPECT_EQ(constExtent(out->axis(0)), 6);
  EXPECT_EQ(constExtent(out->axis(2)), 5);
}

TEST_F(OpBuilderTest, MatmulVectorByBatched) {
  TensorView* a = makeConcreteTensor({3});
  TensorView* b = makeConcreteTensor({6, 3, 5});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_EQ(constExtent(out->axis(0)), 6);
  EXPECT_EQ(constExtent(out->axis(1)), 5);
}

TEST_F(OpBuilderTest, MatmulBroadcastsBatchAxes) {
  TensorView* a = makeConcreteTensor({1, 5, 2, 3});  // batch [b, 5]
  TensorView* b = makeConcreteTensor({4, 1, 3, 6});  // batch [4, b]
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 4);
  EXPECT_EQ(constExtent(out->axis(0)), 4);
  EXPECT_EQ(constExtent(out->axis(1)), 5);
  EXPECT_EQ(constExtent(out->axis(2)), 2);
  EXPECT_EQ(constExtent(out->axis(3)), 6);
  EXPECT_FALSE(out->axis(0)->isBroadcast());
  EXPECT_FALSE(out->axis(1)->isBroadcast());
}

TEST_F(OpBuilderTest, MatmulBatchOfDifferentRank) {
  TensorView* a = makeConcreteTensor({7, 6, 2, 3});
  TensorView* b = makeConcreteTensor({6, 3, 5});
  TensorView* out = matmul(a, b);
  ASSERT_EQ(out->rank(), 4);
  EXPECT_EQ(constExtent(out->axis(0)), 7);
  EXPECT_EQ(constExtent(out->axis(1)), 6);
}

TEST_F(OpBuilderTest, LinearWithoutBias) {
  TensorView* in = makeConcreteTensor({8, 16});
  TensorView* weight = makeConcreteTensor({32, 16});
  TensorView* out = linear(in, weight);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_EQ(constExtent(out->axis(0)), 8);
  EXPECT_EQ(constExtent(out->axis(1)), 32);
  auto* op = out->definition()->as<LinearOp>();
  EXPECT_FALSE(op->hasBias());
  EXPECT_EQ(op->bias(), nullptr);
  EXPECT_EQ(op->in(), in);
  EXPECT_EQ(op->weight(), weight);
  EXPECT_EQ(op->inputs().size(), 2u);
}

TEST_F(OpBuilderTest, LinearWithBias) {
  TensorView* in = makeContigTensor(2);
  TensorView* weight = makeContigTensor(2);
  TensorView* bias = makeContigTensor(1);
  TensorView* out = linear(in, weight, bias);
  ASSERT_EQ(out->rank(), 2);
  EXPECT_TRUE(out->axis(0)->extent()->sameAs(in->axis(0)->extent()));
  EXPECT_TRUE(out->axis(1)->extent()->sameAs(weight->axis(0)->extent()));
  auto* op = out->definition()->as<LinearOp>();
  EXPECT_TRUE(op->hasBias());
  EXPECT_EQ(op->bias(), bias);
  EXPECT_EQ(op->inputs().size(), 3u);
}

TEST_F(OpBuilderTest, LinearBatchedInput) {
  TensorView* in = makeConcreteTensor({2, 5, 16});
  TensorView* weight = makeConcreteTensor({4, 16});
  TensorView* bias = makeConcreteTensor({4});
  TensorView* out = linear(in, weight, bias);
  ASSERT_EQ(out->rank(), 3);
  EXPECT_EQ(constExtent(out->axis(0)), 2);
  EXPECT_EQ(constExtent(out->axis(1)), 5);
  EXPECT_EQ(constExtent(out->axis(2)), 4);
}

TEST_F(OpBuilderTest, LinearOneDWeight) {
  TensorView* in = makeConcreteTensor({8, 16});
  TensorView* weight = makeConcreteTensor({16});
  TensorView* out = linear(in, weight);
  ASSERT_EQ(out->rank(), 1);
  EXPECT_EQ(constExtent(out->axis(0)), 8);
}

TEST_F(OpBuilderTest, LinearOneDInput) {
  TensorView* in = makeConcreteTensor({16});
  TensorView* weight = makeConcreteTensor({4, 16});
  TensorView* out = linear(in, weight);
  ASSERT_EQ(out->rank(), 1);
  EXPECT_EQ(constExtent(out->axis(0)), 4);
}

TEST_F(OpBuilderTest, SelectDropsAxis) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* tv1 = select(tv0, 1, 0);
  ASSERT_EQ(tv1->rank(), 2);
  EXPECT_TRUE(tv1->axis(0)->extent()->sameAs(tv0->axis(0)->extent()));
  EXPECT_TRUE(tv1->axis(1)->extent()->sameAs(tv0->axis(2)->extent()));
  auto* op = tv1->definition()->as<SelectOp>();
  EXPECT_EQ(op->dim(), 1);
  EXPECT_EQ(op->in(), tv0);
  EXPECT_EQ(op->index()->as<Scalar>()->constInt(), 0);
}

TEST_F(OpBuilderTest, SelectNegativeDimAndSymbolicIndex) {
  TensorView* tv0 = makeConcreteTensor({4, 6});
  Scalar* index = symbol();
  TensorView* tv1 = select(tv0, -1, index);
  ASSERT_EQ(tv1->rank(), 1);
  EXPECT_EQ(constExtent(tv1->axis(0)), 4);
  auto* op = tv1->definition()->as<SelectOp>();
  EXPECT_EQ(op->dim(), 1);
  EXPECT_EQ(op->index(), index);
  EXPECT_EQ(select(tv0, 0, 3)->rank(), 1);  // the last valid index
  EXPECT_EQ(select(tv0, 0, size_t{2})->definition()->input(1)->as<Scalar>()->constInt(), 2);
}

TEST_F(OpBuilderTest, SliceConstantBounds) {
  TensorView* tv0 = makeConcreteTensor({10, 6});
  TensorView* tv1 = slice(tv0, 0, 2, 5);
  ASSERT_EQ(tv1->rank(), 2);
  EXPECT_EQ(constExtent(tv1->axis(0)), 3);
  EXPECT_EQ(constExtent(tv1->axis(1)), 6);
  auto* op = tv1->definition()->as<SliceOp>();
  EXPECT_EQ(op->dim(), 0);
  EXPECT_EQ(op->start()->as<Scalar>()->constInt(), 2);
  EXPECT_EQ(op->stop()->as<Scalar>()->constInt(), 5);
  EXPECT_EQ(constExtent(slice(tv0, -1, 0, 6)->axis(1)), 6);
  EXPECT_EQ(constExtent(slice(tv0, 0, 4, 4)->axis(0)), 0);  // empty is valid
}

TEST_F(OpBuilderTest, SliceSymbolicBounds) {
  TensorView* tv0 = makeContigTensor(2);
  Scalar* start = symbol();
  Scalar* stop = symbol();
  TensorView* tv1 = slice(tv0, 1, start, stop);
  ASSERT_EQ(tv1->rank(), 2);
  EXPECT_TRUE(tv1->axis(0)->extent()->sameAs(tv0->axis(0)->extent()));
  // torch's bounds (issue 22): b clamped into [-n, n], plus n when negative,
  // and the extent max(stop' - start', 0), in min/max only.
  const std::string n = tv0->axis(1)->extent()->toInlineString();
  auto bound = [&](Scalar* b) {
    const std::string clamped =
        "maximum(minimum(" + b->toInlineString() + ", " + n + "), ( 0 - " + n + " ))";
    return "( " + clamped + " + ( " + n + " * minimum(maximum(( 0 - " + clamped + " ), 0), 1) ) )";
  };
  EXPECT_EQ(tv1->axis(1)->extent()->toInlineString(),
            "maximum(( " + bound(stop) + " - " + bound(start) + " ), 0)");
  // A constant bound >= 0 and the extent itself stay short: x[0:n], x[2:n].
  Val* n_val = tv0->axis(1)->extent();
  EXPECT_EQ(slice(tv0, 1, IrBuilder::create<Scalar>(int64_t{0}), n_val)
                ->axis(1)
                ->extent()
                ->toInlineString(),
            n);
  EXPECT_EQ(slice(tv0, 1, IrBuilder::create<Scalar>(int64_t{2}), n_val)
                ->axis(1)
                ->extent()
                ->toInlineString(),
            "( " + n + " - minimum(2, " + n + ") )");
}

TEST_F(OpBuilderTest, PermuteReordersAxes) {
  TensorView* tv0 = makeConcreteTensor({2, 3, 4});
  TensorView* tv1 = permute(tv0, {2, 0, 1});
  ASSERT_EQ(tv1->rank(), 3);
  EXPECT_EQ(constExtent(tv1->axis(0)), 4);
  EXPECT_EQ(constExtent(tv1->axis(1)), 2);
  EXPECT_EQ(constExtent(tv1->axis(2)), 3);
  EXPECT_EQ(tv1->definition()->as<PermuteOp>()->dims(), std::vector<int64_t>({2, 0, 1}));
}

TEST_F(OpBuilderTest, PermuteNormalizesNegativeDims) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* tv1 = permute(tv0, {-1, 0, 1});
  EXPECT_EQ(tv1->definition()->as<PermuteOp>()->dims(), std::vector<int64_t>({2, 0, 1}));
  EXPECT_TRUE(tv1->axis(0)->extent()->sameAs(tv0->axis(2)->extent()));
}

TEST_F(OpBuilderTest, ReshapeConstantSizes) {
  TensorView* tv0 = makeConcreteTensor({2, 3, 4});
  TensorView* tv1 = reshape(tv0, {6, 4});
  ASSERT_EQ(tv1->rank(), 2);
  EXPECT_EQ(constExtent(tv1->axis(0)), 6);
  EXPECT_EQ(constExtent(tv1->axis(1)), 4);
  EXPECT_TRUE(tv1->definition()->isA<ReshapeOp>());
  EXPECT_EQ(tv1->definition()->input(0), tv0);
}

TEST_F(OpBuilderTest, ReshapeInfersMinusOne) {
  TensorView* tv0 = makeConcreteTensor({2, 3, 4});
  TensorView* tv1 = reshape(tv0, {-1, 4});
  EXPECT_EQ(constExtent(tv1->axis(0)), 6);
  TensorView* tv2 = reshape(tv0, {2, -1});
  EXPECT_EQ(constExtent(tv2->axis(1)), 12);
  TensorView* tv3 = reshape(tv0, {-1});
  EXPECT_EQ(constExtent(tv3->axis(0)), 24);
}

TEST_F(OpBuilderTest, ReshapeSymbolicInput) {
  TensorView* tv0 = makeContigTensor(2);  // [i0, i1]
  std::string i0 = tv0->axis(0)->extent()->toInlineString();
  std::string i1 = tv0->axis(1)->extent()->toInlineString();
  TensorView* flat = reshape(tv0, {-1});
  ASSERT_EQ(flat->rank(), 1);
  EXPECT_EQ(flat->axis(0)->extent()->toInlineString(), "( " + i0 + " * " + i1 + " )");
  TensorView* split = reshape(tv0, {4, -1});
  EXPECT_EQ(constExtent(split->axis(0)), 4);
  EXPECT_EQ(split->axis(1)->extent()->toInlineString(), "( ( " + i0 + " * " + i1 + " ) / 4 )");
}

TEST_F(OpBuilderTest, ReshapeWithBroadcastAxis) {
  TensorView* tv0 = makeConcreteTensor({1, 6});
  TensorView* tv1 = reshape(tv0, {2, 3});
  EXPECT_EQ(constExtent(tv1->axis(0)), 2);
  EXPECT_EQ(constExtent(tv1->axis(1)), 3);
}

TEST_F(OpBuilderTest, FullRecordsFillValueAndExtents) {
  Scalar* fill = IrBuilder::create<Scalar>(1.5);
  TensorView* tv = full({constant(2), constant(3)}, fill, DataType::Float);
  ASSERT_EQ(tv->rank(), 2);
  EXPECT_EQ(constExtent(tv->axis(0)), 2);
  EXPECT_EQ(constExtent(tv->axis(1)), 3);
  EXPECT_EQ(tv->dtype(), DataType::Float);
  auto* op = tv->definition()->as<FullOp>();
  EXPECT_EQ(op->fillValue(), fill);
  ASSERT_EQ(op->inputs().size(), 3u);  // the fill value and both extents
  EXPECT_EQ(op->input(1), tv->axis(0)->extent());
  EXPECT_EQ(op->input(2), tv->axis(1)->extent());
}

TEST_F(OpBuilderTest, ZerosAndOnes) {
  TensorView* z = zeros({constant(4)});
  EXPECT_EQ(z->dtype(), DataType::Float);
  EXPECT_EQ(z->definition()->as<FullOp>()->fillValue()->as<Scalar>()->constInt(), 0);
  TensorView* o = ones({constant(4), constant(2)}, DataType::Int64);
  EXPECT_EQ(o->dtype(), DataType::Int64);
  EXPECT_EQ(o->rank(), 2);
  EXPECT_EQ(o->definition()->as<FullOp>()->fillValue()->as<Scalar>()->constInt(), 1);
  EXPECT_EQ(zeros({}, DataType::Half)->rank(), 0);
}

TEST_F(OpBuilderTest, FullWithSymbolicExtentsOfAnotherTensor) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = zeros({tv0->axis(0)->extent(), tv0->axis(1)->extent()});
  expectSameExtents(tv0, tv1);
  // ... so it can be added to tv0 without any broadcast.
  TensorView* tv2 = add(tv0, tv1);
  expectSameExtents(tv0, tv2);
}

TEST_F(OpBuilderTest, OutputsAreContiguousLocalTensors) {
  TensorView* tv0 = makeSymbolicTensor(2);
  EXPECT_EQ(tv0->domain()->contiguity(), std::vector<bool>({false, false}));
  TensorView* tv1 = relu(tv0);
  EXPECT_EQ(tv1->domain()->contiguity(), std::vector<bool>({true, true}));
  EXPECT_EQ(tv1->getMemoryType(), MemoryType::Local);
  fusion_.addOutput(tv1);
  EXPECT_EQ(tv1->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(makeContigTensor(2)->domain()->contiguity(), std::vector<bool>({true, true}));
}

TEST_F(OpBuilderTest, ChainedOpsRecordUses) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  TensorView* tv2 = add(tv1, tv1);
  // An expr using a value twice is recorded once.
  ASSERT_EQ(tv1->uses().size(), 1u);
  EXPECT_EQ(tv1->uses()[0], tv2->definition());
  EXPECT_EQ(tv2->definition()->inputs().size(), 2u);
}

}  // namespace
}  // namespace hostir::test
