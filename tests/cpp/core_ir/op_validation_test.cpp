// A fusion op checks its operands when the node is constructed, not only in
// its builder: a node a pass makes through IrBuilder or Expr::newObject with
// bad operands raises the same hostir::Error a builder would (the cause,
// the operands in IR notation, what is valid), followed by the node being
// made.

#include "hostir/ir/cloner.h"
#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using OpValidationTest = IrTest;

std::string str(const Val* val) {
  return val->toInlineString();
}

template <typename Op>
Expr* makeOp(std::vector<Val*> inputs, Val* output, std::vector<Attribute> attributes = {}) {
  return IrBuilder::create<Op>(std::move(inputs), std::vector<Val*>{output}, std::move(attributes));
}

Attribute opType(BinaryOpType type) {
  return static_cast<int64_t>(type);
}

TEST_F(OpValidationTest, MatmulMadeDirectlyChecksInnerSizes) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({5, 4});
  TensorView* out = makeConcreteTensor({2, 4});
  EXPECT_HOSTIR_ERROR(
      makeOp<MatmulOp>({a, b}, out),
      {"matmul(" + str(a) + ", " + str(b) + "): inner sizes differ: " + str(a->axis(1)) + " vs " +
           str(b->axis(0)),
       "A's last axis must match B's second-to-last axis", "(making " + str(out) + " = matmul("});
}

TEST_F(OpValidationTest, NewObjectWithOperandsThatDoNotBroadcastIsAnError) {
  TensorView* tv0 = makeConcreteTensor({3, 4});
  TensorView* tv1 = add(tv0, tv0);
  TensorView* other = makeConcreteTensor({5, 4});
  TensorView* out = makeConcreteTensor({3, 4});
  Expr* add_op = tv1->definition();
  EXPECT_HOSTIR_ERROR(add_op->newObject(&fusion_, {tv0, other}, {out}, add_op->attributes(), {}),
                      {"add: cannot broadcast " + str(tv0) + " with " + str(other) + ": " +
                           str(tv0->axis(0)) + " and " + str(other->axis(0)) +
                           " differ; sizes must match or one must be a broadcast axis",
                       "(making " + str(out) + " = add("});
  // With operands that do broadcast, the same call makes the node.
  TensorView* row = makeConcreteTensor({1, 4});  // size 1: a broadcast axis
  Expr* ok = add_op->newObject(&fusion_, {tv0, row}, {out}, add_op->attributes(), {});
  EXPECT_EQ(out->definition(), ok);
}

TEST_F(OpValidationTest, AFailedNodeIsNeitherRegisteredNorWired) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({5, 4});
  TensorView* out = makeConcreteTensor({2, 4});
  size_t statements = fusion_.statements().size();
  EXPECT_THROW(makeOp<MatmulOp>({a, b}, out), Error);
  EXPECT_EQ(fusion_.statements().size(), statements);
  EXPECT_TRUE(a->uses().empty());
  EXPECT_EQ(out->definition(), nullptr);
  // A builder checks before it makes anything, the output included.
  EXPECT_THROW(matmul(a, b), Error);
  EXPECT_EQ(fusion_.statements().size(), statements);
}

TEST_F(OpValidationTest, ReductionAxesOfANodeAreNormalizedSortedAndInRange) {
  TensorView* in = makeConcreteTensor({2, 3});
  TensorView* out = makeConcreteTensor({2});
  auto sum_type = static_cast<int64_t>(ReductionOpType::Sum);
  EXPECT_HOSTIR_ERROR(
      makeOp<ReductionOp>({in}, out, {sum_type, std::vector<int64_t>{2}}),
      {"sum(" + str(in) + "): axis 2 is out of range for rank 2; valid: [0, 2)", "(making"});
  EXPECT_HOSTIR_ERROR(makeOp<ReductionOp>({in}, out, {sum_type, std::vector<int64_t>{-1}}),
                      {"axis -1 is out of range for rank 2"});
  EXPECT_HOSTIR_ERROR(
      makeOp<ReductionOp>({in}, out, {sum_type, std::vector<int64_t>{1, 0}}),
      {"sum(" + str(in) + "): reduced axes {1, 0} must be distinct and increasing"});
  EXPECT_HOSTIR_ERROR(makeOp<ReductionOp>({in}, out, {sum_type, std::vector<int64_t>{}}),
                      {"sum(" + str(in) + "): give at least one axis to reduce"});
}

