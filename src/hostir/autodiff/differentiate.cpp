#include "hostir/autodiff/differentiate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hostir/autodiff/vjp_rules.h"
#include "hostir/host_ir/passes/propagate_stream_axes.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/mutation.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/multidevice/reduction_sharding.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// Gives `grad` the sharding of the forward tensor `like` (same shape): its
// mesh and, per sharded shape axis, the same DID parallel type the same way.
// A grad already placed (a pass-through grad placed as another tensor)
// keeps its placement.
void shardLike(TensorView* grad, const TensorView* like) {
  if (grad->hasDeviceMesh()) {
    return;
  }
  TensorSharding sharding = shardingOf(like);
  if (!sharding.mesh.has_value()) {
    return;
  }
  grad->setDeviceMesh(*sharding.mesh);
  for (const auto& [parallel_type, logical_axis] : sharding.logical_axes) {
    const int64_t shape_axis = getShardedLogicalAxis(like, parallel_type);
    shardLogicalAxis(grad, shapeToLogical(grad).at(static_cast<size_t>(shape_axis)), parallel_type,
                     sharding.via_split.at(parallel_type));
  }
}

// Whether `tv` is a GEMM's result that sums over an operand's Stream axis:
// each chunk of it needs every chunk of that operand, so it is computed
// after the loop, whole.
bool contractsAStreamAxis(const TensorView* tv) {
  const Expr* definition = tv->definition();
  if (definition == nullptr || !(definition->isA<MatmulOp>() || definition->isA<LinearOp>())) {
    return false;
  }
  for (size_t i = 0; i < 2; ++i) {
    const auto* operand = definition->input(i)->as<TensorView>();
    std::optional<StreamAxis> stream = findStreamAxis(operand);
    if (!stream.has_value()) {
      continue;
    }
    const std::vector<IterDomain*> shape = operand->shapeDomain();
    // K: the last axis of matmul's A and of both linear operands; the
    // second to last of matmul's B (its only one when it is 1-D).
    const bool b_of_matmul = definition->isA<MatmulOp>() && i == 1;
    IterDomain* k = shape.size() >= 2 && b_of_matmul ? shape[shape.size() - 2] : shape.back();
    if (operand->getLogicalDomain()[static_cast<size_t>(stream->logical_pos)] == k) {
      return true;
    }
  }
  return false;
}

// Whether `expr` sums over an axis sharded across devices (the attention's
// out-projection summed over the heads): its result is the output of a
// reduce-scatter or allreduce, and recomputing it would move its bytes over
// the link again.
bool reducesAcrossDevices(const Expr* expr) {
  const auto* reduction = dynamic_cast<const ReductionOp*>(expr);
  return reduction != nullptr && reduction->in()->hasDeviceMesh() &&
         std::any_of(kDeviceParallelTypes.begin(), kDeviceParallelTypes.end(),
                     [reduction](ParallelType parallel_type) {
                       return reducesShardedAxis(reduction, parallel_type);
                     });
}

// Gives `grad` the Stream split of the forward tensor `like` (same shape):
// the same logical axis cut into the same number of chunks, so the grads
// of a pipelined forward form the same loops in the backward. `extent`
// maps a forward scalar into the backward. A grad that has a Stream axis
// already keeps it.
template <typename MapExtent>
void streamSplitLike(TensorView* grad, const TensorView* like, MapExtent extent) {
  std::optional<StreamAxis> stream = findStreamAxis(like);
  if (!stream.has_value() || stream->chunk_size == nullptr || findStreamAxis(grad).has_value() ||
      grad->definition() == nullptr ||
      !hasTrait(grad->definition(), OpTrait::StreamParallelizable) || contractsAStreamAxis(grad)) {
    return;
  }
  const auto shape_axis = static_cast<size_t>(logicalToShape(like, stream->logical_pos));
  IterDomain* logical_id =
      grad->getLogicalDomain()[static_cast<size_t>(shapeToLogical(grad).at(shape_axis))];
  const std::vector<IterDomain*>& loop = grad->getLoopDomain();
  auto at = std::find(loop.begin(), loop.end(), logical_id);
  if (at == loop.end()) {
    return;  // already split (sharded on that axis): left unpipelined
  }
  const auto position = static_cast<int64_t>(at - loop.begin());
  grad->split(position, extent(stream->loop_id->extent()), /*inner_split=*/false);
  grad->axis(position)->parallelize(ParallelType::Stream);
}

