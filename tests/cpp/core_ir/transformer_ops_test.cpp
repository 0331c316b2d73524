// The ops a transformer needs, at build time: their printed form, their
// output dtypes and shapes, their validation errors, their traits, and that
// the compositions (softmax, layer norm, ...) emit only primitive ops.

#include <cmath>
#include <map>

#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using TransformerOpsTest = IrTest;

// How many exprs of each kind (opName) compute the fusion's outputs.
std::map<std::string, int> exprKinds(Fusion& fusion) {
  std::map<std::string, int> kinds;
  for (const Expr* expr : fusion.exprs()) {
    ++kinds[expr->opName()];
  }
  return kinds;
}

TEST_F(TransformerOpsTest, PrintedForms) {
  TensorView* tv0 = makeContigTensor(2);
  fusion_.addInput(tv0);
  EXPECT_EQ(rsqrt(tv0)->definition()->toString(),
            "T1_l_float[iS2{i0}, iS3{i1}]\n   = rsqrt( T0_g_float[iS0{i0}, iS1{i1}] )\n");
  EXPECT_EQ(erf(tv0)->definition()->toString(),
            "T2_l_float[iS4{i0}, iS5{i1}]\n   = erf( T0_g_float[iS0{i0}, iS1{i1}] )\n");
  EXPECT_EQ(pow(tv0, 2.0)->definition()->toString(),
            "T3_l_float[iS6{i0}, iS7{i1}]\n   = pow( T0_g_float[iS0{i0}, iS1{i1}], 2.0 )\n");
  TensorView* mask = gt(tv0, 0.0);
  EXPECT_EQ(mask->definition()->toString(),
            "T4_l_bool[iS8{i0}, iS9{i1}]\n   = gt( T0_g_float[iS0{i0}, iS1{i1}], 0.0 )\n");
  EXPECT_EQ(where(mask, tv0, -INFINITY)->definition()->toString(),
            "T5_l_float[iS10{i0}, iS11{i1}]\n"
            "   = where( T4_l_bool[iS8{i0}, iS9{i1}], T0_g_float[iS0{i0}, iS1{i1}], -inf )\n");
  TensorView* range = iota(tv0->axis(1)->extent(), constant(0), constant(1));
  EXPECT_EQ(range->definition()->toString(), "T6_l_int64[iS12{i1}]\n   = iota( i1, 0, 1 )\n");
}

TEST_F(TransformerOpsTest, ComparisonsGiveBoolAndBroadcast) {
  TensorView* tv0 = makeContigTensor(2, DataType::Int32);
  TensorView* tv1 = makeConcreteTensor({1, 4}, DataType::Double);
  for (TensorView* out :
       {eq(tv0, tv1), ne(tv0, 1), lt(tv0, 1.5), le(2, tv0), gt(tv1, tv0), ge(tv0, tv0)}) {
    EXPECT_EQ(out->dtype(), DataType::Bool);
    EXPECT_EQ(out->shapeDomain().size(), 2u);
    EXPECT_TRUE(hasTrait(out->definition(), OpTrait::Pointwise));
  }
  EXPECT_EQ(constExtent(eq(tv0, tv1)->shapeDomain()[1]), 4);
}

TEST_F(TransformerOpsTest, PowPromotesAsAdd) {
  TensorView* ints = makeContigTensor(1, DataType::Int64);
  EXPECT_EQ(pow(ints, 2)->dtype(), DataType::Int64);
  EXPECT_EQ(pow(ints, 0.5)->dtype(), DataType::Float);
  EXPECT_EQ(pow(2.0, makeContigTensor(1, DataType::Double))->dtype(), DataType::Double);
  EXPECT_EQ(rsqrt(ints)->dtype(), DataType::Float);
  EXPECT_EQ(erf(makeContigTensor(1, DataType::Bool))->dtype(), DataType::Float);
}

