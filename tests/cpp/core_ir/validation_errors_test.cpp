// Every user mistake a builder or the IR API catches raises hostir::Error
// naming the tensors in IR notation and saying what would be valid.

#include "hostir/ir/device_mesh.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using ValidationTest = IrTest;

std::string str(const Val* val) {
  return val->toInlineString();
}

// --- elementwise broadcasting ------------------------------------------

TEST_F(ValidationTest, BinaryOpMismatchedConstantExtentsExactMessage) {
  TensorView* tv0 = makeConcreteTensor({3, 4});
  TensorView* tv1 = makeConcreteTensor({5, 4});
  EXPECT_HOSTIR_ERROR(add(tv0, tv1), {"add: cannot broadcast T0_l_float[iS0{3}, iS1{4}] with "
                                      "T1_l_float[iS2{5}, iS3{4}]: iS0{3} and iS2{5} differ; "
                                      "sizes must match or one must be a broadcast axis"});
}

TEST_F(ValidationTest, BinaryOpRankMismatchWithDifferentExtents) {
  TensorView* tv0 = makeConcreteTensor({3, 4});
  TensorView* tv1 = makeConcreteTensor({5});
  EXPECT_HOSTIR_ERROR(mul(tv0, tv1), {"mul: cannot broadcast", str(tv0), str(tv1),
                                      str(tv0->axis(1)), str(tv1->axis(0)), "must match"});
  EXPECT_HOSTIR_ERROR(sub(tv1, tv0), {"sub: cannot broadcast", str(tv1), str(tv0)});
}

TEST_F(ValidationTest, BinaryOpEveryKindChecksShapes) {
  TensorView* tv0 = makeConcreteTensor({2});
  TensorView* tv1 = makeConcreteTensor({3});
  EXPECT_HOSTIR_ERROR(div(tv0, tv1), {"div: cannot broadcast"});
  EXPECT_HOSTIR_ERROR(maximum(tv0, tv1), {"maximum: cannot broadcast"});
  EXPECT_HOSTIR_ERROR(minimum(tv0, tv1), {"minimum: cannot broadcast"});
}

TEST_F(ValidationTest, BinaryOpOperandsFromDifferentFusions) {
  TensorView* tv0 = makeContigTensor(1);
  Fusion other;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(&other);
    tv1 = makeContigTensor(1);
  }
  EXPECT_HOSTIR_ERROR(add(tv0, tv1), {"add", str(tv0), str(tv1), "different fusions"});
}

TEST_F(ValidationTest, CeilDivAndModRejectTensors) {
  TensorView* tv0 = makeContigTensor(1, DataType::Int64);
  EXPECT_HOSTIR_ERROR(ceilDiv(tv0, constant(2)),
                      {"ceilDiv is defined on integer scalars, not on tensor", str(tv0)});
  EXPECT_HOSTIR_ERROR(mod(constant(2), tv0), {"mod is defined on integer scalars", str(tv0)});
}

TEST_F(ValidationTest, CeilDivOnFloatScalars) {
  Scalar* d = IrBuilder::create<Scalar>(DataType::Double);
  EXPECT_HOSTIR_ERROR(ceilDiv(d, constant(2)),
                      {"ceilDiv(" + str(d) + ", 2)", "needs integer scalars"});
  EXPECT_HOSTIR_ERROR(ceilDiv(IrBuilder::create<Scalar>(8.0), IrBuilder::create<Scalar>(3.0)),
                      {"ceilDiv(8.0, 3.0) needs integer scalars"});
  EXPECT_HOSTIR_ERROR(mod(symbol(), IrBuilder::create<Scalar>(2.5)),
                      {"mod(", "2.5", "needs integer scalars"});
}

TEST_F(ValidationTest, ConstantDivisionByZero) {
  EXPECT_HOSTIR_ERROR(ceilDiv(constant(8), constant(0)), {"ceilDiv(8, 0)", "division by zero"});
  EXPECT_HOSTIR_ERROR(div(constant(8), constant(0)), {"div(8, 0)", "division by zero"});
  EXPECT_HOSTIR_ERROR(mod(constant(8), constant(0)), {"mod(8, 0)", "division by zero"});
}

