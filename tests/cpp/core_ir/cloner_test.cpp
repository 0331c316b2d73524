// IrCloner and copyFusion: whole-fusion copies print identically, subgraph
// copies leave definition-free boundary tensors.

#include "hostir/ir/cloner.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

// A fusion with symbolic extents, a scalar input, a reduction, a broadcast,
// a split stream axis, a mesh and two outputs.
struct Built {
  TensorView* tv0;
  Scalar* scale;
  TensorView* tv3;
  TensorView* tv5;
};

Built buildFusion(Fusion& fusion) {
  FusionGuard fg(&fusion);
  TensorView* tv0 = makeContigTensor(2);
  tv0->setDeviceMesh(DeviceMesh::createForNumDevices(2));
  fusion.addInput(tv0);
  Scalar* scale = IrBuilder::create<Scalar>(DataType::Double);
  fusion.addInput(scale);
  TensorView* tv1 = mul(tv0, scale);
  TensorView* tv2 = sum(tv1, {1});
  TensorView* tv3 = broadcast(tv2, {false, true});
  TensorView* tv4 = add(tv3, tv0);
  TensorView* tv5 = castOp(DataType::Half, tv4);
  tv5->split(0, 4, /*inner_split=*/false);
  tv5->axis(0)->parallelize(ParallelType::Stream);
  tv2->split(1, 8);
  fusion.addOutput(tv5);
  fusion.addOutput(tv3);
  return {tv0, scale, tv3, tv5};
}

TEST(ClonerTest, CopyFusionPrintsIdentically) {
  Fusion original;
  buildFusion(original);
  Fusion copy;
  copyFusion(original, copy);
  EXPECT_EQ(copy.toString(), original.toString());
  EXPECT_EQ(copy.statements().size(), original.statements().size());
  ASSERT_EQ(copy.inputs().size(), 2u);
  ASSERT_EQ(copy.outputs().size(), 2u);
  ASSERT_EQ(copy.exprs().size(), original.exprs().size());
}

TEST(ClonerTest, CopyKeepsEveryStatementName) {
  Fusion original;
  buildFusion(original);
  Fusion copy;
  IrCloner cloner = copyFusion(original, copy);
  ASSERT_EQ(copy.statements().size(), original.statements().size());
  for (const auto& statement : original.statements()) {
    const Statement* clone = nullptr;
    if (statement->isVal()) {
      clone = cloner.clone(static_cast<const Val*>(statement.get()));
    } else {
      clone = cloner.clone(static_cast<const Expr*>(statement.get()));
    }
    EXPECT_EQ(clone->container(), &copy);
    EXPECT_EQ(clone->name(), statement->name()) << statement->toString();
    EXPECT_EQ(clone->toString(), statement->toString());
  }
}

TEST(ClonerTest, CopyContinuesNumberingAfterTheOriginal) {
  Fusion original;
  buildFusion(original);
  Fusion copy;
  copyFusion(original, copy);
  TensorView* next_original = nullptr;
  TensorView* next_copy = nullptr;
  {
    FusionGuard fg(&original);
    next_original = makeContigTensor(1);
  }
  {
    FusionGuard fg(&copy);
    next_copy = makeContigTensor(1);
  }
  EXPECT_EQ(next_copy->toString(), next_original->toString());
}

TEST(ClonerTest, CopiedOutputsAreSameAs) {
  Fusion original;
  Built built = buildFusion(original);
  Fusion copy;
  IrCloner cloner = copyFusion(original, copy);
  for (size_t i = 0; i < original.outputs().size(); ++i) {
    EXPECT_TRUE(copy.outputs()[i]->sameAs(original.outputs()[i])) << i;
    EXPECT_TRUE(original.outputs()[i]->sameAs(copy.outputs()[i])) << i;
    EXPECT_NE(copy.outputs()[i], original.outputs()[i]);
  }
  std::vector<Expr*> a = original.exprs();
  std::vector<Expr*> b = copy.exprs();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(a[i]->sameAs(b[i])) << a[i]->toString();
  }
  // The cloner maps old to new.
  EXPECT_EQ(cloner.clone(built.tv5), copy.outputs()[0]);
  EXPECT_EQ(cloner.clone(built.tv0), copy.inputs()[0]);
  EXPECT_EQ(cloner.clone(built.scale), copy.inputs()[1]);
  EXPECT_TRUE(cloner.isCloned(built.tv3));
}

