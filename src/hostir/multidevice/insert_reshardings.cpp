#include <algorithm>
#include <deque>

#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/mutation.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/reduction_sharding.h"
#include "hostir/multidevice/sharding_propagation.h"

namespace hostir {

namespace {

bool isDetached(const Expr* expr) {
  TensorView* out = tensorOutput(expr);
  return out == nullptr || out->definition() != expr;
}

bool contractsShardedAxis(const Expr* expr) {
  for (TensorView* in : tensorInputs(expr)) {
    int64_t k = contractedAxis(expr, in);
    if (k >= 0 && shardingParallelType(in, in->getLogicalDomain()[static_cast<size_t>(k)]) !=
                      ParallelType::Serial) {
      return true;
    }
  }
  return false;
}

// linear(x, w, b) -> add(linear(x, w), b): with K sharded, each device holds
// a partial product, and the bias must be added once, after the reduction.
// Returns the two new exprs.
std::vector<Expr*> splitBiasOff(LinearOp* linear_op) {
  TensorView* out = linear_op->out();
  TensorView* bias = linear_op->bias();
  Fusion* container = linear_op->container();
  TensorView* partial = freshTensorLike(out);
  applySharding(partial, shardingOf(out));
  detachExpr(linear_op);
  Expr* product = IrBuilder::createInContainer<LinearOp>(
      container, std::vector<Val*>{linear_op->in(), linear_op->weight()},
      std::vector<Val*>{partial}, std::vector<Attribute>{});
  Expr* add_bias = IrBuilder::createInContainer<BinaryOp>(
      container, std::vector<Val*>{partial, bias}, std::vector<Val*>{out},
      std::vector<Attribute>{static_cast<int64_t>(BinaryOpType::Add)});
  return {product, add_bias};
}

// expr computes into a new tensor with its inputs' sharding; a set reshards
// that into the original output.
void reshardAfter(Expr* expr, const TensorSharding& computed_sharding) {
  TensorView* out = tensorOutput(expr);
  TensorView* local = freshTensorLike(out);
  applySharding(local, computed_sharding);
  replaceValInExprOutputs(expr, out, local);
  IrBuilder::createInContainer<LoadStoreOp>(out->container(), std::vector<Val*>{local},
                                            std::vector<Val*>{out}, std::vector<Attribute>{});
}

bool sameSharding(const TensorSharding& a, const TensorSharding& b) {
  return a.mesh == b.mesh && a.logical_axes == b.logical_axes && a.via_split == b.via_split;
}

// A set of `in` into `target` that an earlier reader already made (a
// backward's dgrad and wgrad both read the gathered output grad): reading
// it again costs no second collective. Sets whose output is split into
// Stream chunks are not shared.
TensorView* existingReshard(TensorView* in, const TensorSharding& target) {
  for (Expr* use : in->uses()) {
    TensorView* out = use->isA<LoadStoreOp>() ? tensorOutput(use) : nullptr;
    if (out == nullptr || out->isFusionOutput() || !sameSharding(shardingOf(out), target)) {
      continue;
    }
    const std::vector<IterDomain*>& loop = out->getLoopDomain();
    if (std::none_of(loop.begin(), loop.end(),
                     [](const IterDomain* id) { return id->isStream(); })) {
      return out;
    }
  }
  return nullptr;
}

// `in` resharded into `target`: a set of it (one an earlier reader made, if
// any). A permuted tensor is resharded before the permute and permuted
// after (permute(set(t)), not set(permute(t))): a transposed operand (a
// backward's wgrad reads the output grad transposed) then shares the
// collective of the untransposed one (its dgrad's), and no copy is made to
// put the sharded axis first.
TensorView* reshardedInto(TensorView* in, const TensorSharding& target) {
  if (auto* permute_op = dynamic_cast<PermuteOp*>(in->definition());
      permute_op != nullptr && permute_op->in()->rank() == in->rank()) {
    const std::vector<int64_t>& dims = permute_op->dims();
    TensorSharding source_target = target;
    for (auto& [parallel_type, axis] : source_target.logical_axes) {
      axis = dims[static_cast<size_t>(axis)];
    }
    TensorView* permuted = permute(reshardedInto(permute_op->in(), source_target), dims);
    applySharding(permuted, target);
    return permuted;
  }
  if (TensorView* existing = existingReshard(in, target)) {
    return existing;
  }
  TensorView* resharded = set(in);
  applySharding(resharded, target);
  return resharded;
}

// Each input that disagrees with the output is resharded by a set into the
// output's sharding (on the axes that map) before expr reads it (a set an
// earlier reader made into that sharding is read again). Returns the expr
// reading them.
Expr* reshardBefore(Expr* expr) {
  TensorView* out = tensorOutput(expr);
  TensorSharding out_sharding = shardingOf(out);
  std::vector<TensorView*> inputs = tensorInputs(expr);
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  for (TensorView* in : inputs) {
    AxisMap map = mapProducerToConsumer(expr, in);
    if (!haveDifferentShardings(shardingOf(in), out_sharding, map)) {
      continue;
    }
    TensorSharding target;
    target.mesh = out_sharding.mesh;
    for (const auto& [parallel_type, pos] : out_sharding.logical_axes) {
      int64_t p = mappedProducerAxis(map, pos);
      if (p >= 0) {
        target.logical_axes[parallel_type] = logicalToShape(in, p);
        target.via_split[parallel_type] = out_sharding.via_split.at(parallel_type);
      }
    }
    expr = replaceValInExprInputs(expr, in, reshardedInto(in, target));
  }
  return expr;
}

// Whether the lowering reduces partial results along `parallel_type` when
// `expr`'s inputs and output differ there: a reduction of the axis sharded
// by it, or a matmul/linear (no bias) whose operands both shard K by it.
bool reducesAlong(const Expr* expr, ParallelType parallel_type) {
  std::vector<TensorView*> inputs = tensorInputs(expr);
  if (const auto* reduction = dynamic_cast<const ReductionOp*>(expr)) {
    return reducesShardedAxis(reduction, parallel_type);
  }
  bool gemm = expr->isA<MatmulOp>() || (expr->isA<LinearOp>() && inputs.size() == 2);
  return gemm && std::all_of(inputs.begin(), inputs.end(), [&](const TensorView* in) {
           int64_t k = contractedAxis(expr, in);
           return k >= 0 && shardingOf(in).axisOf(parallel_type) == k;
         });
}

// Whether computing into `computed` leaves only differences the lowering
// handles directly.
bool inputsAgreeWith(const Expr* expr, const TensorSharding& computed) {
  for (TensorView* in : tensorInputs(expr)) {
    TensorSharding in_sharding = shardingOf(in);
    if (!in_sharding.mesh.has_value()) {
      continue;
    }
    if (*in_sharding.mesh != *computed.mesh) {
      return false;
    }
    AxisMap map = mapProducerToConsumer(expr, in);
    for (ParallelType parallel_type : kDeviceParallelTypes) {
      if (haveDifferentShardingsAlong(in_sharding, computed, map, parallel_type) &&
          !reducesAlong(expr, parallel_type)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

void insertReshardings(Fusion* fusion) {
  std::deque<Expr*> work;
  for (Expr* expr : fusion->exprs()) {
    work.push_back(expr);
  }
  while (!work.empty()) {
    Expr* expr = work.front();
    work.pop_front();
    if (isDetached(expr) || expr->isA<LoadStoreOp>() || !isResharding(expr)) {
      continue;
    }
    auto* linear_op = dynamic_cast<LinearOp*>(expr);
    if (linear_op != nullptr && linear_op->hasBias() && contractsShardedAxis(expr)) {
      for (Expr* part : splitBiasOff(linear_op)) {
        work.push_back(part);
      }
      continue;
    }
    if (isLoweredDirectly(expr)) {
      continue;
    }
    TensorView* out = tensorOutput(expr);
    TensorSharding computed = shardingFromProducers(expr, out, /*respect_consumer_loop=*/false);
    if (computed.mesh.has_value() && inputsAgreeWith(expr, computed)) {
      reshardAfter(expr, computed);
      continue;
    }
    expr = reshardBefore(expr);
    // A reshape that shards an axis it makes (x [S, 5] sharded on S, flattened
    // into [5S] sharded) reads its input gathered, computes the whole and
    // takes its slice after (isResharding's shardsAReshapedAxis).
    if (expr->isA<ReshapeOp>() && isResharding(expr)) {
      computed = shardingFromProducers(expr, tensorOutput(expr), /*respect_consumer_loop=*/false);
      if (computed.mesh.has_value() && inputsAgreeWith(expr, computed)) {
        reshardAfter(expr, computed);
      }
    }
  }
}

}  // namespace hostir