TEST_F(ValidationTest, UnaryOpsRejectBoolWhereTorchDoes) {
  TensorView* tv0 = makeContigTensor(1, DataType::Bool);
  EXPECT_HOSTIR_ERROR(neg(tv0), {"neg(" + str(tv0) + "): a bool tensor is not supported",
                                 "cast it to a numeric dtype"});
  EXPECT_HOSTIR_ERROR(abs(tv0), {"abs(" + str(tv0) + ")", "bool"});
  EXPECT_HOSTIR_ERROR(relu(tv0), {"relu(" + str(tv0) + ")", "bool"});
}

TEST_F(ValidationTest, NullOperands) {
  EXPECT_HOSTIR_ERROR(neg(nullptr), {"neg: input is null"});
  EXPECT_HOSTIR_ERROR(set(nullptr), {"set: input is null"});
  EXPECT_HOSTIR_ERROR(add(static_cast<Val*>(nullptr), static_cast<Val*>(constant(1))),
                      {"add: an operand is null"});
  EXPECT_HOSTIR_ERROR(matmul(nullptr, makeContigTensor(2)), {"matmul: an input is null"});
}

// --- reductions and broadcast -----------------------------------------

TEST_F(ValidationTest, ReductionAxisOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(sum(tv0, {2}), {"sum: axis 2 is out of range for " + str(tv0) +
                                      " of rank 2; valid axes are [-2, 2)"});
  EXPECT_HOSTIR_ERROR(max(tv0, {-3}), {"max: axis -3 is out of range", str(tv0), "[-2, 2)"});
  EXPECT_HOSTIR_ERROR(min(tv0, {0, 7}, true), {"min: axis 7 is out of range"});
}

TEST_F(ValidationTest, ReductionDuplicateAxis) {
  TensorView* tv0 = makeContigTensor(3);
  EXPECT_HOSTIR_ERROR(sum(tv0, {1, 1}), {"sum(" + str(tv0) + "): axis 1 is listed twice"});
  EXPECT_HOSTIR_ERROR(sum(tv0, {2, -1}), {"sum(" + str(tv0) + "): axis -1 is listed twice"});
}

TEST_F(ValidationTest, ReductionEmptyAxes) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(sum(tv0, {}), {"sum(" + str(tv0) + "): give at least one axis to reduce"});
  EXPECT_HOSTIR_ERROR(max(tv0, {}), {"max(" + str(tv0) + ")", "at least one axis"});
}

TEST_F(ValidationTest, ReductionOfAlreadyReducedAxisIsOutOfRange) {
  TensorView* tv1 = sum(makeContigTensor(2), {0});  // shape rank 1
  EXPECT_HOSTIR_ERROR(sum(tv1, {1}), {"axis 1 is out of range", str(tv1), "of rank 1"});
}

TEST_F(ValidationTest, BroadcastFlagsWrongCount) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(broadcast(tv0, {true, false}),
                      {"broadcast(" + str(tv0) +
                       "): 1 entries of is_broadcast_dim are false but the input has rank 2; "
                       "exactly one false entry per input axis is valid"});
  EXPECT_HOSTIR_ERROR(broadcast(tv0, {false, false, false}), {"3 entries", "rank 2"});
}

// --- matmul and linear ---------------------------------------------------

TEST_F(ValidationTest, MatmulInnerSizeMismatch) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({4, 5});
  EXPECT_HOSTIR_ERROR(matmul(a, b),
                      {"matmul(" + str(a) + ", " + str(b) +
                           "): inner sizes differ: " + str(a->axis(1)) + " vs " + str(b->axis(0)),
                       "A's last axis must match B's second-to-last axis"});
}

TEST_F(ValidationTest, MatmulInnerSizeMismatchWithVector) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({4});
  EXPECT_HOSTIR_ERROR(matmul(a, b), {"inner sizes differ", "B's only axis"});
}

TEST_F(ValidationTest, MatmulDtypeMismatch) {
  TensorView* a = makeContigTensor(2, DataType::Float);
  TensorView* b = makeContigTensor(2, DataType::Half);
  EXPECT_HOSTIR_ERROR(matmul(a, b), {"matmul(" + str(a) + ", " + str(b) + ")",
                                     "operands must have the same dtype", "cast one of them"});
}