bool sameSharding(const TensorView* a, const TensorView* b) {
  TensorSharding sa = shardingOf(a);
  TensorSharding sb = shardingOf(b);
  if (sa.mesh.has_value() != sb.mesh.has_value() || (sa.mesh && !(*sa.mesh == *sb.mesh))) {
    return false;
  }
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    if (getShardedLogicalAxis(a, parallel_type) != getShardedLogicalAxis(b, parallel_type)) {
      return false;
    }
  }
  return true;
}

std::vector<int64_t> chosenPositions(const std::vector<int64_t>& asked,
                                     const std::vector<Val*>& vals, const char* what) {
  std::vector<int64_t> positions;
  if (asked.empty()) {
    for (size_t i = 0; i < vals.size(); ++i) {
      if (takesGrad(vals[i])) {
        positions.push_back(static_cast<int64_t>(i));
      }
    }
    return positions;
  }
  std::set<int64_t> seen;
  for (int64_t position : asked) {
    HOSTIR_CHECK(position >= 0 && position < static_cast<int64_t>(vals.size()),
                 "differentiate: ", what, " ", position, " does not exist; the fusion has ",
                 vals.size(), " ", what, "s");
    HOSTIR_CHECK(takesGrad(vals[static_cast<size_t>(position)]), "differentiate: ", what, " ",
                 position, " (", vals[static_cast<size_t>(position)]->toInlineString(),
                 ") is not a floating-point tensor; only those have grads");
    HOSTIR_CHECK(seen.insert(position).second, "differentiate: ", what, " ", position,
                 " is listed twice");
    positions.push_back(position);
  }
  return positions;
}

// A softmax as arith's softmax() builds it over `axes` of `x`:
//   p = div(e, broadcast(sum(e, axes))), e = exp(sub(x, broadcast(max(x, axes))))
// with no other reader of its intermediates. Its grad is taken whole, as
// torch's softmax backward: dx = p * (g - sum(g * p, axes)), which reads p
// alone. The pieces' rules would read e, the sum and x (x for max's grad,
// which is 0 but for rounding: a softmax does not move with the shift), so
// the backward of an attention would recompute the probabilities from the
// saved scores and hold both.
struct Softmax {
  const TensorView* x = nullptr;
  const TensorView* p = nullptr;
  std::vector<int64_t> axes;
};

template <typename T>
const T* definedAs(const Val* val) {
  const Expr* definition = val->definition();
  return definition != nullptr && definition->isA<T>() ? definition->as<T>() : nullptr;
}

// Whether `bcast` inserts exactly `axes` (a keep_dim reduction's broadcast).
bool insertsAxes(const BroadcastOp* bcast, const std::vector<int64_t>& axes) {
  const std::vector<int64_t>& flags = bcast->isBroadcastDims();
  const auto inserted = std::count_if(flags.begin(), flags.end(), [](int64_t f) { return f != 0; });
  return inserted == static_cast<std::ptrdiff_t>(axes.size()) &&
         std::all_of(axes.begin(), axes.end(), [&](int64_t axis) {
           return axis >= 0 && axis < static_cast<int64_t>(flags.size()) &&
                  flags[static_cast<size_t>(axis)] != 0;
         });
}

bool onlyReadBy(const Val* val, size_t readers) {
  return val->uses().size() == readers;
}

