// When the host IR evaluator lets go of a tensor's binding: after the last
// top-level expr that refers to it (binding_lifetimes.h).

#include <algorithm>
#include <unordered_set>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/runtime/binding_lifetimes.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

void collectTensors(const Expr* expr, std::unordered_set<const Val*>& found) {
  for (const auto* vals : {&expr->inputs(), &expr->outputs()}) {
    found.insert(vals->begin(), vals->end());
  }
  if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
    collectTensors(wait->communication(), found);
  }
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    for (const Expr* nested : loop->body()) {
      collectTensors(nested, found);
    }
  }
}

// A pipelined program (a stream-split intermediate written chunk by chunk
// in a loop, then read whole): every intermediate is let go once, after the
// last expr that refers to it; no input or output is.
TEST(BindingLifetimesTest, AnIntermediateIsLetGoAfterItsLastReference) {
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    addStreamSplitIntermediateProgram();
  }
  HostExecutor executor(fusion);
  const at::Tensor x = at::randn({512, 1024});
  EXPECT_TRUE(allClose(executor.run({x}).at(0), at::exp(-(at::relu(x) + x))));
  const HostIrContainer& program = executor.hostProgram();
  const std::vector<std::vector<const Val*>> dead = tensorsDeadAfter(program);
  const std::vector<Expr*> exprs = program.exprs();
  ASSERT_EQ(dead.size(), exprs.size());
  std::unordered_set<const Val*> let_go;
  for (size_t i = 0; i < dead.size(); ++i) {
    std::unordered_set<const Val*> later;
    for (size_t j = i + 1; j < exprs.size(); ++j) {
      collectTensors(exprs[j], later);
    }
    for (const Val* val : dead[i]) {
      EXPECT_TRUE(let_go.insert(val).second) << val->toInlineString() << " let go twice";
      EXPECT_EQ(later.count(val), 0u) << val->toInlineString() << " is let go after expr " << i
                                      << " but a later expr refers to it";
    }
  }
  for (const Val* val : program.inputs()) {
    EXPECT_EQ(let_go.count(val), 0u) << val->toInlineString();
  }
  for (const Val* val : program.outputs()) {
    EXPECT_EQ(let_go.count(val), 0u) << val->toInlineString();
  }
  std::unordered_set<const Val*> referenced;
  for (const Expr* expr : exprs) {
    collectTensors(expr, referenced);
  }
  int64_t intermediates = 0;
  for (const Val* val : referenced) {
    if (val->vtype() == ValType::TensorView && !val->isFusionInput() && !val->isFusionOutput()) {
      ++intermediates;
      EXPECT_EQ(let_go.count(val), 1u) << val->toInlineString() << " is never let go";
    }
  }
  EXPECT_GT(intermediates, 0);
}

// The index of the top-level expr after which `dead` lists `val`, or -1.
int64_t letGoAfter(const std::vector<std::vector<const Val*>>& dead, const Val* val) {
  for (size_t i = 0; i < dead.size(); ++i) {
    if (std::ranges::find(dead[i], val) != dead[i].end()) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

// relu(x) @ w, then (relu(x) @ w) @ w2: relu(x) is read by the first GEMM
// only; the second GEMM reads the first's output, which the program
// computed. relu(x) is let go after the first GEMM, not kept as long as its
// output (before, every definition's inputs were followed: a training
// step's dy @ w2 lived as long as the dh computed from it).
TEST(BindingLifetimesTest, AnOperandIsNotKeptAsLongAsTheOutputComputedFromIt) {
  Fusion fusion;
  {
    FusionGuard fg(&fusion);
    std::vector<TensorView*> in;  // x, w, w2
    for (int i = 0; i < 3; ++i) {
      in.push_back(makeContigTensor(2));
      fusion.addInput(in.back());
    }
    fusion.addOutput(matmul(matmul(relu(in[0]), in[1]), in[2]));
  }
  HostExecutor executor(fusion);
  const at::Tensor x = at::randn({8, 16}), w = at::randn({16, 4}), w2 = at::randn({4, 2});
  EXPECT_TRUE(
      allClose(executor.run({x, w, w2}).at(0), at::matmul(at::matmul(at::relu(x), w), w2), 1e-4));
  const HostIrContainer& program = executor.hostProgram();
  const std::vector<std::vector<const Val*>> dead = tensorsDeadAfter(program);
  const std::vector<Expr*> exprs = program.exprs();
  const auto first = std::ranges::find_if(
      exprs, [](const Expr* expr) { return dynamic_cast<const MatmulOp*>(expr) != nullptr; });
  ASSERT_NE(first, exprs.end()) << program.toString();
  const Val* operand = (*first)->input(0);
  ASSERT_FALSE(operand->isFusionInput()) << program.toString();
  EXPECT_EQ(letGoAfter(dead, operand), first - exprs.begin()) << program.toString();
  EXPECT_GT(letGoAfter(dead, (*first)->output(0)), first - exprs.begin()) << program.toString();
}

}  // namespace
}  // namespace hostir::test
