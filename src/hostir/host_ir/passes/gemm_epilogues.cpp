#include "hostir/host_ir/passes/gemm_epilogues.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/allocation.h"
#include "hostir/host_ir/gemm_epilogue.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_domain.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

// Host-side metadata a linear may be moved past: views and allocations, which
// write no data.
bool isMetadata(const Expr* expr) {
  return expr->isA<HirAliasSelect>() || expr->isA<SliceOp>() || expr->isA<Allocate>();
}

bool reads(const Expr* expr, const Val* val) {
  return std::find(expr->inputs().begin(), expr->inputs().end(), val) != expr->inputs().end();
}

class GemmEpilogueFolder {
 public:
  explicit GemmEpilogueFolder(HostIrContainer& container) : container_(container) {}

  void run(Scope& scope) {
    for (Expr* expr : scope.toVector()) {
      if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
        run(loop->body());
      } else if (auto* linear = dynamic_cast<LinearOp*>(expr); linear != nullptr) {
        tryFold(scope, linear);
      }
    }
  }

 private:
  // The PostOnStream after `linear` in `scope` that reads its result, with
  // only metadata between them; null when there is none.
  static PostOnStream* epilogueUnitAfter(Scope& scope, const LinearOp* linear) {
    auto it = scope.find(linear);
    for (++it; it != scope.end(); ++it) {
      if (auto* post = dynamic_cast<PostOnStream*>(*it)) {
        return reads(post, linear->out()) ? post : nullptr;
      }
      if (!isMetadata(*it) || reads(*it, linear->out())) {
        return nullptr;
      }
    }
    return nullptr;
  }

  void tryFold(Scope& scope, LinearOp* linear) {
    PostOnStream* post = epilogueUnitAfter(scope, linear);
    if (post == nullptr || !post->variants().empty() ||
        std::count(post->inputs().begin(), post->inputs().end(), linear->out()) != 1) {
      return;
    }
    // The linear's result is then never stored: nothing but `post` may see it.
    const std::optional<ScopedExprs> private_chain =
        privateViewChain(container_, linear->out(), {linear, post});
    if (!private_chain.has_value()) {
      return;
    }
    const Fusion& epilogue = *post->hostUnit()->fusion();
    const size_t result_index =
        static_cast<size_t>(std::find(post->inputs().begin(), post->inputs().end(), linear->out()) -
                            post->inputs().begin());

    auto segment = std::make_unique<Fusion>();
    std::vector<Val*> inputs = linear->inputs();
    {
      FusionGuard guard(segment.get());
      // The linear on fresh operands of the program's shapes and shardings,
      // each extent a free scalar of the segment: extents the program
      // computes (a chunk's rows) cannot be evaluated inside it, and extents
      // the operands share stay shared.
      std::unordered_map<const Val*, Val*> extents;
      std::vector<Val*> operands;
      for (Val* operand : linear->inputs()) {
        operands.push_back(freshLike(operand->as<TensorView>(), segment.get(), extents));
        segment->addInput(operands.back());
      }
      // The result's extents the operands do not share: its rows are the
      // input's, its width the weight's rows on this device.
      const std::vector<IterDomain*> out_shape = linear->out()->shapeDomain();
      const std::vector<IterDomain*> in_shape = operands[0]->as<TensorView>()->shapeDomain();
      for (size_t axis = 0; axis + 1 < out_shape.size() && axis < in_shape.size(); ++axis) {
        extents.try_emplace(out_shape[axis]->extent(), in_shape[axis]->extent());
      }
      if (linear->weight()->rank() == 2) {
        const auto* weight = operands[1]->as<TensorView>();
        const IterDomain* n = weight->shapeDomain()[0];
        extents.try_emplace(out_shape.back()->extent(),
                            isSharded(linear->out()) ? n->extent() : localExtent(weight, n));
      }
      TensorView* out = freshLike(linear->out(), segment.get(), extents);
      linear->newObject(segment.get(), operands, {out}, linear->attributes(), {});

      // The epilogue reads `out` where it read its input for the result.
      const TensorView* result = epilogue.inputs().at(result_index)->as<TensorView>();
      const std::vector<IterDomain*>& result_logical = result->getLogicalDomain();
      const std::vector<IterDomain*>& out_logical = out->getLogicalDomain();
      if (result_logical.size() != out_logical.size()) {
        return;
      }
      IrCloner epilogue_cloner(segment.get());
      epilogue_cloner.map(result, out);
      for (size_t axis = 0; axis < result_logical.size(); ++axis) {
        epilogue_cloner.map(result_logical[axis]->extent(), out_logical[axis]->extent());
      }
      for (size_t i = 0; i < epilogue.inputs().size(); ++i) {
        if (i != result_index) {
          segment->addInput(epilogue_cloner.clone(epilogue.inputs()[i]));
          inputs.push_back(post->inputs()[i]);
        }
      }
      for (const Expr* expr : epilogue.exprs()) {
        epilogue_cloner.clone(expr);
      }
      for (const Val* output : epilogue.outputs()) {
        segment->addOutput(epilogue_cloner.clone(output));
      }
    }
    if (!matchGemmEpilogue(*segment).has_value()) {
      return;
    }
    auto* unit = IrBuilder::createInContainer<HostUnit>(&container_, std::move(segment));
    auto* fused =
        IrBuilder::createInContainer<PostOnStream>(&container_, unit, inputs, post->outputs());
    scope.insertBefore(post, fused);
    scope.erase(post);
    scope.erase(linear);
    // The linear's result is never stored now: what held it goes too.
    for (const auto& [holder_scope, holder] : *private_chain) {
      holder_scope->erase(holder);
    }
  }

  // A tensor of `tv`'s shape (fresh extents, shared through `extents`) and
  // sharding, with no history: a segment input, or the linear's result
  // (whose extents the program gives, as the operands': a sharded weight's
  // result may be a chunk of the local width).
  static TensorView* freshLike(const TensorView* tv, Fusion* segment,
                               std::unordered_map<const Val*, Val*>& extents) {
    std::vector<IterDomain*> ids;
    for (const IterDomain* id : tv->shapeDomain()) {
      Val* extent = id->extent();
      const auto* scalar = dynamic_cast<const Scalar*>(extent);
      auto [known, inserted] = extents.try_emplace(extent, nullptr);
      if (inserted) {
        known->second = scalar != nullptr && scalar->isConstInt()
                            ? IrBuilder::createInContainer<Scalar>(segment, scalar->constInt())
                            : IrBuilder::createInContainer<Scalar>(segment, DataType::Int64);
      }
      ids.push_back(
          IrBuilder::createInContainer<IterDomain>(segment, known->second, id->iterType()));
    }
    auto* domain = IrBuilder::createInContainer<TensorDomain>(segment, ids,
                                                              std::vector<bool>(ids.size(), false));
    auto* fresh = IrBuilder::createInContainer<TensorView>(segment, domain, tv->dtype());
    copySharding(tv, fresh);
    return fresh;
  }

  // Gives `to` (same logical axes) the mesh and DID axes of `from`.
  static void copySharding(const TensorView* from, TensorView* to) {
    const TensorSharding sharding = shardingOf(from);
    if (sharding.mesh.has_value()) {
      to->setDeviceMesh(*sharding.mesh);
    }
    for (const auto& [parallel_type, axis] : sharding.logical_axes) {
      shardLogicalAxis(to, axis, parallel_type, sharding.via_split.at(parallel_type));
    }
  }

  HostIrContainer& container_;
};

}  // namespace

void foldGemmEpilogues(HostIrContainer& container) {
  GemmEpilogueFolder(container).run(container.topLevel());
}

}  // namespace hostir