std::optional<Softmax> matchSoftmax(const Expr* expr) {
  if (!expr->isA<BinaryOp>() || expr->as<BinaryOp>()->type() != BinaryOpType::Div) {
    return std::nullopt;
  }
  const auto* div_op = expr->as<BinaryOp>();
  const auto* exp_op = definedAs<UnaryOp>(div_op->lhs());
  const auto* sum_bcast = definedAs<BroadcastOp>(div_op->rhs());
  if (exp_op == nullptr || exp_op->type() != UnaryOpType::Exp || sum_bcast == nullptr) {
    return std::nullopt;
  }
  const auto* sum_op = definedAs<ReductionOp>(sum_bcast->in());
  const auto* sub_op = definedAs<BinaryOp>(exp_op->in());
  if (sum_op == nullptr || sum_op->type() != ReductionOpType::Sum ||
      sum_op->in() != exp_op->out() || sub_op == nullptr || sub_op->type() != BinaryOpType::Sub) {
    return std::nullopt;
  }
  const auto* max_bcast = definedAs<BroadcastOp>(sub_op->rhs());
  const auto* max_op = max_bcast == nullptr ? nullptr : definedAs<ReductionOp>(max_bcast->in());
  if (max_op == nullptr || max_op->type() != ReductionOpType::Max ||
      max_op->in() != sub_op->lhs() || max_op->axes() != sum_op->axes() ||
      !insertsAxes(sum_bcast, sum_op->axes()) || !insertsAxes(max_bcast, max_op->axes())) {
    return std::nullopt;
  }
  if (!onlyReadBy(exp_op->out(), 2) || !onlyReadBy(exp_op->in(), 1) ||
      !onlyReadBy(sum_op->out(), 1) || !onlyReadBy(sum_bcast->out(), 1) ||
      !onlyReadBy(max_op->out(), 1) || !onlyReadBy(max_bcast->out(), 1)) {
    return std::nullopt;
  }
  return Softmax{max_op->in(), div_op->output(0)->as<TensorView>(), sum_op->axes()};
}

// Whether a softmax's probabilities are 0 above the diagonal of their last
// two axes: a softmax over the last axis of where(mask, x, -inf) with a
// causal mask from 0 (whole, or broadcast along leading axes) — exp(-inf)
// is 0 and the diagonal is visible, so no row sums to 0.
bool isCausalSoftmax(const Softmax& softmax) {
  const int64_t rank = softmax.p->rank();
  const auto* where = definedAs<WhereOp>(softmax.x);
  if (rank < 2 || softmax.axes != std::vector<int64_t>{rank - 1} || where == nullptr ||
      !isConstantScalar(where->b(), -INFINITY)) {
    return false;
  }
  const Val* mask = where->condition();
  while (const auto* broadcast = definedAs<BroadcastOp>(mask)) {
    const std::vector<int64_t>& flags = broadcast->isBroadcastDims();
    if (flags.size() < 2 || flags[flags.size() - 1] != 0 || flags[flags.size() - 2] != 0) {
      return false;
    }
    mask = broadcast->in();
  }
  return isCausalMaskFromZero(mask);
}

// The softmaxes among the exprs on the grad's path, by their div.
std::unordered_map<const Expr*, Softmax> softmaxesOf(
    const std::unordered_set<const Expr*>& active) {
  std::unordered_map<const Expr*, Softmax> found;
  for (const Expr* expr : active) {
    if (std::optional<Softmax> softmax = matchSoftmax(expr)) {
      found.emplace(expr, *softmax);
    }
  }
  return found;
}

// Builds the backward fusion: the forward's values it reads (PrimalValues)
// are cloned into it from the forward's inputs, the saved tensors and, for
// the rest, by recomputing their definitions.
class BackwardBuilder : public PrimalValues {
 public:
  BackwardBuilder(const Fusion& forward, Fusion& backward, SavePolicy policy)
      : forward_(forward), backward_(backward), cloner_(&backward), policy_(policy) {}

