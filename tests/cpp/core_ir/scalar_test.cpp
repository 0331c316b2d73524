// Scalars: constants, symbols, named scalars, integer arithmetic, folding,
// printing, sameAs; symbolic extents shared between tensors.

#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using ScalarTest = IrTest;

Scalar* named(const char* name) {
  return IrBuilder::create<Scalar>(std::string(name), DataType::Int64);
}

TEST_F(ScalarTest, ConstantsPrintTheirValue) {
  EXPECT_EQ(constant(4)->toInlineString(), "4");
  EXPECT_EQ(constant(-7)->toInlineString(), "-7");
  EXPECT_EQ(IrBuilder::create<Scalar>(2.0)->toInlineString(), "2.0");
  EXPECT_EQ(IrBuilder::create<Scalar>(2.5)->toInlineString(), "2.5");
  EXPECT_EQ(IrBuilder::create<Scalar>(1e20)->toInlineString(), "1e+20");
  EXPECT_EQ(IrBuilder::create<Scalar>(true)->toInlineString(), "true");
  EXPECT_EQ(IrBuilder::create<Scalar>(false)->toString(), "false");
}

TEST_F(ScalarTest, ConstantDtypesAndAccessors) {
  Scalar* i = IrBuilder::create<Scalar>(4);  // an int literal is an int64 constant
  EXPECT_EQ(i->dtype(), DataType::Int64);
  EXPECT_TRUE(i->isConst());
  EXPECT_TRUE(i->isConstInt());
  EXPECT_EQ(i->constInt(), 4);
  EXPECT_EQ(i->vtype(), ValType::Scalar);
  Scalar* d = IrBuilder::create<Scalar>(0.5);
  EXPECT_EQ(d->dtype(), DataType::Double);
  EXPECT_TRUE(d->isConst());
  EXPECT_FALSE(d->isConstInt());
  EXPECT_EQ(d->value(), ScalarValue(0.5));
  Scalar* b = IrBuilder::create<Scalar>(true);
  EXPECT_EQ(b->dtype(), DataType::Bool);
  EXPECT_FALSE(b->isConstInt());
}

TEST_F(ScalarTest, ConstIntOfSymbolIsAnInternalError) {
  Scalar* s = symbol();
  EXPECT_HOSTIR_ERROR(s->constInt(), {"hostir internal error", "is not a constant integer"});
}

TEST_F(ScalarTest, FreeSymbolsPrintByDtypeAndName) {
  Scalar* i = IrBuilder::create<Scalar>(DataType::Int64);
  Scalar* d = IrBuilder::create<Scalar>(DataType::Double);
  Scalar* b = IrBuilder::create<Scalar>(DataType::Bool);
  Scalar* h = IrBuilder::create<Scalar>(DataType::Int32);
  EXPECT_EQ(i->toInlineString(), "i0");
  EXPECT_EQ(d->toInlineString(), "d1");
  EXPECT_EQ(b->toInlineString(), "b2");
  EXPECT_EQ(h->toInlineString(), "i3");
  EXPECT_FALSE(i->isConst());
  EXPECT_EQ(i->definition(), nullptr);
  EXPECT_TRUE(i->symbol().empty());
}

TEST_F(ScalarTest, NamedScalars) {
  Scalar* idx = named(kStreamIdx);
  Scalar* n = named(kNumberOfStreams);
  EXPECT_EQ(idx->toInlineString(), "StreamIdx");
  EXPECT_EQ(n->toInlineString(), "numberOfStreams");
  EXPECT_EQ(idx->symbol(), "StreamIdx");
  EXPECT_FALSE(idx->isConst());
  EXPECT_EQ(idx->dtype(), DataType::Int64);
  Val* stream = mod(idx, n);
  EXPECT_EQ(stream->toInlineString(), "( StreamIdx % numberOfStreams )");
  ASSERT_NE(stream->definition(), nullptr);
  EXPECT_EQ(stream->definition()->as<BinaryOp>()->type(), BinaryOpType::Mod);
  EXPECT_EQ(stream->dtype(), DataType::Int64);
}

TEST_F(ScalarTest, NamedScalarsAreSameAsByName) {
  EXPECT_TRUE(named(kStreamIdx)->sameAs(named(kStreamIdx)));
  EXPECT_FALSE(named(kStreamIdx)->sameAs(named(kNumberOfStreams)));
  EXPECT_FALSE(named(kStreamIdx)->sameAs(symbol()));
}