TEST(ClonerTest, CopyPreservesDomainsParallelTypesAndMesh) {
  Fusion original;
  Built built = buildFusion(original);
  Fusion copy;
  IrCloner cloner = copyFusion(original, copy);
  auto* tv5 = cloner.clone(built.tv5);
  ASSERT_EQ(tv5->nDims(), 3);
  EXPECT_TRUE(tv5->axis(0)->isStream());
  EXPECT_EQ(tv5->getLogicalDomain().size(), 2u);
  EXPECT_EQ(tv5->dtype(), DataType::Half);
  EXPECT_EQ(tv5->getMemoryType(), MemoryType::Global);
  auto* split = dynamic_cast<Split*>(tv5->axis(0)->definition());
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->container(), &copy);
  EXPECT_EQ(split->in(), tv5->getLogicalDomain()[0]);
  auto* tv0 = cloner.clone(built.tv0);
  ASSERT_TRUE(tv0->hasDeviceMesh());
  EXPECT_EQ(tv0->getDeviceMesh(), DeviceMesh::createForNumDevices(2));
  EXPECT_EQ(tv0->toString(), built.tv0->toString());
}

TEST(ClonerTest, CopyIsIndependentOfTheOriginal) {
  Fusion original;
  Built built = buildFusion(original);
  std::string before = original.toString();
  Fusion copy;
  IrCloner cloner = copyFusion(original, copy);
  auto* tv5 = cloner.clone(built.tv5);
  tv5->axis(1)->parallelize(ParallelType::DIDx);
  {
    FusionGuard fg(&copy);
    copy.addOutput(neg(tv5));
  }
  EXPECT_EQ(original.toString(), before);
  EXPECT_NE(copy.toString(), before);
  EXPECT_FALSE(tv5->sameAs(built.tv5));
}

TEST(ClonerTest, CopyOfCopy) {
  Fusion original;
  buildFusion(original);
  Fusion copy1;
  copyFusion(original, copy1);
  Fusion copy2;
  copyFusion(copy1, copy2);
  EXPECT_EQ(copy2.toString(), original.toString());
}

TEST(ClonerTest, CopyIntoNonEmptyFusionIsAnInternalError) {
  Fusion original;
  buildFusion(original);
  Fusion target;
  {
    FusionGuard fg(&target);
    makeContigTensor(1);
  }
  EXPECT_HOSTIR_ERROR(copyFusion(original, target), {"copyFusion needs an empty target"});
}

TEST(ClonerTest, CopyKeepsNamedAndConstantScalars) {
  Fusion original;
  Val* stream = nullptr;
  {
    FusionGuard fg(&original);
    Scalar* idx = IrBuilder::create<Scalar>(std::string(kStreamIdx), DataType::Int64);
    Scalar* n = IrBuilder::create<Scalar>(std::string(kNumberOfStreams), DataType::Int64);
    original.addInput(idx);
    original.addInput(n);
    stream = mod(add(idx, constant(1)), n);
    original.addOutput(stream);
  }
  Fusion copy;
  IrCloner cloner = copyFusion(original, copy);
  Val* cloned = cloner.clone(stream);
  EXPECT_EQ(cloned->toInlineString(), "( ( StreamIdx + 1 ) % numberOfStreams )");
  EXPECT_TRUE(cloned->sameAs(stream));
  EXPECT_EQ(copy.exprs().size(), 2u);
  EXPECT_EQ(copy.toString(), original.toString());
}

TEST(ClonerTest, SubgraphCloneOfOneExpr) {
  Fusion original;
  Built built = buildFusion(original);
  Expr* reduction = nullptr;
  for (Expr* e : original.exprs()) {
    if (e->isA<ReductionOp>()) {
      reduction = e;
    }
  }
  ASSERT_NE(reduction, nullptr);
  Fusion segment;
  IrCloner cloner(&segment);
  Expr* cloned = cloner.clone(reduction);
  ASSERT_TRUE(cloned->isA<ReductionOp>());
  EXPECT_EQ(cloned->container(), &segment);
  EXPECT_EQ(cloned->attributes(), reduction->attributes());
  EXPECT_EQ(cloned->as<ReductionOp>()->axes(), std::vector<int64_t>({1}));
  // The boundary input has no definition: it can become a segment input.
  auto* in = cloned->input(0)->as<TensorView>();
  EXPECT_EQ(in->definition(), nullptr);
  EXPECT_NO_THROW(segment.addInput(in));
  auto* out = cloned->output(0)->as<TensorView>();
  EXPECT_EQ(out->definition(), cloned);
  segment.addOutput(out);
  ASSERT_EQ(segment.exprs().size(), 1u);
  EXPECT_EQ(segment.exprs()[0], cloned);
  // The reduction output's split travels with its domain.
  EXPECT_EQ(out->nDims(), 3);
  EXPECT_TRUE(out->axis(1)->definition()->isA<Split>());
  EXPECT_FALSE(built.tv3->definition() == nullptr);
}