  // Tensors kept like the GEMMs' results under kSaveGemmOutputs: a
  // softmax's probabilities, which its grad reads alone (torch keeps them
  // too) and which cost a reduction over the scores to recompute; under
  // kSaveGathered, the gathers gatherGemmOperandsExplicitly made.
  void alsoSave(const Val* val) {
    also_saved_.insert(val);
  }
  // Saved, `val` tells the backward its entries above the diagonal are 0
  // (TensorView::zeroAboveDiagonal), so its GEMMs skip them.
  void markZeroAboveDiagonal(const Val* val) {
    zero_above_diagonal_.insert(val);
  }

  void addForwardInputs() {
    for (Val* input : forward_.inputs()) {
      backward_.addInput(cloner_.clone(input));
      available_.insert(input);
    }
  }

  // A tensor shaped and sharded as the forward tensor `like`, as an input.
  TensorView* addGradInput(const TensorView* like) {
    TensorView* grad = tensorLike(like);
    backward_.addInput(grad);
    return grad;
  }

  TensorView* zerosLike(const TensorView* like) {
    TensorView* zero = zeros(extentsOf(like), like->dtype());
    shardLike(zero, like);
    return zero;
  }

  Val* primal(const Val* val) override {
    if (available_.count(val) != 0) {
      return cloner_.clone(val);
    }
    Expr* definition = val->definition();
    if (definition == nullptr) {
      return cloner_.clone(val);  // a constant or an extent's arithmetic
    }
    const bool saves_gemm_outputs =
        policy_ == SavePolicy::kSaveGemmOutputs || policy_ == SavePolicy::kSaveGathered;
    if (saves_gemm_outputs && (definition->isA<MatmulOp>() || definition->isA<LinearOp>() ||
                               reducesAcrossDevices(definition) || also_saved_.count(val) != 0)) {
      auto* saved = cloner_.clone(val)->as<TensorView>();
      // Inputs arrive whole: the forward's Stream chunks of it stay there.
      for (IterDomain* id : saved->getLoopDomain()) {
        if (id->isStream()) {
          id->parallelize(ParallelType::Serial);
        }
      }
      // As the forward left it: with uneven shards a pipelined GEMM's output
      // is a view of a padded buffer, strided when its rows are not the
      // outermost axis (host_ir/passes/gather_pipeline.h).
      saved->domain()->setContiguity(
          std::vector<bool>(saved->domain()->contiguity().size(), false));
      saved->setZeroAboveDiagonal(zero_above_diagonal_.count(val) != 0);
      backward_.addInput(saved);
      saved_.push_back(val);
      available_.insert(val);
      return cloner_.clone(val);
    }
    for (Val* input : definition->inputs()) {
      primal(input);
    }
    cloner_.clone(definition);  // recompute: its outputs become available
    for (Val* output : definition->outputs()) {
      available_.insert(output);
    }
    return cloner_.clone(val);
  }

  Val* extent(const Val* forward_extent) override {
    return cloner_.clone(forward_extent);
  }

  const std::vector<const Val*>& saved() const {
    return saved_;
  }

 private:
  std::vector<Val*> extentsOf(const TensorView* like) {
    std::vector<Val*> extents;
    for (IterDomain* id : like->shapeDomain()) {
      extents.push_back(cloner_.clone(id->extent()));
    }
    return extents;
  }

  TensorView* tensorLike(const TensorView* like) {
    std::vector<IterDomain*> ids;
    for (IterDomain* id : like->shapeDomain()) {
      ids.push_back(IrBuilder::createInContainer<IterDomain>(
          &backward_, cloner_.clone(id->extent()), id->iterType()));
    }
    TensorView* tv = makeTensorOver(&backward_, ids, like->dtype());
    shardLike(tv, like);
    return tv;
  }

  const Fusion& forward_;
  Fusion& backward_;
  IrCloner cloner_;
  SavePolicy policy_;
  std::unordered_set<const Val*> available_;
  std::unordered_set<const Val*> also_saved_;
  std::unordered_set<const Val*> zero_above_diagonal_;
  std::vector<const Val*> saved_;
};