TEST_F(ScalarTest, FoldsConstantArithmetic) {
  auto folded = [](Val* v) {
    EXPECT_EQ(v->definition(), nullptr) << v->toInlineString();
    return v->as<Scalar>()->constInt();
  };
  EXPECT_EQ(folded(ceilDiv(constant(8), constant(3))), 3);
  EXPECT_EQ(folded(ceilDiv(constant(9), constant(3))), 3);
  EXPECT_EQ(folded(add(constant(2), constant(3))), 5);
  EXPECT_EQ(folded(sub(constant(2), constant(3))), -1);
  EXPECT_EQ(folded(mul(constant(4), constant(6))), 24);
  EXPECT_EQ(folded(div(constant(7), constant(2))), 3);  // integer division on scalars
  EXPECT_EQ(folded(mod(constant(7), constant(3))), 1);
  EXPECT_EQ(folded(maximum(constant(7), constant(3))), 7);
  EXPECT_EQ(folded(minimum(constant(7), constant(3))), 3);
}

TEST_F(ScalarTest, FoldsMixedAndFloatingConstants) {
  Val* v = add(constant(2), IrBuilder::create<Scalar>(0.5));
  ASSERT_TRUE(v->as<Scalar>()->isConst());
  EXPECT_EQ(v->dtype(), DataType::Double);
  EXPECT_EQ(v->as<Scalar>()->value(), ScalarValue(2.5));
  Val* w = div(IrBuilder::create<Scalar>(1.0), IrBuilder::create<Scalar>(4.0));
  EXPECT_EQ(w->as<Scalar>()->value(), ScalarValue(0.25));
  EXPECT_EQ(w->toInlineString(), "0.25");
}

TEST_F(ScalarTest, MultiplicationByOneIsTheOtherOperand) {
  Scalar* i0 = symbol();
  EXPECT_EQ(mul(i0, constant(1)), i0);
  EXPECT_EQ(mul(constant(1), i0), i0);
  EXPECT_EQ(div(i0, constant(1)), i0);
  EXPECT_EQ(ceilDiv(i0, constant(1)), i0);
  EXPECT_NE(mul(i0, constant(2)), i0);
  EXPECT_NE(add(i0, constant(1)), i0);
}

TEST_F(ScalarTest, InfixPrinting) {
  Scalar* i0 = symbol();
  Scalar* i1 = symbol();
  EXPECT_EQ(mul(i0, i1)->toInlineString(), "( i0 * i1 )");
  EXPECT_EQ(add(i0, i1)->toInlineString(), "( i0 + i1 )");
  EXPECT_EQ(sub(i0, constant(2))->toInlineString(), "( i0 - 2 )");
  EXPECT_EQ(div(i0, constant(2))->toInlineString(), "( i0 / 2 )");
  EXPECT_EQ(mod(i0, i1)->toInlineString(), "( i0 % i1 )");
  EXPECT_EQ(mul(add(i0, constant(1)), i1)->toInlineString(), "( ( i0 + 1 ) * i1 )");
}

TEST_F(ScalarTest, FunctionStylePrinting) {
  Scalar* i0 = symbol();
  Scalar* i1 = symbol();
  EXPECT_EQ(ceilDiv(i0, constant(4))->toInlineString(), "ceilDiv(i0, 4)");
  EXPECT_EQ(maximum(i0, i1)->toInlineString(), "maximum(i0, i1)");
  EXPECT_EQ(minimum(i0, constant(3))->toInlineString(), "minimum(i0, 3)");
  EXPECT_EQ(ceilDiv(mul(i0, i1), constant(2))->toInlineString(), "ceilDiv(( i0 * i1 ), 2)");
}

TEST_F(ScalarTest, ScalarExprsPrintAsStatements) {
  Scalar* i0 = symbol();
  Val* out = ceilDiv(i0, constant(4));
  EXPECT_EQ(out->definition()->toString(), "ceilDiv(i0, 4)\n   = ceilDiv( i0, 4 )\n");
  EXPECT_EQ(out->definition()->toInlineString(), "ceilDiv(i0, 4)");
}

TEST_F(ScalarTest, ArithmeticDtypes) {
  Scalar* i = symbol();
  Scalar* d = IrBuilder::create<Scalar>(DataType::Double);
  Scalar* i32 = IrBuilder::create<Scalar>(DataType::Int32);
  EXPECT_EQ(add(i, d)->dtype(), DataType::Double);
  EXPECT_EQ(mul(i, i)->dtype(), DataType::Int64);
  EXPECT_EQ(add(i32, i32)->dtype(), DataType::Int32);
  EXPECT_EQ(add(i32, i)->dtype(), DataType::Int64);
  EXPECT_EQ(ceilDiv(i32, i)->dtype(), DataType::Int64);
}