TEST(ClonerTest, SubgraphCloneOfAnOutputIsDefinitionFree) {
  Fusion original;
  Built built = buildFusion(original);
  Fusion segment;
  IrCloner cloner(&segment);
  auto* tv5 = cloner.clone(built.tv5);
  EXPECT_EQ(tv5->definition(), nullptr);
  EXPECT_EQ(tv5->dtype(), DataType::Half);
  ASSERT_EQ(tv5->nDims(), 3);
  EXPECT_TRUE(tv5->axis(0)->isStream());
  EXPECT_EQ(constExtent(tv5->axis(0)), 4);
  // Its extents and loop transforms come along; the ops computing it do not.
  EXPECT_TRUE(tv5->axis(0)->definition()->isA<Split>());
  for (const auto& statement : segment.statements()) {
    if (!statement->isVal()) {
      auto* expr = static_cast<Expr*>(statement.get());
      EXPECT_TRUE(expr->isA<Split>() || expr->isA<BinaryOp>()) << expr->toString();
      if (expr->isA<BinaryOp>()) {
        EXPECT_EQ(expr->output(0)->vtype(), ValType::Scalar);
      }
    }
  }
  EXPECT_NO_THROW(segment.addInput(tv5));
}

TEST(ClonerTest, MapPreseedsTheClone) {
  Fusion original;
  TensorView* tv0 = nullptr;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(&original);
    tv0 = makeContigTensor(1);
    tv1 = neg(tv0);
  }
  Fusion target;
  TensorView* existing = nullptr;
  {
    FusionGuard fg(&target);
    existing = makeContigTensor(1);
  }
  IrCloner cloner(&target);
  cloner.map(tv0, existing);
  EXPECT_TRUE(cloner.isCloned(tv0));
  Expr* cloned = cloner.clone(tv1->definition());
  EXPECT_EQ(cloned->input(0), existing);
  ASSERT_EQ(existing->uses().size(), 1u);
  EXPECT_EQ(existing->uses()[0], cloned);
}

TEST(ClonerTest, CloneIsMemoized) {
  Fusion original;
  TensorView* tv1 = nullptr;
  {
    FusionGuard fg(&original);
    TensorView* tv0 = makeContigTensor(1);
    tv1 = add(tv0, tv0);
  }
  Fusion target;
  IrCloner cloner(&target);
  Expr* e = cloner.clone(tv1->definition());
  EXPECT_EQ(e->input(0), e->input(1));
  EXPECT_EQ(cloner.clone(tv1->definition()), e);
  EXPECT_EQ(cloner.clone(static_cast<Val*>(nullptr)), nullptr);
}

TEST(ClonerTest, CloneScalarExpressionBringsItsDefinition) {
  Fusion original;
  Val* extent = nullptr;
  {
    FusionGuard fg(&original);
    extent = ceilDiv(mul(symbol(), symbol()), constant(4));
  }
  Fusion target;
  IrCloner cloner(&target);
  Val* cloned = cloner.clone(extent);
  // A subgraph copy numbers its symbols in the target, so only the structure
  // is compared: ceilDiv(( iA * iB ), 4).
  ASSERT_NE(cloned->definition(), nullptr);
  EXPECT_EQ(cloned->definition()->container(), &target);
  auto* outer = cloned->definition()->as<BinaryOp>();
  EXPECT_EQ(outer->type(), BinaryOpType::CeilDiv);
  EXPECT_EQ(outer->rhs()->as<Scalar>()->constInt(), 4);
  ASSERT_NE(outer->lhs()->definition(), nullptr);
  EXPECT_EQ(outer->lhs()->definition()->as<BinaryOp>()->type(), BinaryOpType::Mul);
  EXPECT_EQ(outer->lhs()->definition()->inputs().size(), 2u);
}

}  // namespace
}  // namespace hostir::test