TEST_F(ValidationTest, MatmulBatchMismatch) {
  TensorView* a = makeConcreteTensor({3, 2, 4});
  TensorView* b = makeConcreteTensor({5, 4, 6});
  EXPECT_HOSTIR_ERROR(matmul(a, b), {"batch axes", str(a->axis(0)), str(b->axis(0)), "differ"});
}

TEST_F(ValidationTest, MatmulOfRankZero) {
  TensorView* a = makeConcreteTensor({});
  TensorView* b = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(matmul(a, b), {"both operands need rank >= 1"});
}

TEST_F(ValidationTest, LinearWeightRank) {
  TensorView* in = makeContigTensor(2);
  TensorView* weight = makeContigTensor(3);
  EXPECT_HOSTIR_ERROR(linear(in, weight), {"linear(" + str(in) + ", " + str(weight) +
                                           "): the weight must be [N, K] or [K], got rank 3"});
}

TEST_F(ValidationTest, LinearInnerSizeMismatch) {
  TensorView* in = makeConcreteTensor({8, 16});
  TensorView* weight = makeConcreteTensor({4, 15});
  EXPECT_HOSTIR_ERROR(linear(in, weight),
                      {"inner sizes differ", str(in->axis(1)), str(weight->axis(1)),
                       "the input's last axis must match the weight's last axis"});
}

TEST_F(ValidationTest, LinearBiasMismatch) {
  TensorView* in = makeConcreteTensor({8, 16});
  TensorView* weight = makeConcreteTensor({4, 16});
  TensorView* bias = makeConcreteTensor({5});
  EXPECT_HOSTIR_ERROR(
      linear(in, weight, bias),
      {"linear(" + str(in) + ", " + str(weight) + ", " + str(bias) + ")",
       "bias " + str(bias->axis(0)) + " does not match the weight's " + str(weight->axis(0))});
}

TEST_F(ValidationTest, LinearBiasRank) {
  TensorView* in = makeContigTensor(2);
  TensorView* weight = makeContigTensor(2);
  TensorView* bias = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(linear(in, weight, bias), {"the bias must be [N] (or 0-D)"});
  // A 1-D weight gives a 1-D output: only a 0-D bias fits.
  TensorView* w1 = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(linear(in, w1, makeContigTensor(1)), {"the bias must be [N]"});
}

TEST_F(ValidationTest, LinearDtypeMismatch) {
  TensorView* in = makeContigTensor(2, DataType::BFloat16);
  TensorView* weight = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(linear(in, weight), {"input, weight and bias must have the same dtype"});
  TensorView* w = makeContigTensor(2, DataType::BFloat16);
  EXPECT_HOSTIR_ERROR(linear(in, w, makeContigTensor(1)), {"same dtype"});
}

TEST_F(ValidationTest, LinearRankZeroInput) {
  EXPECT_HOSTIR_ERROR(linear(makeConcreteTensor({}), makeContigTensor(2)),
                      {"the input needs rank >= 1"});
}

// --- select, slice, permute, reshape -------------------------------------

TEST_F(ValidationTest, SelectIndexOutOfRange) {
  TensorView* tv0 = makeConcreteTensor({4, 6});
  EXPECT_HOSTIR_ERROR(select(tv0, 0, 4),
                      {"select(" + str(tv0) + ", dim=0): index 4 is out of range; valid: [0, 4)"});
  EXPECT_HOSTIR_ERROR(select(tv0, 1, -1), {"index -1 is out of range", "[0, 6)"});
}

TEST_F(ValidationTest, SelectNegativeIndexOnSymbolicAxis) {
  TensorView* tv0 = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(select(tv0, 0, -2),
                      {"index -2 is out of range", "[0, " + str(tv0->axis(0)->extent()) + ")"});
}

TEST_F(ValidationTest, SelectDimOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(select(tv0, 2, 0),
                      {"select: axis 2 is out of range for " + str(tv0), "[-2, 2)"});
}

TEST_F(ValidationTest, SelectNonIntegerIndex) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(select(tv0, 0, IrBuilder::create<Scalar>(1.0)),
                      {"select(" + str(tv0) + "): the index must be an integer scalar, got 1.0"});
  EXPECT_HOSTIR_ERROR(select(tv0, 0, static_cast<Val*>(makeContigTensor(1, DataType::Int64))),
                      {"the index must be an integer scalar"});
}

