#include <gtest/gtest.h>

#include "core_ir/test_utils.h"
#include "hostir/ir/mutation.h"

namespace hostir::test {

using IrMutationTest = IrTest;

TEST_F(IrMutationTest, ReplaceInputRewiresUses) {
  TensorView* a = makeContigConcreteTensor({4});
  TensorView* b = makeContigConcreteTensor({4});
  TensorView* c = makeContigConcreteTensor({4});
  fusion_.addInput(a);
  fusion_.addInput(b);
  fusion_.addInput(c);
  TensorView* out = add(a, b);
  fusion_.addOutput(out);
  Expr* old_expr = out->definition();

  Expr* new_expr = replaceValInExprInputs(old_expr, b, c);

  EXPECT_EQ(out->definition(), new_expr);
  EXPECT_EQ(new_expr->inputs(), (std::vector<Val*>{a, c}));
  EXPECT_EQ(new_expr->attributes(), old_expr->attributes());
  EXPECT_TRUE(b->uses().empty());
  EXPECT_EQ(a->uses(), (std::vector<Expr*>{new_expr}));
  EXPECT_EQ(c->uses(), (std::vector<Expr*>{new_expr}));
  EXPECT_EQ(fusion_.exprs(), (std::vector<Expr*>{new_expr}));
}

TEST_F(IrMutationTest, ReplaceOutputLeavesTheOldOutputUndefined) {
  TensorView* a = makeContigConcreteTensor({4});
  fusion_.addInput(a);
  TensorView* out = relu(a);
  TensorView* other = makeContigConcreteTensor({4});
  Expr* old_expr = out->definition();

  Expr* new_expr = replaceValInExprOutputs(old_expr, out, other);

  EXPECT_EQ(out->definition(), nullptr);
  EXPECT_EQ(other->definition(), new_expr);
  EXPECT_EQ(a->uses(), (std::vector<Expr*>{new_expr}));
}

}  // namespace hostir::test