// The exprs on a path from a grad input to a differentiated output.
std::unordered_set<const Expr*> activeExprs(const std::vector<Expr*>& exprs,
                                            const std::vector<const Val*>& grad_inputs,
                                            const std::vector<const Val*>& outputs) {
  std::unordered_set<const Val*> reached(grad_inputs.begin(), grad_inputs.end());
  std::unordered_set<const Expr*> forward_reached;
  for (const Expr* expr : exprs) {
    bool any = std::any_of(expr->inputs().begin(), expr->inputs().end(),
                           [&](const Val* input) { return reached.count(input) != 0; });
    if (any) {
      forward_reached.insert(expr);
      for (const Val* output : expr->outputs()) {
        if (takesGrad(output)) {
          reached.insert(output);
        }
      }
    }
  }
  std::unordered_set<const Val*> needed(outputs.begin(), outputs.end());
  std::unordered_set<const Expr*> active;
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* expr = *it;
    bool feeds = std::any_of(expr->outputs().begin(), expr->outputs().end(),
                             [&](const Val* output) { return needed.count(output) != 0; });
    if (feeds && forward_reached.count(expr) != 0) {
      active.insert(expr);
      for (const Val* input : expr->inputs()) {
        if (takesGrad(input)) {
          needed.insert(input);
        }
      }
    }
  }
  return active;
}

}  // namespace

namespace {

// SavePolicy::kSaveGathered: a GEMM's left operand sharded on an axis the
// GEMM neither contracts nor keeps sharded (the sequence-parallel tokens that
// a column-parallel GEMM reads whole) is gathered by an explicit `set`
// first, as the attention's tokens are: that set's output is then a value
// of the fusion the forward can save, where the resharding passes would
// otherwise gather it inside the lowered program only.
// Returns each (operand, its gather).
std::vector<std::pair<TensorView*, TensorView*>> gatherGemmOperandsExplicitly(Fusion* fusion) {
  std::vector<std::pair<TensorView*, TensorView*>> gathered_operands;
  for (Expr* expr : fusion->exprs()) {
    if (!expr->isA<LinearOp>() && !expr->isA<MatmulOp>()) {
      continue;
    }
    auto* operand = dynamic_cast<TensorView*>(expr->inputs().front());
    if (operand == nullptr || !operand->hasDeviceMesh() || !isResharding(expr)) {
      continue;
    }
    const TensorSharding sharding = shardingOf(operand);
    const int64_t contracted = contractedAxis(expr, operand);
    bool gathered_axis = false;
    bool contracted_sharded = false;
    for (const auto& [parallel_type, axis] : sharding.logical_axes) {
      (axis == contracted ? contracted_sharded : gathered_axis) = true;
    }
    if (!gathered_axis || contracted_sharded) {
      continue;
    }
    TensorView* gathered = shard(set(operand), *sharding.mesh);
    replaceValInExprInputs(expr, operand, gathered);
    gathered_operands.emplace_back(operand, gathered);
  }
  return gathered_operands;
}

// Every tensor of a sharded fusion placed first (as the executor places them
// before segmenting), so that each grad takes a placement: a grad left
// unplaced would be placed by whichever operand propagation meets first,
// which need not be a placement the collectives can reach. And every tensor
// computed from a Stream-split one split too, as the lowering computes them
// (pipelined tails included), so that their grads are split alike and the
// backward's loops mirror the forward's.
void placeForDifferentiation(Fusion* fusion) {
  const bool sharded = std::any_of(
      fusion->statements().begin(), fusion->statements().end(), [](const auto& statement) {
        const auto* tv = dynamic_cast<const TensorView*>(statement.get());
        return tv != nullptr && tv->hasDeviceMesh();
      });
  if (sharded) {
    validateShardings(fusion);
    propagateShardings(fusion);
  }
  propagateStreamAxesThroughPipelinedTails(fusion);
}

std::vector<const Val*> valsAt(const std::vector<Val*>& vals,
                               const std::vector<int64_t>& positions) {
  std::vector<const Val*> chosen;
  for (int64_t i : positions) {
    chosen.push_back(vals[static_cast<size_t>(i)]);
  }
  return chosen;
}

// Walks the forward's exprs backwards from the output grads, summing the
// contributions each tensor receives; each grad gets its tensor's sharding
// and Stream split.
class GradAccumulator {
 public:
  explicit GradAccumulator(BackwardBuilder& builder) : builder_(builder) {}