TEST_F(ValidationTest, SliceBounds) {
  TensorView* tv0 = makeConcreteTensor({10});
  EXPECT_HOSTIR_ERROR(slice(tv0, 0, 2, 11), {"slice(" + str(tv0) +
                                             ", dim=0, start=2, stop=11): need 0 <= start <= "
                                             "stop <= 10"});
  EXPECT_HOSTIR_ERROR(slice(tv0, 0, 5, 3), {"start=5, stop=3", "need 0 <= start <= stop"});
  EXPECT_HOSTIR_ERROR(slice(tv0, 0, -1, 3), {"start=-1", "need 0 <= start"});
  EXPECT_HOSTIR_ERROR(slice(tv0, 1, 0, 3), {"slice: axis 1 is out of range", "[-1, 1)"});
}

TEST_F(ValidationTest, SliceSymbolicStopBeyondConstantExtentIsCaughtOnlyWhenKnown) {
  TensorView* tv0 = makeConcreteTensor({10});
  EXPECT_NO_THROW(slice(tv0, 0, constant(2), symbol()));
  TensorView* tv1 = makeContigTensor(1);
  EXPECT_NO_THROW(slice(tv1, 0, 2, 100));
  EXPECT_HOSTIR_ERROR(slice(tv1, 0, 3, 2),
                      {"need 0 <= start <= stop <= " + str(tv1->axis(0)->extent())});
}

TEST_F(ValidationTest, SliceNonIntegerBounds) {
  TensorView* tv0 = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(slice(tv0, 0, constant(0), IrBuilder::create<Scalar>(2.0)),
                      {"bounds must be integer scalars, got 2.0"});
}

TEST_F(ValidationTest, PermuteNotAPermutation) {
  TensorView* tv0 = makeContigTensor(3);
  EXPECT_HOSTIR_ERROR(
      permute(tv0, {0, 0, 1}),
      {"permute(" + str(tv0) + "): dims repeat an axis; give a permutation of 0..2"});
  EXPECT_HOSTIR_ERROR(permute(tv0, {2, -1, 0}), {"dims repeat an axis"});
}

TEST_F(ValidationTest, PermuteWrongLength) {
  TensorView* tv0 = makeContigTensor(3);
  EXPECT_HOSTIR_ERROR(permute(tv0, {1, 0}), {"permute(" + str(tv0) +
                                             "): got 2 dims for rank 3; give a permutation "
                                             "of 0..2"});
}

TEST_F(ValidationTest, PermuteAxisOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(permute(tv0, {0, 2}), {"permute: axis 2 is out of range", str(tv0)});
}

TEST_F(ValidationTest, ReshapeElementCountMismatch) {
  TensorView* tv0 = makeConcreteTensor({2, 3, 4});
  EXPECT_HOSTIR_ERROR(reshape(tv0, {5, 5}),
                      {"reshape(" + str(tv0) + "): 24 elements cannot be viewed as {5, 5}",
                       "same number of elements"});
  EXPECT_HOSTIR_ERROR(reshape(tv0, {-1, 5}), {"24 elements cannot be viewed as {-1, 5}"});
  EXPECT_HOSTIR_ERROR(reshape(tv0, {0, -1}), {"cannot be viewed as {0, -1}"});
}

TEST_F(ValidationTest, ReshapeTwoInferredSizes) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(reshape(tv0, {-1, -1}),
                      {"reshape(" + str(tv0) + "): at most one size may be -1"});
}

TEST_F(ValidationTest, ReshapeNegativeSize) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(reshape(tv0, {-2, 3}), {"reshape(" + str(tv0) + "): invalid size -2"});
}

// --- full ------------------------------------------------------------------

TEST_F(ValidationTest, FullRejectsBadShapeAndFillValue) {
  EXPECT_HOSTIR_ERROR(full({constant(2)}, makeContigTensor(1), DataType::Float),
                      {"full: the fill value must be a scalar"});
  EXPECT_HOSTIR_ERROR(full({IrBuilder::create<Scalar>(2.0)}, constant(0), DataType::Float),
                      {"full: every size must be an integer scalar"});
  EXPECT_HOSTIR_ERROR(full({constant(-3)}, constant(0), DataType::Float),
                      {"full: size -3 is negative"});
}

// --- tensor factories, fusion inputs and guards ------------------------------

