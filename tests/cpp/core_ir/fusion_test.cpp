// Fusion container: guards, inputs/outputs, naming, topological exprs(),
// use/definition wiring, Expr::sameAs.

#include <unordered_set>

#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using FusionTest = IrTest;

std::vector<std::string> opNames(const std::vector<Expr*>& exprs) {
  std::vector<std::string> names;
  for (Expr* e : exprs) {
    names.push_back(e->displayName());
  }
  return names;
}

// Every input of every expr is an input of the fusion or defined earlier.
void expectTopological(const Fusion& fusion) {
  std::unordered_set<const Val*> available(fusion.inputs().begin(), fusion.inputs().end());
  for (Expr* e : fusion.exprs()) {
    for (Val* in : e->inputs()) {
      bool ok = available.count(in) || in->definition() == nullptr;
      EXPECT_TRUE(ok) << in->toInlineString() << " is used before its definition by\n"
                      << e->toString();
    }
    for (Val* out : e->outputs()) {
      available.insert(out);
    }
  }
}

TEST(FusionGuardTest, GuardsNestAndRestore) {
  EXPECT_EQ(FusionGuard::getCurFusion(), nullptr);
  Fusion a;
  Fusion b;
  {
    FusionGuard ga(&a);
    EXPECT_EQ(FusionGuard::getCurFusion(), &a);
    {
      FusionGuard gb(&b);
      EXPECT_EQ(FusionGuard::getCurFusion(), &b);
      EXPECT_EQ(makeContigTensor(1)->container(), &b);
    }
    EXPECT_EQ(FusionGuard::getCurFusion(), &a);
    EXPECT_EQ(makeContigTensor(1)->container(), &a);
  }
  EXPECT_EQ(FusionGuard::getCurFusion(), nullptr);
}

TEST_F(FusionTest, OpsBuildInTheOperandsFusion) {
  TensorView* tv0 = makeContigTensor(1);
  Fusion other;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(&other);
    tv1 = neg(tv0);  // built next to its operand, not in the current fusion
  }
  EXPECT_EQ(tv1->container(), &fusion_);
  EXPECT_TRUE(other.statements().empty());
}

TEST_F(FusionTest, InputsAndOutputs) {
  TensorView* tv0 = makeContigTensor(2);
  Scalar* s = symbol();
  fusion_.addInput(tv0);
  fusion_.addInput(s);
  TensorView* tv1 = mul(tv0, s);
  fusion_.addOutput(tv1);
  EXPECT_EQ(fusion_.inputs(), std::vector<Val*>({tv0, s}));
  EXPECT_EQ(fusion_.outputs(), std::vector<Val*>({tv1}));
  EXPECT_TRUE(tv0->isFusionInput());
  EXPECT_TRUE(s->isFusionInput());
  EXPECT_FALSE(tv1->isFusionInput());
  EXPECT_TRUE(tv1->isFusionOutput());
  EXPECT_FALSE(tv0->isFusionOutput());
  EXPECT_EQ(tv0->getMemoryType(), MemoryType::Global);
  EXPECT_EQ(tv1->getMemoryType(), MemoryType::Global);
}

TEST_F(FusionTest, InputCanAlsoBeAnOutput) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  fusion_.addOutput(tv0);
  EXPECT_TRUE(tv0->isFusionInput());
  EXPECT_TRUE(tv0->isFusionOutput());
  EXPECT_TRUE(fusion_.exprs().empty());
}

TEST_F(FusionTest, NamesArePerKind) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = neg(tv0);
  TensorView* tv2 = add(tv0, tv1);
  EXPECT_EQ(tv0->name(), 0);
  EXPECT_EQ(tv1->name(), 1);
  EXPECT_EQ(tv2->name(), 2);
  EXPECT_EQ(tv0->axis(0)->name(), 0);
  EXPECT_EQ(tv0->axis(1)->name(), 1);
  EXPECT_EQ(tv1->axis(0)->name(), 2);
  EXPECT_EQ(tv0->axis(0)->extent()->name(), 0);
  EXPECT_EQ(tv0->axis(1)->extent()->name(), 1);
  EXPECT_EQ(tv1->definition()->name(), 0);
  EXPECT_EQ(tv2->definition()->name(), 1);
}

TEST_F(FusionTest, StatementsInCreationOrder) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  const auto& statements = fusion_.statements();
  ASSERT_FALSE(statements.empty());
  EXPECT_EQ(statements.back().get(), tv1->definition());
  auto position = [&](const Statement* s) {
    for (size_t i = 0; i < statements.size(); ++i) {
      if (statements[i].get() == s) {
        return static_cast<int64_t>(i);
      }
    }
    return int64_t{-1};
  };
  EXPECT_LT(position(tv0->axis(0)->extent()), position(tv0->axis(0)));
  EXPECT_LT(position(tv0->axis(0)), position(tv0->domain()));
  EXPECT_LT(position(tv0->domain()), position(tv0));
  EXPECT_LT(position(tv0), position(tv1));
  EXPECT_LT(position(tv1), position(tv1->definition()));
  for (const auto& s : statements) {
    EXPECT_EQ(s->container(), &fusion_);
  }
}

