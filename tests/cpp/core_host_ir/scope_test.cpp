#include <gtest/gtest.h>

#include "core_host_ir/host_ir_test_utils.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/scalar.h"

namespace hostir {

// Scope edits on distinct, cheap exprs (Synchronize on a fresh stream each).
class ScopeTest : public ::testing::Test {
 protected:
  ScopeTest() : guard_(&hic_) {
    for (int i = 0; i < 6; ++i) {
      exprs_.push_back(IrBuilder::create<Synchronize>(IrBuilder::create<Stream>()));
    }
  }
  Expr* e(size_t i) const {
    return exprs_.at(i);
  }
  ForLoop* makeLoop() {
    auto* index = IrBuilder::create<Scalar>(DataType::Int64);
    auto* zero = IrBuilder::create<Scalar>(int64_t{0});
    auto* stop = IrBuilder::create<Scalar>(int64_t{4});
    auto* one = IrBuilder::create<Scalar>(int64_t{1});
    return IrBuilder::create<ForLoop>(index, zero, stop, one);
  }

  HostIrContainer hic_;
  FusionGuard guard_;
  std::vector<Expr*> exprs_;
};

using Exprs = std::vector<Expr*>;

TEST_F(ScopeTest, PushBackAndFrontKeepOrder) {
  Scope scope;
  EXPECT_TRUE(scope.empty());
  scope.push_back(e(1));
  scope.push_back(e(2));
  scope.push_front(e(0));
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(1), e(2)}));
  EXPECT_EQ(scope.size(), 3u);
  EXPECT_FALSE(scope.empty());
  EXPECT_EQ(scope.front(), e(0));
  EXPECT_EQ(scope.back(), e(2));
  Exprs iterated;
  for (Expr* expr : scope) {
    iterated.push_back(expr);
  }
  EXPECT_EQ(iterated, scope.toVector());
  EXPECT_EQ(scope.owner(), nullptr);
}

TEST_F(ScopeTest, FrontOfEmptyScopeIsAnError) {
  Scope scope;
  EXPECT_HOSTIR_ERROR(scope.front(), "the top-level scope is empty");
  EXPECT_HOSTIR_ERROR(scope.back(), "the top-level scope is empty");
}

TEST_F(ScopeTest, InsertBeforeAndAfter) {
  Scope scope;
  scope.push_back(e(0));
  scope.push_back(e(3));
  Scope::Iterator it = scope.insert(scope.find(e(3)), e(2));
  EXPECT_EQ(*it, e(2));
  scope.insertBefore(e(2), e(1));
  scope.insertAfter(e(3), e(5));
  scope.insertAfter(scope.find(e(3)), e(4));
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(1), e(2), e(3), e(4), e(5)}));
  EXPECT_HOSTIR_ERROR(scope.insertAfter(scope.end(), makeLoop()), "after the end");
}

TEST_F(ScopeTest, FindAndContains) {
  Scope scope;
  scope.push_back(e(0));
  scope.push_back(e(1));
  EXPECT_EQ(*scope.find(e(1)), e(1));
  EXPECT_EQ(scope.find(e(2)), scope.end());
  EXPECT_TRUE(scope.contains(e(0)));
  EXPECT_FALSE(scope.contains(e(2)));
  EXPECT_HOSTIR_ERROR(scope.insertBefore(e(2), e(3)), "Synchronize(Stream 2)",
                      "is not in the top-level scope");
}

TEST_F(ScopeTest, AnExprAppearsOnce) {
  Scope scope;
  scope.push_back(e(0));
  EXPECT_HOSTIR_ERROR(scope.push_back(e(0)),
                      "Synchronize(Stream 0) is already in the "
                      "top-level scope");
  EXPECT_HOSTIR_ERROR(scope.push_back(nullptr), "cannot insert a null expr");
  EXPECT_EQ(scope.size(), 1u);
}

TEST_F(ScopeTest, EraseReturnsTheNextPosition) {
  Scope scope;
  for (size_t i = 0; i < 4; ++i) {
    scope.push_back(e(i));
  }
  Scope::Iterator next = scope.erase(scope.find(e(1)));
  EXPECT_EQ(*next, e(2));
  EXPECT_EQ(scope.erase(e(3)), scope.end());
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(2)}));
  EXPECT_FALSE(scope.contains(e(1)));
  EXPECT_HOSTIR_ERROR(scope.erase(e(1)), "is not in the top-level scope");
  EXPECT_HOSTIR_ERROR(scope.erase(scope.end()), "cannot erase the end");
  // An erased expr can come back.
  scope.push_back(e(1));
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(2), e(1)}));
}