  void backpropagate(const std::vector<Expr*>& exprs, const std::unordered_set<const Expr*>& active,
                     const std::vector<const Val*>& outputs) {
    const std::unordered_map<const Expr*, Softmax> softmaxes = softmaxesOf(active);
    for (const auto& [div, softmax] : softmaxes) {
      builder_.alsoSave(softmax.p);
      if (isCausalSoftmax(softmax)) {
        builder_.markZeroAboveDiagonal(softmax.p);
      }
    }
    for (const Val* output : outputs) {
      accumulate(output, builder_.addGradInput(output->as<TensorView>()));
    }
    for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
      const Expr* expr = *it;
      if (active.count(expr) == 0) {
        continue;
      }
      auto grad = grads_.find(expr->output(0));
      if (grad == grads_.end()) {
        continue;
      }
      if (auto softmax = softmaxes.find(expr); softmax != softmaxes.end()) {
        accumulate(softmax->second.x, softmaxGrad(softmax->second, grad->second));
        continue;
      }
      std::vector<TensorView*> contributions = vectorJacobianProduct(expr, grad->second, builder_);
      for (size_t i = 0; i < contributions.size(); ++i) {
        if (contributions[i] != nullptr) {
          accumulate(expr->input(i), contributions[i]);
        }
      }
    }
  }

  // The backward's outputs: one grad per input, placed as its input.
  void addGradOutputs(const std::vector<const Val*>& inputs, Fusion& backward) {
    std::unordered_set<const Val*> placed;
    for (const Val* input : inputs) {
      const auto* like = input->as<TensorView>();
      auto found = grads_.find(input);
      TensorView* grad = found == grads_.end() ? builder_.zerosLike(like) : found->second;
      // An output of its own, placed as its input: a backward input (a grad
      // passed straight through), a grad given to two inputs, or one placed
      // as another tensor gets a copy.
      if (grad->isFusionInput() || placed.count(grad) != 0 || !sameSharding(grad, like)) {
        grad = set(grad);
        shardLike(grad, like);
      }
      placed.insert(grad);
      backward.addOutput(grad);
    }
  }

 private:
  void place(TensorView* grad, const TensorView* like) {
    shardLike(grad, like);
    if (!grad->isFusionInput()) {
      streamSplitLike(grad, like, [&](const Val* extent) { return builder_.extent(extent); });
    }
  }

  // dx = p * (g - sum(g * p, axes)), torch's softmax backward.
  TensorView* softmaxGrad(const Softmax& softmax, TensorView* g) {
    TensorView* p = builder_.primal(softmax.p)->as<TensorView>();
    TensorView* dot = sum(mul(g, p), softmax.axes, /*keep_dim=*/true);
    return mul(p, sub(g, dot));
  }

  void accumulate(const Val* val, TensorView* grad) {
    const auto* like = val->as<TensorView>();
    place(grad, like);
    auto [it, inserted] = grads_.try_emplace(val, grad);
    if (!inserted) {
      it->second = add(it->second, grad);
      place(it->second, like);
    }
  }

  BackwardBuilder& builder_;
  std::unordered_map<const Val*, TensorView*> grads_;
};