// On two scalars pow folds and a comparison is a Bool scalar (nvFuser's
// frontend computes sizes with them); both were refused before.
TEST_F(TransformerOpsTest, PowAndComparisonsOnTwoScalarsAreScalars) {
  Val* power = pow(constant(2), constant(3));
  ASSERT_TRUE(power->as<Scalar>()->isConstInt());
  EXPECT_EQ(power->as<Scalar>()->constInt(), 8);
  Val* less = lt(symbol(), constant(3));
  EXPECT_EQ(less->vtype(), ValType::Scalar);
  EXPECT_EQ(less->dtype(), DataType::Bool);
}

TEST_F(TransformerOpsTest, ComparisonShapeMismatchNamesBothTensors) {
  TensorView* tv0 = makeConcreteTensor({2, 3});
  TensorView* tv1 = makeConcreteTensor({2, 4});
  EXPECT_HOSTIR_ERROR(eq(tv0, tv1), {"eq: cannot broadcast", "T0", "T1", "iS1{3}", "iS3{4}"});
}

TEST_F(TransformerOpsTest, WhereShapesAndDtypes) {
  TensorView* cond = makeConcreteTensor({4, 1}, DataType::Bool);
  TensorView* a = makeConcreteTensor({1, 5}, DataType::Half);
  TensorView* b = makeConcreteTensor({5}, DataType::Float);
  TensorView* out = where(cond, a, b);
  EXPECT_EQ(out->dtype(), DataType::Float);
  EXPECT_EQ(shapeStrings(out).size(), 2u);
  EXPECT_EQ(constExtent(out->shapeDomain()[0]), 4);
  EXPECT_EQ(constExtent(out->shapeDomain()[1]), 5);
  EXPECT_EQ(where(cond, a, 0.0)->dtype(), DataType::Half);  // a Python number does not widen
  EXPECT_EQ(where(cond, 1, makeConcreteTensor({4, 1}, DataType::Int32))->dtype(), DataType::Int32);
  TensorView* scalars = where(cond, IrBuilder::create<Scalar>(1.0), IrBuilder::create<Scalar>(0.0));
  EXPECT_EQ(scalars->dtype(), DataType::Double);  // two scalars: their dtype, as nvFuser's
  EXPECT_EQ(constExtent(scalars->shapeDomain()[0]), 4);
  EXPECT_TRUE(hasTrait(out->definition(), OpTrait::Pointwise));
  EXPECT_TRUE(hasTrait(out->definition(), OpTrait::StreamParallelizable));
  EXPECT_TRUE(hasTrait(out->definition(), OpTrait::AtenEvaluable));
}

TEST_F(TransformerOpsTest, WhereBadInputs) {
  TensorView* floats = makeConcreteTensor({4, 5});
  TensorView* cond = makeConcreteTensor({4, 5}, DataType::Bool);
  EXPECT_HOSTIR_ERROR(where(floats, floats, 0.0),
                      {"where(T0", "the condition T0", "has dtype float", "it must be Bool"});
  EXPECT_HOSTIR_ERROR(where(cond, makeConcreteTensor({3}), 0.0),
                      {"where: cannot broadcast", "T1", "T2", "iS3{5}", "iS4{3}"});
  EXPECT_HOSTIR_ERROR(where(cond, floats, nullptr), {"where: an operand is null"});
  // A node a pass makes is checked as the builder's is.
  TensorView* out = makeConcreteTensor({4, 5});
  EXPECT_HOSTIR_ERROR(IrBuilder::create<WhereOp>(std::vector<Val*>{floats, floats, floats},
                                                 std::vector<Val*>{out}, std::vector<Attribute>{}),
                      {"must be Bool", "(making T", "= where("});
}

