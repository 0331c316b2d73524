#include "hostir/host_ir/passes/reduce_scatter_of_sums.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

bool reads(const Expr* expr, const Val* value) {
  return std::find(expr->inputs().begin(), expr->inputs().end(), value) != expr->inputs().end();
}

// Whether `expr` holds `value`'s memory rather than computing with it.
bool holdsBuffer(const Expr* expr, const Val* value) {
  if (const auto* allocate = dynamic_cast<const Allocate*>(expr)) {
    return allocate->buffer() == value;
  }
  if (const auto* deallocate = dynamic_cast<const Deallocate*>(expr)) {
    return deallocate->buffer() == value;
  }
  return false;
}

// Whether `reader` is the only expr of the program that reads `value`
// (its allocation and deallocation aside), and `value` is no program output.
bool onlyReader(const ScopedExprs& exprs, const Val* value, const Expr* reader) {
  if (value->isFusionOutput()) {
    return false;
  }
  return std::all_of(exprs.begin(), exprs.end(), [&](const auto& scoped) {
    const Expr* expr = scoped.second;
    return expr == reader || holdsBuffer(expr, value) || !reads(expr, value);
  });
}

// Whether the unit `post` runs computes the sum of its tensor inputs and
// nothing else: a tree of adds reading each input once, one output.
bool isSumOfInputs(const PostOnStream* post) {
  if (!post->variants().empty() || post->outputs().size() != 1 || post->inputs().size() < 2) {
    return false;
  }
  const Fusion& unit = *post->hostUnit()->fusion();
  const std::vector<Expr*> exprs = unit.exprs();
  if (unit.outputs().size() != 1 || exprs.size() + 1 != unit.inputs().size()) {
    return false;
  }
  for (const Expr* expr : exprs) {
    const auto* add = dynamic_cast<const BinaryOp*>(expr);
    if (add == nullptr || add->type() != BinaryOpType::Add || !add->input(0)->isA<TensorView>() ||
        !add->input(1)->isA<TensorView>()) {
      return false;
    }
  }
  return std::all_of(unit.inputs().begin(), unit.inputs().end(), [&](const Val* in) {
    return in->isA<TensorView>() && in->uses().size() == 1 &&
           std::count(in->uses()[0]->inputs().begin(), in->uses()[0]->inputs().end(), in) == 1;
  });
}

bool isSumAllreduceOver(const Communication* communication, const std::vector<int64_t>& team) {
  return communication->type() == CommunicationType::Allreduce &&
         communication->reduceOp() == ReduceOp::Sum && communication->team() == team;
}

// The sum-allreduce over `team` in `scope` that writes `value`, if any.
Communication* allreduceWriting(Scope& scope, const Val* value, const std::vector<int64_t>& team) {
  for (Expr* expr : scope) {
    auto* communication = dynamic_cast<Communication*>(expr);
    if (communication != nullptr && communication->out() == value &&
        isSumAllreduceOver(communication, team)) {
      return communication;
    }
  }
  return nullptr;
}

// A scatter of a sum of allreduced terms (or of one such term), and what
// the rewrite replaces.
struct Match {
  Communication* scatter = nullptr;
  PostOnStream* sum = nullptr;  // null: the scatter reads one allreduced term
  std::vector<Communication*> allreduces;
};

std::optional<Match> matchScatter(const ScopedExprs& exprs, Scope& scope, Communication* scatter) {
  Match match;
  match.scatter = scatter;
  Val* whole = scatter->in();
  if (!onlyReader(exprs, whole, scatter)) {
    return std::nullopt;
  }
  std::vector<Val*> terms{whole};
  if (auto* post = dynamic_cast<PostOnStream*>(whole->definition());
      post != nullptr && scope.contains(post)) {
    if (!isSumOfInputs(post)) {
      return std::nullopt;
    }
    match.sum = post;
    terms = post->inputs();
    std::sort(terms.begin(), terms.end());
    terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  }
  for (Val* term : terms) {
    Communication* allreduce = allreduceWriting(scope, term, scatter->team());
    const Expr* reader = match.sum != nullptr ? static_cast<const Expr*>(match.sum) : scatter;
    if (allreduce == nullptr || !onlyReader(exprs, term, reader)) {
      return std::nullopt;
    }
    match.allreduces.push_back(allreduce);
  }
  return match;
}

// Erases every expr of the program for which `doomed` holds.
template <typename Predicate>
void eraseWhere(HostIrContainer& container, Predicate doomed) {
  for (const auto& [scope, expr] : allExprs(container)) {
    if (scope->contains(expr) && doomed(expr)) {
      scope->erase(expr);
    }
  }
}

int64_t leadingBroadcasts(const TensorView* tv) {
  int64_t count = 0;
  for (const IterDomain* id : tv->shapeDomain()) {
    if (!id->isBroadcast()) {
      break;
    }
    ++count;
  }
  return count;
}

void rewrite(HostIrContainer& container, Scope& scope, const Match& match) {
  Communication* scatter = match.scatter;
  // The scatter cuts its whole along the first axis that is not a leading
  // broadcast (communication_lowering puts the sharded axis there).
  const int64_t axis =
      scatter->hasScatteredAxis() ? scatter->scatteredAxis() : leadingBroadcasts(scatter->in());
  TensorView* partial_sum = match.allreduces.front()->in();
  if (match.sum != nullptr) {
    std::vector<Val*> inputs = match.sum->inputs();
    for (Val*& input : inputs) {
      for (const Communication* allreduce : match.allreduces) {
        if (input == allreduce->out()) {
          input = allreduce->in();
        }
      }
    }
    auto* summed = IrBuilder::createInContainer<PostOnStream>(&container, match.sum->hostUnit(),
                                                              inputs, match.sum->outputs());
    scope.insertBefore(match.sum, summed);
    scope.erase(match.sum);
    partial_sum = scatter->in();
  }
  auto* reduce_scatter = IrBuilder::createInContainer<Communication>(
      &container, partial_sum, scatter->out(),
      CommunicationParams{.type = CommunicationType::ReduceScatter,
                          .team = scatter->team(),
                          .reduce_op = ReduceOp::Sum,
                          .scattered_axis = axis});
  scope.insertBefore(scatter, reduce_scatter);
  scope.erase(scatter);
  for (const auto& [wait_scope, expr] : allExprs(container)) {
    auto* wait = dynamic_cast<Wait*>(expr);
    if (wait != nullptr && wait->communication() == scatter) {
      wait_scope->insertBefore(wait,
                               IrBuilder::createInContainer<Wait>(&container, reduce_scatter));
      wait_scope->erase(wait);
    }
  }
  eraseWhere(container, [&](const Expr* expr) {
    return std::any_of(
        match.allreduces.begin(), match.allreduces.end(), [&](const Communication* allreduce) {
          const auto* wait = dynamic_cast<const Wait*>(expr);
          return expr == allreduce || (wait != nullptr && wait->communication() == allreduce) ||
                 holdsBuffer(expr, allreduce->out());
        });
  });
}

}  // namespace

void reduceScatterSums(HostIrContainer& container) {
  bool changed = true;
  while (changed) {
    changed = false;
    const ScopedExprs exprs = allExprs(container);
    for (const auto& [scope, expr] : exprs) {
      auto* scatter = dynamic_cast<Communication*>(expr);
      if (scatter == nullptr || scatter->type() != CommunicationType::Scatter ||
          !scope->contains(scatter)) {
        continue;
      }
      if (std::optional<Match> match = matchScatter(exprs, *scope, scatter)) {
        rewrite(container, *scope, *match);
        changed = true;
        break;
      }
    }
  }
}

}  // namespace hostir