// The forward: the user's fusion (its names as written; the executor places
// it again) with each saved value that is not one of its outputs already
// added as an output. `placed_copy` maps the user's values to the placed
// fusion the backward was built from. Each GEMM operand gathered explicitly
// there (kSaveGathered) is gathered here too, by a `set` of its own that
// only the forward's output reads: the GEMM still reads the sharded
// operand, so the lowering pipelines the allgather with it, and the saved
// gather is the later whole reader whose rows the pipeline's chunks fill
// (communication_lowering: laterGatherOfPipelinedInput): the tokens cross
// the link once.
void addForward(const Fusion& user_fusion, IrCloner& placed_copy,
                const std::vector<std::pair<TensorView*, TensorView*>>& gathered_operands,
                const std::vector<const Val*>& saved, Differentiated& result) {
  result.forward = std::make_unique<Fusion>();
  IrCloner forward_cloner = copyFusion(user_fusion, *result.forward);
  std::unordered_map<const Val*, Val*> forward_val_of;
  for (const auto& statement : user_fusion.statements()) {
    if (statement->isVal()) {
      const auto* val = static_cast<const Val*>(statement.get());
      forward_val_of[placed_copy.clone(val)] = forward_cloner.clone(val);
    }
  }
  for (const auto& [operand, gathered] : gathered_operands) {
    auto* forward_operand = forward_val_of.at(operand)->as<TensorView>();
    forward_val_of[gathered] = shard(set(forward_operand), *shardingOf(gathered).mesh);
  }
  const std::vector<Val*>& outputs = result.forward->outputs();
  for (const Val* saved_val : saved) {
    Val* forward_val = forward_val_of.at(saved_val);
    auto existing = std::find(outputs.begin(), outputs.end(), forward_val);
    if (existing != outputs.end()) {
      result.saved_outputs.push_back(existing - outputs.begin());
    } else {
      result.saved_outputs.push_back(static_cast<int64_t>(outputs.size()));
      result.forward->addOutput(forward_val);
    }
  }
}

}  // namespace

SavePolicy savePolicyNamed(const std::string& name) {
  if (name == "gemm_outputs") {
    return SavePolicy::kSaveGemmOutputs;
  }
  if (name == "gathered") {
    return SavePolicy::kSaveGathered;
  }
  HOSTIR_CHECK(name == "nothing", "save='", name,
               "' is not a policy; valid: 'gemm_outputs' (the default: keep what matmul and "
               "linear compute, recompute the rest), 'gathered' (also keep each GEMM's gathered "
               "input: no re-gather in the backward) or 'nothing' (recompute everything)");
  return SavePolicy::kRecomputeAll;
}

Differentiated differentiate(const Fusion& user_fusion, const DifferentiateOptions& options) {
  Fusion fusion;
  IrCloner placed_copy = copyFusion(user_fusion, fusion);
  placeForDifferentiation(&fusion);
  std::vector<std::pair<TensorView*, TensorView*>> gathered_operands;
  if (options.save == SavePolicy::kSaveGathered) {
    gathered_operands = gatherGemmOperandsExplicitly(&fusion);
  }
  Differentiated result;
  result.differentiated_outputs = chosenPositions(options.outputs, fusion.outputs(), "output");
  result.grad_inputs = chosenPositions(options.inputs, fusion.inputs(), "input");
  const std::vector<const Val*> grad_input_vals = valsAt(fusion.inputs(), result.grad_inputs);
  const std::vector<const Val*> output_vals =
      valsAt(fusion.outputs(), result.differentiated_outputs);
  const std::vector<Expr*> exprs = fusion.exprs();

  result.backward = std::make_unique<Fusion>();
  FusionGuard guard(result.backward.get());
  BackwardBuilder builder(fusion, *result.backward, options.save);
  for (const auto& [operand, gathered] : gathered_operands) {
    builder.alsoSave(gathered);
  }
  builder.addForwardInputs();
  GradAccumulator grads(builder);
  grads.backpropagate(exprs, activeExprs(exprs, grad_input_vals, output_vals), output_vals);
  grads.addGradOutputs(grad_input_vals, *result.backward);
  addForward(user_fusion, placed_copy, gathered_operands, builder.saved(), result);
  return result;
}

}  // namespace hostir