TEST(ValidationNoGuardTest, CreatingIrWithoutFusionGuard) {
  ASSERT_EQ(FusionGuard::getCurFusion(), nullptr);
  EXPECT_HOSTIR_ERROR(makeContigTensor(2), {"no current Fusion", "FusionGuard fg(&fusion);"});
  EXPECT_HOSTIR_ERROR(makeConcreteTensor({2}), {"no current Fusion"});
  EXPECT_HOSTIR_ERROR(IrBuilder::create<Scalar>(DataType::Int64),
                      {"no current Fusion: create IR inside `FusionGuard fg(&fusion);`"});
  EXPECT_HOSTIR_ERROR(zeros({}), {"zeros: no current Fusion"});
  EXPECT_HOSTIR_ERROR(ones({}), {"ones: no current Fusion"});
}

TEST(ValidationNoGuardTest, GuardScopeEnds) {
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    EXPECT_NO_THROW(makeContigTensor(1));
  }
  EXPECT_HOSTIR_ERROR(makeContigTensor(1), {"no current Fusion"});
}

TEST_F(ValidationTest, InvalidConcreteSize) {
  EXPECT_HOSTIR_ERROR(makeConcreteTensor({4, -2}),
                      {"tensor size -2 is invalid", "use -1 for symbolic"});
}

TEST_F(ValidationTest, ComputedTensorAsInput) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  TensorView* tv1 = neg(tv0);
  EXPECT_HOSTIR_ERROR(fusion_.addInput(tv1),
                      {str(tv1) + " is computed by UnaryOp; only a tensor without a "
                                  "definition can be an input"});
  EXPECT_FALSE(tv1->isFusionInput());
}

TEST_F(ValidationTest, InputAddedTwice) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  EXPECT_HOSTIR_ERROR(fusion_.addInput(tv0), {str(tv0) + " is already an input"});
  EXPECT_EQ(fusion_.inputs().size(), 1u);
}

TEST_F(ValidationTest, InputOrOutputOfAnotherFusion) {
  TensorView* tv0 = makeContigTensor(1);
  Fusion other;
  EXPECT_HOSTIR_ERROR(other.addInput(tv0),
                      {str(tv0), "belongs to another container and cannot be an input here"});
  EXPECT_HOSTIR_ERROR(other.addOutput(tv0),
                      {str(tv0), "belongs to another container and cannot be an output here"});
}

// --- transforms, parallelization, meshes ------------------------------------

TEST_F(ValidationTest, SplitBroadcastAxis) {
  TensorView* tv0 = makeConcreteTensor({1, 8});
  EXPECT_HOSTIR_ERROR(tv0->split(0, 2), {"split of " + str(tv0) + ": cannot split broadcast axis " +
                                             str(tv0->axis(0)),
                                         "only iteration and reduction axes can be split"});
}

TEST_F(ValidationTest, SplitFactorMustBePositiveInteger) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(tv0->split(0, int64_t{0}),
                      {"split factor of " + str(tv0->axis(0)), "must be positive, got 0"});
  EXPECT_HOSTIR_ERROR(tv0->split(1, -4), {"must be positive, got -4"});
  EXPECT_HOSTIR_ERROR(tv0->split(0, IrBuilder::create<Scalar>(2.0)),
                      {"split factor of " + str(tv0) + " must be an integer scalar, got 2.0"});
  EXPECT_EQ(tv0->nDims(), 2);  // nothing changed
}

TEST_F(ValidationTest, SplitAxisOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(tv0->split(2, 4), {"split of " + str(tv0) +
                                         ": axis 2 is out of range; valid axes are [-2, 2)"});
}

TEST_F(ValidationTest, AxisOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(tv0->axis(5),
                      {"axis of " + str(tv0) + ": axis 5 is out of range", "[-2, 2)"});
  EXPECT_HOSTIR_ERROR(tv0->axis(-3), {"axis -3 is out of range"});
}

TEST_F(ValidationTest, MergeNonAdjacent) {
  TensorView* tv0 = makeContigTensor(3);
  EXPECT_HOSTIR_ERROR(tv0->merge(0, 2), {"merge of " + str(tv0) + ": axes 0 and 2 are not adjacent",
                                         "(outer, outer + 1)"});
  EXPECT_HOSTIR_ERROR(tv0->merge(1, 0), {"axes 1 and 0 are not adjacent"});
  EXPECT_EQ(tv0->nDims(), 3);
}