TEST_F(ScalarTest, ConstantsAreSameAsByValueAndDtype) {
  EXPECT_TRUE(constant(4)->sameAs(constant(4)));
  EXPECT_FALSE(constant(4)->sameAs(constant(5)));
  EXPECT_FALSE(constant(4)->sameAs(IrBuilder::create<Scalar>(4.0)));
  EXPECT_FALSE(constant(4)->sameAs(symbol()));
  EXPECT_FALSE(symbol()->sameAs(constant(4)));
  EXPECT_TRUE(IrBuilder::create<Scalar>(true)->sameAs(IrBuilder::create<Scalar>(true)));
}

TEST_F(ScalarTest, DistinctSymbolsAreNotSameAs) {
  Scalar* a = symbol();
  Scalar* b = symbol();
  EXPECT_TRUE(a->sameAs(a));
  EXPECT_FALSE(a->sameAs(b));
  EXPECT_FALSE(a->sameAs(nullptr));
}

TEST_F(ScalarTest, ExpressionsAreSameAsStructurally) {
  Scalar* a = symbol();
  Scalar* b = symbol();
  EXPECT_TRUE(mul(a, b)->sameAs(mul(a, b)));
  EXPECT_FALSE(mul(a, b)->sameAs(mul(b, a)));
  EXPECT_FALSE(mul(a, b)->sameAs(add(a, b)));
  EXPECT_TRUE(ceilDiv(a, constant(4))->sameAs(ceilDiv(a, constant(4))));
  EXPECT_FALSE(ceilDiv(a, constant(4))->sameAs(ceilDiv(a, constant(2))));
  EXPECT_FALSE(mul(a, b)->sameAs(a));
  EXPECT_FALSE(a->sameAs(mul(a, b)));
}

TEST_F(ScalarTest, ScalarOutputsListTheirArithmetic) {
  Scalar* a = symbol();
  Val* b = mul(a, constant(3));
  EXPECT_FALSE(a->isFusionInput());
  fusion_.addInput(a);
  EXPECT_TRUE(a->isFusionInput());
  fusion_.addOutput(b);
  EXPECT_TRUE(b->isFusionOutput());
  ASSERT_EQ(fusion_.exprs().size(), 1u);
  EXPECT_EQ(fusion_.exprs()[0], b->definition());
}

// --- symbolic extents --------------------------------------------------------

TEST_F(ScalarTest, ContigTensorHasOneSymbolPerAxis) {
  TensorView* tv0 = makeContigTensor(3);
  EXPECT_EQ(tv0->axis(0)->extent()->toInlineString(), "i0");
  EXPECT_EQ(tv0->axis(1)->extent()->toInlineString(), "i1");
  EXPECT_EQ(tv0->axis(2)->extent()->toInlineString(), "i2");
  EXPECT_FALSE(tv0->axis(0)->extent()->sameAs(tv0->axis(1)->extent()));
  TensorView* tv1 = makeContigTensor(1);
  EXPECT_EQ(tv1->axis(0)->extent()->toInlineString(), "i3");
}

TEST_F(ScalarTest, SymbolSharedByTwoInputs) {
  TensorView* tv0 = makeContigTensor(2);  // [i0, i1]
  // T1 is built over T0's second extent: both inputs must agree on it.
  auto* id = IrBuilder::create<IterDomain>(tv0->axis(1)->extent());
  auto* domain =
      IrBuilder::create<TensorDomain>(std::vector<IterDomain*>{id}, std::vector<bool>{true});
  auto* tv1 = IrBuilder::create<TensorView>(domain, DataType::Float);
  fusion_.addInput(tv0);
  fusion_.addInput(tv1);
  EXPECT_EQ(tv1->axis(0)->extent(), tv0->axis(1)->extent());
  EXPECT_EQ(tv1->toString(), "T1_g_float[iS2{i1}]");
  TensorView* tv2 = add(tv0, tv1);
  EXPECT_TRUE(tv2->axis(1)->extent()->sameAs(tv1->axis(0)->extent()));
  fusion_.addOutput(tv2);
  EXPECT_EQ(tv2->toString(), "T2_g_float[iS3{i0}, iS4{i1}]");
}

TEST_F(ScalarTest, ExtentExpressionsAsTensorSizes) {
  TensorView* tv0 = makeContigTensor(2);  // [i0, i1]
  Val* numel = mul(tv0->axis(0)->extent(), tv0->axis(1)->extent());
  TensorView* tv1 = zeros({numel});
  EXPECT_EQ(tv1->axis(0)->extent()->toInlineString(), "( i0 * i1 )");
  EXPECT_TRUE(tv1->axis(0)->extent()->sameAs(reshape(tv0, {-1})->axis(0)->extent()));
}

}  // namespace
}  // namespace hostir::test
