#include "hostir/host_ir/passes/batched_rhs_gemms.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

bool hasBroadcast(const TensorView* tv) {
  const std::vector<IterDomain*> shape = tv->shapeDomain();
  return std::any_of(shape.begin(), shape.end(),
                     [](const IterDomain* id) { return id->isBroadcast(); });
}

// A [m, k] @ B [b, k, n] with nothing broadcast and B plain (an encoded
// B is already in the GEMM's own layout).
bool isMatrixTimesBatch(const MatmulOp* matmul) {
  const TensorView* a = matmul->a();
  const TensorView* b = matmul->b();
  return a->rank() == 2 && b->rank() == 3 && matmul->out()->rank() == 3 && !b->hasEncoding() &&
         !hasBroadcast(a) && !hasBroadcast(b);
}

template <typename Op>
Op* emit(HostIrContainer& container, TensorView* in, TensorView* out,
         std::vector<Attribute> attributes) {
  return IrBuilder::createInContainer<Op>(&container, std::vector<Val*>{in}, std::vector<Val*>{out},
                                          std::move(attributes));
}

// [k, b·n]: B's matrices side by side, and the two exprs that make it.
struct SideBySide {
  TensorView* columns = nullptr;
  std::vector<Expr*> exprs;
};

SideBySide sideBySide(HostIrContainer& container, TensorView* b) {
  const std::vector<Val*> shape = localShape(b);  // [batch, k, n]
  TensorView* k_first = makeTensorOfExtents(&container, {shape[1], shape[0], shape[2]}, b->dtype());
  TensorView* columns =
      makeTensorOfExtents(&container, {shape[1], mul(shape[0], shape[2])}, b->dtype());
  return {columns,
          {emit<PermuteOp>(container, b, k_first, {std::vector<int64_t>{1, 0, 2}}),
           emit<ReshapeOp>(container, k_first, columns, {})}};
}

}  // namespace

void mergeBatchedRhsGemms(HostIrContainer& container) {
  // One side-by-side copy per program input, shared by its GEMMs (every
  // chunk's, and each gathered part's).
  std::unordered_map<TensorView*, TensorView*> side_by_side;
  for (const auto& [scope, expr] : allExprs(container)) {
    auto* matmul = dynamic_cast<MatmulOp*>(expr);
    if (matmul == nullptr || !scope->contains(matmul) || !isMatrixTimesBatch(matmul)) {
      continue;
    }
    TensorView* b = matmul->b();
    TensorView* columns = nullptr;
    if (auto shared = side_by_side.find(b); shared != side_by_side.end()) {
      columns = shared->second;
    } else {
      SideBySide made = sideBySide(container, b);
      columns = made.columns;
      if (placeDerivation(container, b, made.exprs, *scope, matmul)) {
        side_by_side[b] = columns;  // at the start: every GEMM of b reads it
      }
    }
    std::vector<Expr*> emitted;
    TensorView* out = matmul->out();
    const std::vector<Val*> out_shape = localShape(out);  // [batch, m, n]
    TensorView* a = matmul->a();
    TensorView* wide = makeTensorOfExtents(
        &container, {out_shape[1], columns->shapeDomain()[1]->extent()}, out->dtype());
    emitted.push_back(matmul->newObject(&container, {a, columns}, {wide}, {}, {}));
    TensorView* rows =
        makeTensorOfExtents(&container, {out_shape[1], out_shape[0], out_shape[2]}, out->dtype());
    emitted.push_back(emit<ReshapeOp>(container, wide, rows, {}));
    TensorView* batches = makeTensorOfExtents(&container, out_shape, out->dtype());
    emitted.push_back(emit<PermuteOp>(container, rows, batches, {std::vector<int64_t>{1, 0, 2}}));
    emitted.push_back(emit<LoadStoreOp>(container, batches, out, {}));
    scope->replace(matmul, emitted);
  }
}

}  // namespace hostir
