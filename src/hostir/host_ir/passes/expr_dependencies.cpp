#include "hostir/host_ir/passes/expr_dependencies.h"

#include <algorithm>

#include "hostir/host_ir/alias_select.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/scope.h"
#include "hostir/host_ir/stream_ops.h"
#include "hostir/ir/ops.h"

namespace hostir {

ViewBases::ViewBases(const Scope& top) {
  collect(top);
}

void ViewBases::insertWithBases(const Val* val, ValSet& into) const {
  while (val != nullptr && into.insert(val).second) {
    auto base = base_.find(val);
    val = base == base_.end() ? nullptr : base->second;
  }
}

std::vector<Val*> ViewBases::withBases(const std::vector<Val*>& vals) const {
  ValSet all;
  for (const Val* val : vals) {
    insertWithBases(val, all);
  }
  std::vector<Val*> result;
  for (const Val* val : all) {
    result.push_back(const_cast<Val*>(val));
  }
  return result;
}

void ViewBases::collect(const Scope& scope) {
  for (const Expr* expr : scope) {
    if (expr->isA<SliceOp>() || expr->isA<HirAliasSelect>() || expr->isA<ReshapeOp>()) {
      base_[expr->output(0)] = expr->input(0);
    } else if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      collect(loop->body());
    }
  }
}

void collectVals(const Expr* expr, const ViewBases& bases, ValSet& reads, ValSet& writes) {
  auto insert = [&](const std::vector<Val*>& vals, ValSet& into) {
    for (const Val* val : vals) {
      bases.insertWithBases(val, into);
    }
  };
  if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
    const Expr* communication = wait->communication();
    insert(communication->inputs(), reads);
    insert(communication->outputs(), writes);
    return;
  }
  insert(expr->inputs(), reads);
  insert(expr->attributeVals(), reads);
  insert(expr->outputs(), writes);
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    for (const Expr* inner : loop->body()) {
      collectVals(inner, bases, reads, writes);
    }
  }
}

bool intersects(const ValSet& a, const std::vector<Val*>& b) {
  return std::any_of(b.begin(), b.end(), [&](const Val* val) { return a.count(val) != 0; });
}

bool intersects(const ValSet& a, const ValSet& b) {
  return std::any_of(b.begin(), b.end(), [&](const Val* val) { return a.count(val) != 0; });
}

bool isStreamBarrier(const Expr* expr) {
  return expr->isA<SetCurrentStream>() || expr->isA<GetCurrentStream>() ||
         expr->isA<Synchronize>() || expr->isA<StartCoalescing>() || expr->isA<EndCoalescing>() ||
         expr->isA<P2PCommunication>();
}

}  // namespace hostir