TEST_F(OpValidationTest, UnaryOpMadeDirectlyRejectsBool) {
  TensorView* in = makeContigTensor(1, DataType::Bool);
  TensorView* out = makeContigTensor(1, DataType::Bool);
  EXPECT_HOSTIR_ERROR(
      makeOp<UnaryOp>({in}, out, {static_cast<int64_t>(UnaryOpType::Neg)}),
      {"neg(" + str(in) + "): a bool tensor is not supported; cast it to a numeric dtype first"});
  // A cast of a bool tensor is what the message suggests: valid.
  TensorView* cast = makeContigTensor(1, DataType::Float);
  EXPECT_NO_THROW(makeOp<UnaryOp>({in}, cast, {static_cast<int64_t>(UnaryOpType::Cast)}));
}

TEST_F(OpValidationTest, BinaryOpMadeDirectlyChecksIntegerOnlyOps) {
  TensorView* tv = makeContigTensor(1);
  TensorView* out = makeContigTensor(1);
  EXPECT_HOSTIR_ERROR(makeOp<BinaryOp>({tv, constant(2)}, out, {opType(BinaryOpType::CeilDiv)}),
                      {"ceilDiv is defined on integer scalars, not on tensor " + str(tv)});
  Val* d = IrBuilder::create<Scalar>(DataType::Double);
  Val* s = IrBuilder::create<Scalar>(DataType::Int64);
  EXPECT_HOSTIR_ERROR(makeOp<BinaryOp>({d, constant(2)}, s, {opType(BinaryOpType::Mod)}),
                      {"mod(" + str(d) + ", 2) needs integer scalars"});
}

TEST_F(OpValidationTest, BroadcastFlagsOfANodeMatchTheInput) {
  TensorView* in = makeConcreteTensor({2, 3});
  TensorView* out = makeConcreteTensor({2, 3, 1});
  EXPECT_HOSTIR_ERROR(makeOp<BroadcastOp>({in}, out, {std::vector<int64_t>{0, 1, 1}}),
                      {"broadcast(" + str(in) +
                       "): 1 entries of is_broadcast_dim are false but the input has rank 2; "
                       "exactly one false entry per input axis is valid"});
  EXPECT_HOSTIR_ERROR(makeOp<BroadcastOp>({in}, out, {std::vector<int64_t>{0, 0, 2}}),
                      {"is_broadcast flags {0, 0, 2} must each be 0 or 1"});
}

TEST_F(OpValidationTest, LinearNewObjectChecksTheBias) {
  TensorView* in = makeConcreteTensor({2, 8});
  TensorView* weight = makeConcreteTensor({4, 8});
  TensorView* y = linear(in, weight);
  TensorView* bias = makeConcreteTensor({5});
  TensorView* out = makeConcreteTensor({2, 4});
  EXPECT_HOSTIR_ERROR(
      y->definition()->newObject(&fusion_, {in, weight, bias}, {out}, {}, {}),
      {"linear(" + str(in) + ", " + str(weight) + ", " + str(bias) + "): bias " +
           str(bias->axis(0)) + " does not match the weight's " + str(weight->axis(0)),
       "(making " + str(out) + " = linear("});
  // A scalar where a tensor belongs.
  EXPECT_HOSTIR_ERROR(y->definition()->newObject(&fusion_, {in, constant(3)}, {out}, {}, {}),
                      {"linear: operand 1 must be a tensor, got 3"});
}

TEST_F(OpValidationTest, SelectAndSliceMadeDirectlyCheckDimAndBounds) {
  TensorView* in = makeConcreteTensor({4, 6});
  TensorView* row = makeConcreteTensor({6});
  EXPECT_HOSTIR_ERROR(makeOp<SelectOp>({in, constant(0)}, row, {int64_t{2}}),
                      {"select(" + str(in) + "): dim 2 is out of range for rank 2; valid: [0, 2)"});
  EXPECT_HOSTIR_ERROR(makeOp<SelectOp>({in, constant(4)}, row, {int64_t{0}}),
                      {"select(" + str(in) + ", dim=0): index 4 is out of range; valid: [0, 4)"});
  EXPECT_HOSTIR_ERROR(makeOp<SelectOp>({in, IrBuilder::create<Scalar>(1.0)}, row, {int64_t{0}}),
                      {"the index must be an integer scalar, got 1.0"});
  TensorView* part = makeConcreteTensor({4, 3});
  EXPECT_HOSTIR_ERROR(
      makeOp<SliceOp>({in, constant(4), constant(7)}, part, {int64_t{1}}),
      {"slice(" + str(in) + ", dim=1, start=4, stop=7): need 0 <= start <= stop <= 6"});
}