TEST_F(FusionTest, ExprsOfADiamondInTopologicalOrder) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  TensorView* tv1 = neg(tv0);
  TensorView* tv2 = exp(tv0);
  TensorView* tv3 = add(tv1, tv2);
  fusion_.addOutput(tv3);
  std::vector<Expr*> exprs = fusion_.exprs();
  ASSERT_EQ(exprs.size(), 3u);
  EXPECT_EQ(exprs[0], tv1->definition());
  EXPECT_EQ(exprs[1], tv2->definition());
  EXPECT_EQ(exprs[2], tv3->definition());
  expectTopological(fusion_);
}

TEST_F(FusionTest, ExprsAreDeterministic) {
  auto build = [](Fusion& fusion) {
    FusionGuard fg(&fusion);
    TensorView* tv0 = makeContigTensor(2);
    fusion.addInput(tv0);
    TensorView* tv1 = makeContigTensor(2);
    fusion.addInput(tv1);
    TensorView* a = relu(tv0);
    TensorView* b = sigmoid(tv1);
    TensorView* c = mul(a, b);
    TensorView* d = sub(c, a);
    TensorView* e = maximum(d, b);
    fusion.addOutput(sum(e, {0}));
    fusion.addOutput(c);
  };
  Fusion f1;
  Fusion f2;
  build(f1);
  build(f2);
  EXPECT_EQ(opNames(f1.exprs()), opNames(f2.exprs()));
  // Same order, expr for expr (printed with their operands), in both
  // fusions and on a second call.
  auto printed = [](const std::vector<Expr*>& exprs) {
    std::vector<std::string> out;
    for (const Expr* expr : exprs) {
      out.push_back(expr->toString());
    }
    return out;
  };
  EXPECT_EQ(printed(f1.exprs()), printed(f2.exprs()));
  const std::vector<Expr*> first_call = f1.exprs();
  EXPECT_EQ(f1.exprs(), first_call);
  EXPECT_EQ(f1.toString(), f2.toString());
  EXPECT_EQ(opNames(f1.exprs()),
            std::vector<std::string>({"relu", "sigmoid", "mul", "sub", "maximum", "sum"}));
  expectTopological(f1);
}

TEST_F(FusionTest, ExprsListSharedProducersOnce) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  TensorView* tv1 = neg(tv0);
  fusion_.addOutput(abs(tv1));
  fusion_.addOutput(exp(tv1));
  fusion_.addOutput(tv1);
  EXPECT_EQ(opNames(fusion_.exprs()), std::vector<std::string>({"neg", "abs", "exp"}));
}

TEST_F(FusionTest, ExprsSkipDeadCode) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  TensorView* tv1 = neg(tv0);
  relu(tv1);  // unused
  fusion_.addOutput(tv1);
  EXPECT_EQ(opNames(fusion_.exprs()), std::vector<std::string>({"neg"}));
}

TEST_F(FusionTest, ExprsStopAtInputs) {
  Fusion producer;
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  fusion_.addInput(tv0);
  fusion_.addOutput(exp(tv1));
  EXPECT_EQ(opNames(fusion_.exprs()), std::vector<std::string>({"neg", "exp"}));
}

TEST_F(FusionTest, ExprsOfALongChain) {
  TensorView* tv = makeContigTensor(1);
  fusion_.addInput(tv);
  for (int i = 0; i < 5000; ++i) {
    tv = (i % 2 == 0) ? neg(tv) : add(tv, 1.0);
  }
  fusion_.addOutput(tv);
  std::vector<Expr*> exprs = fusion_.exprs();
  ASSERT_EQ(exprs.size(), 5000u);
  EXPECT_EQ(exprs.front()->input(0), fusion_.inputs()[0]);
  EXPECT_EQ(exprs.back(), tv->definition());
  expectTopological(fusion_);
}

TEST_F(FusionTest, ExprsIncludeScalarOperandArithmetic) {
  TensorView* tv0 = makeContigTensor(1);
  fusion_.addInput(tv0);
  Scalar* s = symbol();
  fusion_.addInput(s);
  TensorView* tv1 = mul(tv0, mul(s, constant(2)));
  fusion_.addOutput(tv1);
  std::vector<Expr*> exprs = fusion_.exprs();
  ASSERT_EQ(exprs.size(), 2u);
  EXPECT_EQ(exprs[0]->output(0)->vtype(), ValType::Scalar);
  EXPECT_EQ(exprs[1], tv1->definition());
}

