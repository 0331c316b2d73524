#include "hostir/host_ir/passes/batched_matmul_sums.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

bool isSumOverAxis0(const Expr* expr, const Val* in) {
  const auto* sum = dynamic_cast<const ReductionOp*>(expr);
  return sum != nullptr && sum->type() == ReductionOpType::Sum && sum->in() == in &&
         sum->axes() == std::vector<int64_t>{0};
}

// Whether `expr` sums `product` over axis 0: the op itself, or a HostUnit
// that is that one op (a lone reduction the segmenter made a segment).
bool isBatchSum(const Expr* expr, const Val* product) {
  if (isSumOverAxis0(expr, product)) {
    return true;
  }
  const auto* post = dynamic_cast<const PostOnStream*>(expr);
  if (post == nullptr || !post->variants().empty() || post->inputs().size() != 1 ||
      post->outputs().size() != 1 || post->input(0) != product) {
    return false;
  }
  const Fusion& segment = *post->hostUnit()->fusion();
  const std::vector<Expr*> exprs = segment.exprs();
  return exprs.size() == 1 && segment.inputs().size() == 1 && segment.outputs().size() == 1 &&
         exprs[0]->output(0) == segment.outputs()[0] &&
         isSumOverAxis0(exprs[0], segment.inputs()[0]);
}

// The one reader of the matmul's product (deallocations aside), when it
// sums it over axis 0; else null.
Expr* onlyBatchSum(const ScopedExprs& exprs, const MatmulOp* matmul) {
  Expr* found = nullptr;
  for (const auto& [scope, expr] : exprs) {
    if (expr == matmul || expr->isA<Deallocate>() ||
        std::find(expr->inputs().begin(), expr->inputs().end(), matmul->out()) ==
            expr->inputs().end()) {
      continue;
    }
    if (!isBatchSum(expr, matmul->out()) || found != nullptr) {
      return nullptr;
    }
    found = expr;
  }
  return found;
}

void merge(HostIrContainer& container, Scope& scope, MatmulOp* matmul, Expr* sum,
           const ScopedExprs& holders) {
  TensorView* a = matmul->a();
  TensorView* b = matmul->b();
  const std::vector<Val*> a_shape = localShape(a);  // [batch, m, k]
  const std::vector<Val*> b_shape = localShape(b);  // [batch, k, n]
  Val* merged_k = mul(a_shape[0], a_shape[2]);

  std::vector<Expr*> emitted;
  TensorView* a_rows =
      makeTensorOfExtents(&container, {a_shape[1], a_shape[0], a_shape[2]}, a->dtype());
  emitted.push_back(IrBuilder::createInContainer<PermuteOp>(
      &container, std::vector<Val*>{a}, std::vector<Val*>{a_rows},
      std::vector<Attribute>{std::vector<int64_t>{1, 0, 2}}));
  TensorView* a_merged = makeTensorOfExtents(&container, {a_shape[1], merged_k}, a->dtype());
  emitted.push_back(IrBuilder::createInContainer<ReshapeOp>(&container, std::vector<Val*>{a_rows},
                                                            std::vector<Val*>{a_merged},
                                                            std::vector<Attribute>{}));
  TensorView* b_merged = makeTensorOfExtents(&container, {merged_k, b_shape[2]}, b->dtype());
  placeDerivation(
      container, b,
      {IrBuilder::createInContainer<ReshapeOp>(
          &container, std::vector<Val*>{b}, std::vector<Val*>{b_merged}, std::vector<Attribute>{})},
      scope, sum);
  emitted.push_back(matmul->newObject(&container, {a_merged, b_merged}, sum->outputs(), {}, {}));

  for (Expr* expr : emitted) {
    scope.insertBefore(sum, expr);
  }
  scope.erase(sum);
  scope.erase(matmul);
  for (const auto& [holder_scope, holder] : holders) {
    if (holder_scope->contains(holder)) {
      holder_scope->erase(holder);
    }
  }
}

}  // namespace

void mergeBatchedMatmulSums(HostIrContainer& container) {
  for (const auto& [scope, expr] : allExprs(container)) {
    auto* matmul = dynamic_cast<MatmulOp*>(expr);
    if (matmul == nullptr || !scope->contains(matmul) || matmul->a()->rank() != 3 ||
        matmul->b()->rank() != 3 || matmul->out()->rank() != 3 ||
        matmul->a()->shapeDomain()[0]->isBroadcast() ||
        matmul->b()->shapeDomain()[0]->isBroadcast()) {
      continue;
    }
    const ScopedExprs exprs = allExprs(container);
    Expr* sum = onlyBatchSum(exprs, matmul);
    if (sum == nullptr || !scope->contains(sum)) {
      continue;
    }
    std::optional<ScopedExprs> holders = privateViewChain(container, matmul->out(), {matmul, sum});
    if (!holders) {
      continue;
    }
    merge(container, *scope, matmul, sum, *holders);
  }
}

}  // namespace hostir