TEST_F(OpValidationTest, PermuteMadeDirectlyNeedsAPermutation) {
  TensorView* in = makeConcreteTensor({2, 3, 4});
  TensorView* out = makeConcreteTensor({2, 3, 4});
  EXPECT_HOSTIR_ERROR(
      makeOp<PermuteOp>({in}, out, {std::vector<int64_t>{0, 0, 1}}),
      {"permute(" + str(in) + "): dims repeat an axis; give a permutation of 0..2"});
  EXPECT_HOSTIR_ERROR(makeOp<PermuteOp>({in}, out, {std::vector<int64_t>{1, 0}}),
                      {"got 2 dims for rank 3; give a permutation of 0..2"});
  EXPECT_HOSTIR_ERROR(makeOp<PermuteOp>({in}, out, {std::vector<int64_t>{0, 1, -1}}),
                      {"dim -1 is out of range for rank 3"});
}

TEST_F(OpValidationTest, ReshapeMadeDirectlyKeepsTheElementCount) {
  TensorView* in = makeConcreteTensor({2, 3});
  TensorView* out = makeConcreteTensor({5});
  EXPECT_HOSTIR_ERROR(
      makeOp<ReshapeOp>({in}, out),
      {"reshape(" + str(in) + "): 6 elements cannot be viewed as " + str(out) + " of 5 elements",
       "the output must hold the same number of elements"});
  // Symbolic counts cannot be compared here: the run-time checks do that.
  EXPECT_NO_THROW(makeOp<ReshapeOp>({in}, makeContigTensor(1)));
  // Nor can counts past 2^63 (they would wrap to 0 here).
  int64_t big = int64_t{1} << 40;
  EXPECT_NO_THROW(
      makeOp<ReshapeOp>({makeConcreteTensor({big, big})}, makeConcreteTensor({2 * big})));
}

TEST_F(OpValidationTest, FullMadeDirectlyChecksSizes) {
  TensorView* out = makeConcreteTensor({3});
  EXPECT_HOSTIR_ERROR(makeOp<FullOp>({constant(0), constant(-3)}, out),
                      {"full: size -3 is negative"});
  EXPECT_HOSTIR_ERROR(makeOp<FullOp>({constant(0), IrBuilder::create<Scalar>(2.0)}, out),
                      {"full: every size must be an integer scalar"});
  EXPECT_HOSTIR_ERROR(makeOp<FullOp>({constant(0), constant(3), constant(2)}, out),
                      {"must be a tensor with one axis per size operand (2)"});
}

TEST_F(OpValidationTest, AttributeOfTheWrongTypeIsAnInternalError) {
  TensorView* in = makeConcreteTensor({4, 6});
  TensorView* row = makeConcreteTensor({6});
  EXPECT_HOSTIR_ERROR(makeOp<SelectOp>({in, constant(0)}, row, {std::string("0")}),
                      {"hostir internal error", "SelectOp attribute 0 has the wrong type"});
  EXPECT_HOSTIR_ERROR(makeOp<UnaryOp>({in}, makeConcreteTensor({4, 6}), {int64_t{99}}),
                      {"hostir internal error", "UnaryOp attribute 0 is not an op type: 99"});
}

TEST_F(OpValidationTest, CloningAValidFusionRevalidatesEveryNode) {
  TensorView* tv0 = makeConcreteTensor({2, 3});
  fusion_.addInput(tv0);
  TensorView* tv1 = sum(relu(tv0), {1});
  TensorView* tv2 = matmul(tv0, permute(tv0, {1, 0}));
  fusion_.addOutput(tv1);
  fusion_.addOutput(tv2);
  Fusion copy;
  copyFusion(fusion_, copy);
  EXPECT_EQ(copy.toString(), fusion_.toString());
}

}  // namespace
}  // namespace hostir::test
