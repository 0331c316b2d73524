#include "hostir/host_ir/passes/loop_host_units.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_domain.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

// Ops a kernel computes from tensors already in memory (no factory: its
// extents would be scalars of the host program; no view: an alias of its
// input must stay one).
bool joinsKernel(const Expr* expr) {
  return expr->isA<UnaryOp>() || expr->isA<BinaryOp>() || expr->isA<WhereOp>() ||
         expr->isA<BroadcastOp>() || expr->isA<ReductionOp>();
}

class LoopUnitBuilder {
 public:
  explicit LoopUnitBuilder(HostIrContainer& container) : container_(container) {}

  void run(Scope& scope) {
    for (Expr* expr : scope.toVector()) {
      if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
        groupBody(loop->body());
        run(loop->body());
      }
    }
  }

 private:
  // The stream pass takes each op's output slice right before the op; a
  // slice of a buffer the run does not compute is a view that can be taken
  // before the whole run, so it does not end the run.
  static bool isHoistableView(const Expr* expr, const std::vector<Expr*>& run) {
    if (!expr->isA<HirAliasSelect>() && !expr->isA<SliceOp>()) {
      return false;
    }
    const Val* source = expr->input(0);
    return std::none_of(run.begin(), run.end(), [source](const Expr* op) {
      return std::find(op->outputs().begin(), op->outputs().end(), source) != op->outputs().end();
    });
  }

  void groupBody(Scope& body) {
    std::vector<Expr*> run;
    std::vector<Expr*> views;
    for (Expr* expr : body.toVector()) {
      if (joinsKernel(expr)) {
        run.push_back(expr);
        continue;
      }
      if (!run.empty() && isHoistableView(expr, run)) {
        views.push_back(expr);
        continue;
      }
      replaceRun(body, run, views);
      run.clear();
      views.clear();
    }
    replaceRun(body, run, views);
  }

  // The values the program reads or writes outside `run`.
  void usesOutside(const std::vector<Expr*>& run, std::unordered_set<const Val*>& read,
                   std::unordered_set<const Val*>& written) const {
    for (const auto& [scope, expr] : allExprs(container_)) {
      if (std::find(run.begin(), run.end(), expr) != run.end()) {
        continue;
      }
      read.insert(expr->inputs().begin(), expr->inputs().end());
      written.insert(expr->outputs().begin(), expr->outputs().end());
    }
    read.insert(container_.outputs().begin(), container_.outputs().end());
  }

  void replaceRun(Scope& body, const std::vector<Expr*>& run, const std::vector<Expr*>& views) {
    if (run.empty()) {
      return;
    }
    for (Expr* view : views) {
      body.erase(view);
      body.insertBefore(run.front(), view);
    }
    std::unordered_set<const Val*> read_outside;
    std::unordered_set<const Val*> written_outside;
    usesOutside(run, read_outside, written_outside);

    std::vector<Val*> inputs;
    std::vector<Val*> outputs;
    std::unordered_set<const Val*> produced;
    for (const Expr* expr : run) {
      for (Val* in : expr->inputs()) {
        const auto* scalar = dynamic_cast<const Scalar*>(in);
        if (produced.count(in) != 0 || (scalar != nullptr && scalar->isConst()) ||
            std::find(inputs.begin(), inputs.end(), in) != inputs.end()) {
          continue;
        }
        inputs.push_back(in);
      }
      for (Val* out : expr->outputs()) {
        produced.insert(out);
      }
    }
    // A result only written outside, by the views that place it in a
    // buffer nobody else reads (its slice of a ring buffer), stays inside
    // the kernel: the views and the buffer go.
    const std::unordered_set<const Expr*> run_exprs(run.begin(), run.end());
    ScopedExprs private_holders;
    for (const Expr* expr : run) {
      for (Val* out : expr->outputs()) {
        if ((read_outside.count(out) == 0 && written_outside.count(out) == 0) ||
            std::find(outputs.begin(), outputs.end(), out) != outputs.end()) {
          continue;
        }
        if (read_outside.count(out) == 0) {
          if (std::optional<ScopedExprs> chain = privateViewChain(container_, out, run_exprs)) {
            private_holders.insert(private_holders.end(), chain->begin(), chain->end());
            continue;
          }
        }
        outputs.push_back(out);
      }
    }
    if (outputs.empty()) {
      return;  // nothing reads what the run computes: leave it as it is
    }

    auto segment = std::make_unique<Fusion>();
    {
      FusionGuard guard(segment.get());
      IrCloner cloner(segment.get());
      std::vector<std::pair<const Val*, Val*>> extents;
      for (Val* in : inputs) {
        segment->addInput(freshInput(in, cloner, extents));
      }
      if (!deriveExtents(run, cloner, extents)) {
        return;  // a size the inputs do not give: the ops stay as they are
      }
      for (const Expr* expr : run) {
        cloner.clone(expr);
      }
      for (Val* out : outputs) {
        segment->addOutput(cloner.clone(out));
      }
    }
    auto* unit = IrBuilder::createInContainer<HostUnit>(&container_, std::move(segment));
    auto* post = IrBuilder::createInContainer<PostOnStream>(&container_, unit, inputs, outputs);
    body.insertBefore(run.front(), post);
    for (const Expr* expr : run) {
      body.erase(expr);
    }
    for (const auto& [scope, holder] : private_holders) {
      if (scope->contains(holder)) {
        scope->erase(holder);
      }
    }
  }

  // A segment input standing for `in`: a tensor with free extents (shared
  // where `in` shares them with an earlier input, constant where constant)
  // and any strides, or a free scalar.
  static Val* freshInput(Val* in, IrCloner& cloner,
                         std::vector<std::pair<const Val*, Val*>>& extents) {
    Fusion* segment = cloner.target();
    Val* fresh = nullptr;
    if (const auto* tv = dynamic_cast<const TensorView*>(in)) {
      std::vector<IterDomain*> ids;
      std::vector<bool> contiguity;
      for (const IterDomain* id : tv->shapeDomain()) {
        Val* extent = freshExtent(id, cloner);
        extents.emplace_back(id->extent(), extent);
        ids.push_back(IrBuilder::createInContainer<IterDomain>(segment, extent, id->iterType()));
        contiguity.push_back(id->isBroadcast());
      }
      auto* domain = IrBuilder::createInContainer<TensorDomain>(segment, ids, contiguity);
      fresh = IrBuilder::createInContainer<TensorView>(segment, domain, tv->dtype());
    } else {
      fresh = IrBuilder::createInContainer<Scalar>(segment, in->dtype());
    }
    cloner.map(in, fresh);
    return fresh;
  }

  // Maps every extent of the run's results to an input's equal extent: the
  // stream pass gives each slice its own (equal) chunk-extent expression,
  // which the segment could not evaluate from its inputs. False when some
  // extent is neither constant nor an input's.
  static bool deriveExtents(const std::vector<Expr*>& run, IrCloner& cloner,
                            const std::vector<std::pair<const Val*, Val*>>& extents) {
    for (const Expr* expr : run) {
      for (const Val* out : expr->outputs()) {
        const auto* tv = dynamic_cast<const TensorView*>(out);
        if (tv == nullptr) {
          return false;
        }
        for (const IterDomain* id : tv->getLogicalDomain()) {
          Val* extent = id->extent();
          const auto* scalar = dynamic_cast<const Scalar*>(extent);
          if (cloner.isCloned(extent) || (scalar != nullptr && scalar->isConst())) {
            continue;
          }
          auto equal = std::find_if(extents.begin(), extents.end(),
                                    [&](const auto& known) { return known.first->sameAs(extent); });
          if (equal == extents.end()) {
            return false;
          }
          cloner.map(extent, equal->second);
        }
      }
    }
    return true;
  }

  static Val* freshExtent(const IterDomain* id, IrCloner& cloner) {
    Val* extent = id->extent();
    if (cloner.isCloned(extent)) {
      return cloner.clone(extent);
    }
    const auto* scalar = dynamic_cast<const Scalar*>(extent);
    Val* fresh = scalar != nullptr && scalar->isConstInt()
                     ? IrBuilder::createInContainer<Scalar>(cloner.target(), scalar->constInt())
                     : IrBuilder::createInContainer<Scalar>(cloner.target(), DataType::Int64);
    cloner.map(extent, fresh);
    return fresh;
  }

  HostIrContainer& container_;
};

}  // namespace

void groupLoopOpsIntoHostUnits(HostIrContainer& container) {
  LoopUnitBuilder(container).run(container.topLevel());
}

}  // namespace hostir