TEST_F(TransformerOpsTest, IotaAndArange) {
  Scalar* n = symbol();
  TensorView* range = iota(n, constant(3), constant(2), DataType::Int32);
  EXPECT_EQ(range->dtype(), DataType::Int32);
  EXPECT_EQ(range->shapeDomain()[0]->extent(), n);
  EXPECT_TRUE(hasTrait(range->definition(), OpTrait::Factory));
  EXPECT_TRUE(hasTrait(range->definition(), OpTrait::Forwardable));
  TensorView* floats =
      iota(n, IrBuilder::create<Scalar>(0.5), IrBuilder::create<Scalar>(0.25), DataType::Float);
  EXPECT_EQ(floats->dtype(), DataType::Float);
  // arange(2, 11, 3): ceilDiv(9, 3) = 3 elements, folded.
  TensorView* ar = arange(constant(2), constant(11), constant(3));
  EXPECT_EQ(constExtent(ar->shapeDomain()[0]), 3);
  EXPECT_EQ(ar->definition()->toString(), "T2_l_int64[iS2{3}]\n   = iota( 3, 2, 3 )\n");
  TensorView* symbolic = arange(n);
  EXPECT_EQ(symbolic->shapeDomain()[0]->extent()->toInlineString(), "i0");
}

TEST_F(TransformerOpsTest, IotaBadInputs) {
  EXPECT_HOSTIR_ERROR(iota(IrBuilder::create<Scalar>(2.0), constant(0), constant(1)),
                      {"iota: the length must be an integer scalar", "2.0", "double"});
  EXPECT_HOSTIR_ERROR(iota(constant(-1), constant(0), constant(1)),
                      {"iota: the length -1 is negative"});
  EXPECT_HOSTIR_ERROR(iota(constant(4), IrBuilder::create<Scalar>(0.5), constant(1)),
                      {"an integer dtype (int64) needs integer start and step"});
  EXPECT_HOSTIR_ERROR(iota(constant(4), constant(0), constant(1), DataType::Bool),
                      {"dtype Bool is not valid"});
  EXPECT_HOSTIR_ERROR(arange(constant(0), constant(4), constant(0)), {"step must not be zero"});
  EXPECT_HOSTIR_ERROR(arange(constant(4), constant(0), constant(1)),
                      {"the step's sign does not lead from start to end"});
  EXPECT_HOSTIR_ERROR(arange(IrBuilder::create<Scalar>(4.0)),
                      {"arange: start, end and step must be integer scalars", "use iota"});
}

TEST_F(TransformerOpsTest, CausalMaskIsIotaAndGe) {
  Scalar* queries = symbol();
  Scalar* keys = symbol();
  TensorView* mask = causalMask(queries, keys, symbol());
  fusion_.addOutput(mask);
  EXPECT_EQ(mask->dtype(), DataType::Bool);
  ASSERT_EQ(mask->shapeDomain().size(), 2u);
  EXPECT_EQ(mask->shapeDomain()[0]->extent(), queries);
  EXPECT_EQ(mask->shapeDomain()[1]->extent(), keys);
  std::map<std::string, int> kinds = exprKinds(fusion_);
  EXPECT_EQ(kinds["IotaOp"], 2);
  EXPECT_EQ(kinds["BroadcastOp"], 2);
  EXPECT_EQ(kinds["BinaryOp"], 1);
  EXPECT_EQ(mask->definition()->as<BinaryOp>()->type(), BinaryOpType::Ge);
  EXPECT_HOSTIR_ERROR(causalMask(queries, keys, IrBuilder::create<Scalar>(1.0)),
                      {"causalMask: the query offset must be an integer scalar"});
}

