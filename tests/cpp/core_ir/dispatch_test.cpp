// Opt-in and opt-out visitor dispatch over the fusion expr kinds.

#include <map>

#include "hostir/ir/dispatch.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "test_utils.h"

namespace hostir::test {
namespace {

using DispatchTest = IrTest;

class UnaryOnly : public OptInDispatch {
 public:
  using OptInDispatch::handle;
  void handle(const UnaryOp* op) override {
    handled.push_back(op);
  }
  std::vector<const UnaryOp*> handled;
};

class BinaryCounter : public OptOutDispatch {
 public:
  using OptOutDispatch::handle;
  void handle(const BinaryOp* /*op*/) override {
    ++count;
  }
  int count = 0;
};

// Records which handle() each kind reaches.
class Recorder : public OptInDispatch {
 public:
#define HOSTIR_RECORD(T)                \
  void handle(const T* expr) override { \
    seen[expr] = #T;                    \
  }
  HOSTIR_FOR_ALL_FUSION_EXPRS(HOSTIR_RECORD)
#undef HOSTIR_RECORD
  std::map<const Expr*, std::string> seen;
};

TEST_F(DispatchTest, OptInHandlesItsKind) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = neg(tv0);
  UnaryOnly visitor;
  visitor.dispatch(tv1->definition());
  ASSERT_EQ(visitor.handled.size(), 1u);
  EXPECT_EQ(visitor.handled[0], tv1->definition());
}

TEST_F(DispatchTest, OptInThrowsOnUnhandledKindNamingTheOp) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = add(tv0, tv0);
  UnaryOnly visitor;
  EXPECT_HOSTIR_ERROR(visitor.dispatch(tv1->definition()),
                      {"unsupported op here: BinaryOp", tv1->toString(), "= add("});
  TensorView* tv2 = sum(tv0, {0});
  EXPECT_HOSTIR_ERROR(visitor.dispatch(tv2->definition()), {"unsupported op here: ReductionOp"});
  EXPECT_TRUE(visitor.handled.empty());
}

TEST_F(DispatchTest, OptOutSkipsUnhandledKinds) {
  TensorView* tv0 = makeContigTensor(2);
  fusion_.addInput(tv0);
  TensorView* tv1 = mul(exp(tv0), tv0);
  TensorView* tv2 = sum(sub(tv1, 1.0), {0});
  fusion_.addOutput(tv2);
  tv2->split(0, 2);
  BinaryCounter counter;
  for (Expr* e : fusion_.exprs()) {
    EXPECT_NO_THROW(counter.dispatch(e));
  }
  EXPECT_EQ(counter.count, 2);
  EXPECT_NO_THROW(counter.dispatch(tv2->axis(0)->definition()));  // a Split: skipped
}

TEST_F(DispatchTest, EveryFusionKindReachesItsHandler) {
  TensorView* a = makeConcreteTensor({2, 3});
  TensorView* b = makeConcreteTensor({3, 4});
  std::vector<std::pair<Expr*, std::string>> cases{
      {set(a)->definition(), "LoadStoreOp"},
      {neg(a)->definition(), "UnaryOp"},
      {castOp(DataType::Half, a)->definition(), "UnaryOp"},
      {add(a, 1.0)->definition(), "BinaryOp"},
      {mul(symbol(), symbol())->definition(), "BinaryOp"},
      {sum(a, {0})->definition(), "ReductionOp"},
      {broadcast(a, {true, false, false})->definition(), "BroadcastOp"},
      {matmul(a, b)->definition(), "MatmulOp"},
      {linear(a, permute(b, {1, 0}))->definition(), "LinearOp"},
      {select(a, 0, 1)->definition(), "SelectOp"},
      {slice(a, 1, 0, 2)->definition(), "SliceOp"},
      {permute(a, {1, 0})->definition(), "PermuteOp"},
      {reshape(a, {6})->definition(), "ReshapeOp"},
      {zeros({constant(2)})->definition(), "FullOp"},
  };
  TensorView* c = makeContigTensor(2);
  c->split(0, 2);
  cases.emplace_back(c->axis(0)->definition(), "Split");
  c->merge(1);
  cases.emplace_back(c->axis(1)->definition(), "Merge");

  Recorder recorder;
  for (auto& [expr, kind] : cases) {
    ASSERT_NE(expr, nullptr) << kind;
    recorder.dispatch(expr);
    EXPECT_EQ(recorder.seen[expr], kind);
    EXPECT_EQ(expr->opName(), kind);
  }
}

TEST_F(DispatchTest, ExprIsAAndAs) {
  TensorView* tv1 = relu(makeContigTensor(1));
  Expr* e = tv1->definition();
  EXPECT_TRUE(e->isA<UnaryOp>());
  EXPECT_FALSE(e->isA<BinaryOp>());
  EXPECT_EQ(e->as<UnaryOp>()->type(), UnaryOpType::Relu);
  EXPECT_HOSTIR_ERROR(e->as<BinaryOp>(), {"hostir internal error", "bad cast of UnaryOp"});
  EXPECT_HOSTIR_ERROR(tv1->as<Scalar>(), {"bad cast of " + tv1->toString()});
}

}  // namespace
}  // namespace hostir::test