TEST_F(ValidationTest, MergeOutOfRange) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(tv0->merge(1), {"merge of " + str(tv0) + ": axis 2 is out of range"});
}

TEST_F(ValidationTest, MergeDifferentIterTypes) {
  TensorView* tv1 = sum(makeContigTensor(2), {1});
  EXPECT_HOSTIR_ERROR(
      tv1->merge(0),
      {"merge of " + str(tv1), "cannot merge " + str(tv1->axis(0)) + " with " + str(tv1->axis(1)),
       "iteration, reduction or broadcast axes alike"});
}

TEST_F(ValidationTest, ParallelizeBroadcastAxis) {
  TensorView* tv0 = makeConcreteTensor({1, 4});
  EXPECT_HOSTIR_ERROR(tv0->axis(0)->parallelize(ParallelType::DIDx),
                      {str(tv0->axis(0)) + " is a broadcast axis and cannot be parallelized "
                                           "with deviceIdx.x",
                       "parallelize an iteration axis"});
  EXPECT_NO_THROW(tv0->axis(0)->parallelize(ParallelType::Serial));
}

TEST_F(ValidationTest, ContiguityAndAllocationDomain) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_HOSTIR_ERROR(tv0->domain()->setContiguity({true}),
                      {"contiguity of " + str(tv0->domain()), "needs 2 entries, got 1"});
  EXPECT_HOSTIR_ERROR(tv0->setAllocationDomain({tv0->axis(0)}, true),
                      {"allocation domain of", "must be a permutation of its logical domain"});
  TensorView* tv1 = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(tv0->setAllocationDomain({tv0->axis(0), tv1->axis(0)}, true),
                      {"must be a permutation"});
}

TEST(DeviceMeshValidationTest, DuplicateDevice) {
  EXPECT_HOSTIR_ERROR((void)DeviceMesh(std::vector<int64_t>{0, 1, 1}),
                      {"DeviceMesh {0, 1, 1} lists a device twice", "may appear once"});
}

TEST(DeviceMeshValidationTest, NegativeDevice) {
  EXPECT_HOSTIR_ERROR((void)DeviceMesh(std::vector<int64_t>{-1, 0}),
                      {"DeviceMesh {-1, 0}", "must be non-negative"});
}

TEST(DeviceMeshValidationTest, ShapeMismatch) {
  EXPECT_HOSTIR_ERROR((void)DeviceMesh(std::vector<int64_t>{0, 1, 2}, {2, 2}),
                      {"DeviceMesh {0, 1, 2}: shape {2, 2} holds 4 devices but 3 are listed"});
}

TEST(DeviceMeshValidationTest, TooManyDimensions) {
  EXPECT_HOSTIR_ERROR((void)DeviceMesh(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2}),
                      {"a mesh is 1-D or 2-D, got shape {2, 2, 2}"});
}

TEST(DeviceMeshValidationTest, NoDidyOnOneDMesh) {
  DeviceMesh mesh(std::vector<int64_t>{0, 1});
  EXPECT_HOSTIR_ERROR(mesh.size(ParallelType::DIDy),
                      {"DeviceMesh{0 1} is 1-D", "no DIDy dimension"});
  EXPECT_HOSTIR_ERROR(mesh.size(ParallelType::Stream), {"a mesh has no StreamIdx dimension"});
  EXPECT_HOSTIR_ERROR(mesh.getSlice(5, ParallelType::DIDx), {"device 5 is not in DeviceMesh{0 1}"});
}

TEST_F(ValidationTest, TensorWithoutMesh) {
  TensorView* tv0 = makeContigTensor(1);
  EXPECT_FALSE(tv0->hasDeviceMesh());
  EXPECT_HOSTIR_ERROR(tv0->getDeviceMesh(), {str(tv0) + " has no device mesh; call setDeviceMesh"});
}

TEST_F(ValidationTest, ErrorsAreHostirErrorsDerivedFromRuntimeError) {
  TensorView* tv0 = makeContigTensor(2);
  EXPECT_THROW(sum(tv0, {}), Error);
  EXPECT_THROW(sum(tv0, {}), std::runtime_error);
}

}  // namespace
}  // namespace hostir::test