// The compositions emit primitives only: every expr is a node kind the
// ATen evaluator and the host lowering already know, none of a new kind.
TEST_F(TransformerOpsTest, SoftmaxIsAComposition) {
  TensorView* tv0 = makeContigTensor(3);
  TensorView* out = softmax(tv0, -1);
  fusion_.addOutput(out);
  EXPECT_EQ(out->dtype(), DataType::Float);
  EXPECT_EQ(shapeStrings(out).size(), 3u);
  std::map<std::string, int> kinds = exprKinds(fusion_);
  EXPECT_EQ(kinds, (std::map<std::string, int>{
                       {"ReductionOp", 2}, {"BroadcastOp", 2}, {"BinaryOp", 2}, {"UnaryOp", 1}}));
  // max, then sum, over the last axis.
  std::vector<ReductionOpType> reductions;
  for (const Expr* expr : fusion_.exprs()) {
    if (const auto* r = dynamic_cast<const ReductionOp*>(expr)) {
      reductions.push_back(r->type());
      EXPECT_EQ(r->axes(), std::vector<int64_t>{2});
    }
  }
  EXPECT_EQ(reductions, (std::vector<ReductionOpType>{ReductionOpType::Max, ReductionOpType::Sum}));
}

TEST_F(TransformerOpsTest, LayerNormAndRmsNormAreCompositions) {
  TensorView* x = makeConcreteTensor({4, 8});
  TensorView* w = makeConcreteTensor({8});
  TensorView* b = makeConcreteTensor({8});
  TensorView* y = layerNorm(x, 1, w, b);
  fusion_.addOutput(y);
  EXPECT_EQ(constExtent(y->shapeDomain()[1]), 8);
  std::map<std::string, int> kinds = exprKinds(fusion_);
  EXPECT_EQ(kinds["ReductionOp"], 2);  // mean, variance
  EXPECT_EQ(kinds["UnaryOp"], 1);      // rsqrt
  for (const auto& [kind, count] : kinds) {
    EXPECT_TRUE(kind == "ReductionOp" || kind == "BroadcastOp" || kind == "BinaryOp" ||
                kind == "UnaryOp")
        << kind;
  }
  fusion_.addOutput(rmsNorm(x, 1, w));
  EXPECT_EQ(exprKinds(fusion_)["ReductionOp"], 3);
}

TEST_F(TransformerOpsTest, CompositionBadInputs) {
  TensorView* ints = makeContigTensor(2, DataType::Int64);
  EXPECT_HOSTIR_ERROR(softmax(ints, 1),
                      {"softmax(T0", "needs a floating-point tensor", "int64", "cast it first"});
  TensorView* x = makeConcreteTensor({4, 8});
  EXPECT_HOSTIR_ERROR(softmax(x, 2), {"axis 2 is out of range", "T1", "valid axes are [-2, 2)"});
  EXPECT_HOSTIR_ERROR(layerNorm(x, 3),
                      {"layer_norm(T1", "normalized_ndims 3 is out of range", "valid: [1, 2]"});
  EXPECT_HOSTIR_ERROR(layerNorm(x, 1, makeConcreteTensor({4, 8})),
                      {"layer_norm(T1", "the weight T2", "has rank 2", "1 normalized trailing"});
  EXPECT_HOSTIR_ERROR(rmsNorm(x, 1, nullptr, makeConcreteTensor({7})),
                      {"rms_norm(T1", "the bias T3", "does not match the normalized axes"});
  EXPECT_HOSTIR_ERROR(var(x, {1}, -1), {"var_mean(T1", "correction -1 is negative"});
  EXPECT_HOSTIR_ERROR(mean(ints, {0}), {"mean(T0", "needs a floating-point tensor"});
  EXPECT_HOSTIR_ERROR(mean(x, {}), {"mean(T1", "give at least one axis"});
}

TEST_F(TransformerOpsTest, VarMeanShapes) {
  TensorView* x = makeConcreteTensor({3, 4, 5});
  auto [v, m] = varMean(x, {0, -1});
  EXPECT_EQ(shapeStrings(v).size(), 1u);
  EXPECT_EQ(shapeStrings(m).size(), 1u);
  auto [vk, mk] = varMean(x, {1}, 0, /*keep_dim=*/true);
  EXPECT_EQ(constExtent(vk->shapeDomain()[1]), 1);
  EXPECT_TRUE(mk->shapeDomain()[1]->isBroadcast());
}

}  // namespace
}  // namespace hostir::test