TEST_F(ScopeTest, ReplaceOneExprBySeveral) {
  Scope scope;
  scope.push_back(e(0));
  scope.push_back(e(1));
  scope.push_back(e(2));
  Scope::Iterator first = scope.replace(e(1), {e(3), e(4)});
  EXPECT_EQ(*first, e(3));
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(3), e(4), e(2)}));
  EXPECT_FALSE(scope.contains(e(1)));

  // Wrapping: the replaced expr may be among its replacements.
  scope.replace(scope.find(e(2)), {e(5), e(2)});
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(3), e(4), e(5), e(2)}));

  // No replacement: a removal; the result is the position after.
  EXPECT_EQ(*scope.replace(e(3), {}), e(4));
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(4), e(5), e(2)}));

  EXPECT_HOSTIR_ERROR(scope.replace(e(0), {e(4)}), "is already in the top-level scope");
  EXPECT_HOSTIR_ERROR(scope.replace(e(0), {e(1), e(1)}), "listed twice");
  EXPECT_EQ(scope.toVector(), (Exprs{e(0), e(4), e(5), e(2)}));  // unchanged on error
}

TEST_F(ScopeTest, MoveRangeIntoALoopBodyKeepsIterators) {
  Scope& top = hic_.topLevel();
  for (size_t i = 0; i < 5; ++i) {
    top.push_back(e(i));
  }
  ForLoop* loop = makeLoop();
  top.insertBefore(e(1), loop);
  Scope::Iterator it2 = top.find(e(2));
  // Move e1..e3 into the loop.
  top.moveRangeToBack(top.find(e(1)), top.find(e(4)), loop->body());
  EXPECT_EQ(top.toVector(), (Exprs{e(0), loop, e(4)}));
  EXPECT_EQ(loop->body().toVector(), (Exprs{e(1), e(2), e(3)}));
  EXPECT_EQ(loop->body().owner(), loop);
  EXPECT_FALSE(top.contains(e(2)));
  EXPECT_TRUE(loop->body().contains(e(2)));
  // The iterator moved with its expr and is usable in the body.
  EXPECT_EQ(*it2, e(2));
  loop->body().insertAfter(it2, e(5));
  EXPECT_EQ(loop->body().toVector(), (Exprs{e(1), e(2), e(5), e(3)}));
  EXPECT_EQ(loop->body().find(e(3)), std::prev(loop->body().end()));

  // Into the middle of another scope, and back.
  loop->body().moveRange(loop->body().find(e(5)), loop->body().end(), top, top.find(e(4)));
  EXPECT_EQ(top.toVector(), (Exprs{e(0), loop, e(5), e(3), e(4)}));
  EXPECT_EQ(loop->body().toVector(), (Exprs{e(1), e(2)}));
}

TEST_F(ScopeTest, MoveRangeWithinOneScope) {
  Scope scope;
  for (size_t i = 0; i < 4; ++i) {
    scope.push_back(e(i));
  }
  scope.moveRange(scope.find(e(2)), scope.end(), scope, scope.begin());
  EXPECT_EQ(scope.toVector(), (Exprs{e(2), e(3), e(0), e(1)}));
  EXPECT_EQ(*scope.find(e(0)), e(0));
  EXPECT_HOSTIR_ERROR(scope.moveRange(scope.begin(), scope.end(), scope, scope.find(e(3))),
                      "the destination lies inside the moved range");
  // Empty range: nothing happens.
  scope.moveRange(scope.begin(), scope.begin(), scope, scope.end());
  EXPECT_EQ(scope.toVector(), (Exprs{e(2), e(3), e(0), e(1)}));
}

TEST_F(ScopeTest, MovingALoopIntoItsOwnBodyIsAnError) {
  Scope& top = hic_.topLevel();
  ForLoop* loop = makeLoop();
  top.push_back(e(0));
  top.push_back(loop);
  EXPECT_HOSTIR_ERROR(top.moveRangeToBack(top.begin(), top.end(), loop->body()),
                      "cannot move FOR i", "into its own body");
  EXPECT_HOSTIR_ERROR(loop->body().push_back(loop), "into its own body");
  EXPECT_EQ(top.toVector(), (Exprs{e(0), loop}));
  EXPECT_TRUE(loop->body().empty());
}

TEST_F(ScopeTest, ErrorsInALoopBodyNameTheLoop) {
  ForLoop* loop = makeLoop();
  EXPECT_HOSTIR_ERROR(loop->body().erase(e(0)), "is not in the body of FOR i");
}

TEST_F(ScopeTest, PrintsEachExprAtTheIndent) {
  Scope scope;
  scope.push_back(e(0));
  scope.push_back(e(1));
  EXPECT_EQ(scope.toString(1), "  Synchronize Stream 0\n  Synchronize Stream 1\n");
}

}  // namespace hostir