TEST_F(FusionTest, UsesAndDefinitions) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  TensorView* tv2 = exp(tv0);
  EXPECT_EQ(tv0->definition(), nullptr);
  EXPECT_EQ(tv0->uses(), std::vector<Expr*>({tv1->definition(), tv2->definition()}));
  EXPECT_TRUE(tv1->uses().empty());
  EXPECT_EQ(tv1->definition()->outputs(), std::vector<Val*>({tv1}));
  tv0->removeUse(tv1->definition());
  EXPECT_EQ(tv0->uses(), std::vector<Expr*>({tv2->definition()}));
  tv0->addUse(tv2->definition());  // no duplicates
  EXPECT_EQ(tv0->uses().size(), 1u);
}

TEST_F(FusionTest, ExprSameAs) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2);
  EXPECT_TRUE(neg(tv0)->definition()->sameAs(neg(tv0)->definition()));
  EXPECT_FALSE(neg(tv0)->definition()->sameAs(abs(tv0)->definition()));  // attribute differs
  EXPECT_FALSE(neg(tv0)->definition()->sameAs(neg(tv1)->definition()));  // operand differs
  EXPECT_FALSE(sum(tv0, {0})->definition()->sameAs(sum(tv0, {1})->definition()));
  EXPECT_TRUE(sum(tv0, {1})->definition()->sameAs(sum(tv0, {-1})->definition()));
  EXPECT_FALSE(add(tv0, tv1)->definition()->sameAs(add(tv1, tv0)->definition()));
  EXPECT_FALSE(set(tv0)->definition()->sameAs(neg(tv0)->definition()));
  EXPECT_FALSE(set(tv0)->definition()->sameAs(nullptr));
  Expr* e = relu(tv0)->definition();
  EXPECT_TRUE(e->sameAs(e));
}

TEST_F(FusionTest, TensorSameAsIsStructural) {
  TensorView* tv0 = makeContigTensor(2);
  TensorView* tv1 = makeContigTensor(2);
  EXPECT_FALSE(tv0->sameAs(tv1));           // different symbols
  EXPECT_TRUE(neg(tv0)->sameAs(exp(tv0)));  // same domain, dtype and mesh
  EXPECT_FALSE(neg(tv0)->sameAs(sum(tv0, {1})));
  EXPECT_TRUE(makeConcreteTensor({2, 3})->sameAs(makeConcreteTensor({2, 3})));
  EXPECT_FALSE(makeConcreteTensor({2, 3})->sameAs(makeConcreteTensor({3, 2})));
}

TEST_F(FusionTest, ExprOperandAccessorsAreChecked) {
  TensorView* tv1 = neg(makeContigTensor(1));
  Expr* e = tv1->definition();
  EXPECT_HOSTIR_ERROR(e->input(1), {"hostir internal error", "UnaryOp has no input 1"});
  EXPECT_HOSTIR_ERROR(e->output(3), {"UnaryOp has no output 3"});
  EXPECT_HOSTIR_ERROR(e->attributeVal(0), {"UnaryOp has no attribute val 0"});
  EXPECT_HOSTIR_ERROR(e->attribute<int64_t>(4), {"UnaryOp has no attribute 4"});
  EXPECT_EQ(e->attribute<int64_t>(0), static_cast<int64_t>(UnaryOpType::Neg));
}

TEST_F(FusionTest, ExprOperandsMustShareTheContainer) {
  TensorView* tv0 = makeContigTensor(1);
  Fusion other;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(&other);
    tv1 = makeContigTensor(1);
  }
  EXPECT_HOSTIR_ERROR(
      (IrBuilder::create<LoadStoreOp>(std::vector<Val*>{tv1}, std::vector<Val*>{tv0},
                                      std::vector<Attribute>{})),
      {"hostir internal error", "is owned by another container"});
}

TEST_F(FusionTest, NewObjectBuildsTheSameKind) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  TensorView* tv2 = set(tv0);
  Expr* copy = tv1->definition()->newObject(&fusion_, {tv0}, {tv2}, {int64_t{0}}, {});
  EXPECT_TRUE(copy->isA<UnaryOp>());
  EXPECT_EQ(copy->as<UnaryOp>()->type(), UnaryOpType::Neg);
  EXPECT_EQ(tv2->definition(), copy);
  // A wrong number of operands is caught as an internal error.
  EXPECT_HOSTIR_ERROR(tv1->definition()->newObject(&fusion_, {tv0, tv0}, {tv2}, {int64_t{0}}, {}),
                      {"hostir internal error", "UnaryOp built with the wrong number of operands"});
}

TEST_F(FusionTest, AttributeToString) {
  EXPECT_EQ(toString(Attribute(int64_t{3})), "3");
  EXPECT_EQ(toString(Attribute(true)), "true");
  EXPECT_EQ(toString(Attribute(std::string("abc"))), "abc");
  EXPECT_EQ(toString(Attribute(std::vector<int64_t>{1, 2})), "{1, 2}");
  EXPECT_EQ(toString(Attribute(std::vector<int64_t>{})), "{}");
}

}  // namespace
}  // namespace hostir::test
