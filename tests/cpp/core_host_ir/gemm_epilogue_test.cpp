// GemmEpilogue: which segments are a linear and the ops a GEMM engine runs as
// post-ops on its tiles (GELU, then one add), and why the others are not.

#include <gtest/gtest.h>

#include <string>

#include "hostir/host_ir/gemm_epilogue.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {
namespace {

class GemmEpilogueTest : public ::testing::Test {
 protected:
  // x [M, K], w [N, K]: the linear's operands as segment inputs.
  TensorView* linearOfInputs(DataType dtype = DataType::Float) {
    TensorView* x = makeContigTensor(2, dtype);
    TensorView* w = makeContigTensor(2, dtype);
    fusion_.addInput(x);
    fusion_.addInput(w);
    return linear(x, w);
  }

  TensorView* input(int64_t rank) {
    TensorView* tv = makeContigTensor(rank);
    fusion_.addInput(tv);
    return tv;
  }

  std::string whyNot() {
    std::string why;
    EXPECT_FALSE(matchGemmEpilogue(fusion_, &why).has_value()) << fusion_.toString();
    return why;
  }

  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

TEST_F(GemmEpilogueTest, LinearThenGelu) {
  TensorView* out = gelu(linearOfInputs());
  fusion_.addOutput(out);
  std::optional<GemmEpilogue> match = matchGemmEpilogue(fusion_);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->activation, UnaryOpType::Gelu);
  EXPECT_EQ(match->residual, nullptr);
  EXPECT_EQ(match->out, out);
  EXPECT_EQ(describe(*match), "linear + gelu");
}

TEST_F(GemmEpilogueTest, LinearThenRelu) {
  fusion_.addOutput(relu(linearOfInputs()));
  std::optional<GemmEpilogue> match = matchGemmEpilogue(fusion_);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->activation, UnaryOpType::Relu);
  EXPECT_EQ(describe(*match), "linear + relu");
}

TEST_F(GemmEpilogueTest, TwoActivationsAreNotPostOps) {
  fusion_.addOutput(gelu(relu(linearOfInputs())));
  EXPECT_NE(whyNot().find("is not a GEMM post-op"), std::string::npos);
}

// A bias of the linear itself, GELU, then an add of a tensor of the result's
// shape (either operand order): all three are post-ops.
TEST_F(GemmEpilogueTest, BiasGeluAndResidual) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* b = input(1);
  TensorView* residual = input(2);
  fusion_.addOutput(add(residual, gelu(linear(x, w, b))));
  std::optional<GemmEpilogue> match = matchGemmEpilogue(fusion_);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->activation, UnaryOpType::Gelu);
  EXPECT_EQ(match->residual, residual);
  EXPECT_EQ(describe(*match).rfind("linear + bias + gelu + add T", 0), 0u) << describe(*match);
}

TEST_F(GemmEpilogueTest, ResidualAloneAndARowVector) {
  TensorView* row = input(1);
  fusion_.addOutput(add(linearOfInputs(), row));
  std::optional<GemmEpilogue> match = matchGemmEpilogue(fusion_);
  ASSERT_TRUE(match.has_value());
  EXPECT_FALSE(match->activation.has_value());
  EXPECT_EQ(match->residual, row);
}

// A row vector added before the activation is the GEMM's bias when the
// linear has none; with a bias of its own, the add is no post-op there.
TEST_F(GemmEpilogueTest, ARowAddedBeforeTheActivationIsTheBias) {
  TensorView* h = linearOfInputs();
  TensorView* b = input(1);
  fusion_.addOutput(gelu(add(h, b)));
  std::optional<GemmEpilogue> match = matchGemmEpilogue(fusion_);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->bias, b);
  EXPECT_EQ(match->residual, nullptr);
  EXPECT_EQ(describe(*match).rfind("linear + bias T", 0), 0u) << describe(*match);
}

TEST_F(GemmEpilogueTest, ASecondBiasIsNotAPostOp) {
  TensorView* x = input(2);
  TensorView* w = input(2);
  TensorView* b = input(1);
  TensorView* second = input(1);
  fusion_.addOutput(relu(add(linear(x, w, b), second)));
  EXPECT_NE(whyNot().find("is not a GEMM post-op"), std::string::npos);
}

TEST_F(GemmEpilogueTest, ALinearAloneHasNoEpilogue) {
  fusion_.addOutput(linearOfInputs());
  EXPECT_NE(whyNot().find("no epilogue"), std::string::npos);
}

TEST_F(GemmEpilogueTest, AnAddBeforeTheGeluIsNotAPostOpOrder) {
  TensorView* residual = input(2);
  fusion_.addOutput(gelu(add(linearOfInputs(), residual)));
  EXPECT_NE(whyNot().find("is not a GEMM post-op"), std::string::npos);
}

TEST_F(GemmEpilogueTest, OtherOpsAreNotPostOps) {
  fusion_.addOutput(exp(linearOfInputs()));
  EXPECT_NE(whyNot().find("exp"), std::string::npos);
}

TEST_F(GemmEpilogueTest, AnIntermediateTheSegmentAlsoOutputs) {
  TensorView* h = linearOfInputs();
  fusion_.addOutput(h);
  fusion_.addOutput(gelu(h));
  EXPECT_NE(whyNot().find("one result"), std::string::npos);
}

TEST_F(GemmEpilogueTest, AnIntermediateReadTwice) {
  TensorView* h = linearOfInputs();
  fusion_.addOutput(add(gelu(h), h));
  EXPECT_NE(whyNot().find("is read outside the GEMM's epilogue"), std::string::npos);
}

TEST_F(GemmEpilogueTest, OnlyFloat) {
  fusion_.addOutput(gelu(linearOfInputs(DataType::Double)));
  EXPECT_NE(whyNot().find("not float"), std::string::npos);
}

TEST_F(GemmEpilogueTest, ASegmentNotStartingWithALinear) {
  fusion_.addOutput(gelu(input(2)));
  EXPECT_NE(whyNot().find("does not start with a linear"), std::string::npos);
}

}  // namespace
}  // namespace hostir
