// When the host IR evaluator lets go of a tensor's binding: after the last
// top-level expr that refers to it (binding_lifetimes.h).

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

}  // namespace
}  // namespace hostir::test
