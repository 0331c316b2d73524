#include "hostir/ir/cloner.h"

#include <algorithm>
#include <atomic>

#include "hostir/ir/fusion.h"
#include "hostir/ir/fusion_copy_count.h"

namespace hostir {

Val* IrCloner::clone(const Val* val) {
  if (val == nullptr) {
    return nullptr;
  }
  return cloneVal(val, /*with_definition=*/true);
}

Val* IrCloner::cloneVal(const Val* val, bool with_definition) {
  auto it = vals_.find(val);
  if (it != vals_.end()) {
    return it->second;
  }
  Val* result = val->cloneInto(*this);
  vals_[val] = result;
  bool defines_shape = val->vtype() == ValType::Scalar || val->vtype() == ValType::IterDomain;
  if (with_definition && defines_shape && val->definition() != nullptr) {
    clone(val->definition());
  }
  return result;
}

Expr* IrCloner::clone(const Expr* expr) {
  if (expr == nullptr) {
    return nullptr;
  }
  auto it = exprs_.find(expr);
  if (it != exprs_.end()) {
    return it->second;
  }
  std::vector<Val*> outputs;
  for (Val* output : expr->outputs()) {
    // The outputs' definition is the expr being cloned right now.
    outputs.push_back(cloneVal(output, expr->definesOutputs() ? false : true));
  }
  std::vector<Val*> inputs = clone(expr->inputs());
  std::vector<Val*> attribute_vals = clone(expr->attributeVals());
  Expr* result = expr->newObject(target_, inputs, outputs, expr->attributes(), attribute_vals);
  exprs_[expr] = result;
  expr->cloneExtrasInto(result, *this);
  return result;
}

namespace {
std::atomic<int64_t> fusion_copies{0};
}  // namespace

int64_t fusionCopyCount() {
  return fusion_copies.load();
}

IrCloner copyFusion(const Fusion& from, Fusion& to) {
  HOSTIR_ASSERT(to.statements().empty(), "copyFusion needs an empty target");
  ++fusion_copies;
  IrCloner cloner(&to);
  for (const auto& statement : from.statements()) {
    Statement* clone = nullptr;
    if (statement->isVal()) {
      clone = cloner.clone(static_cast<const Val*>(statement.get()));
    } else {
      clone = cloner.clone(static_cast<const Expr*>(statement.get()));
    }
    // Cloning follows operands (a domain brings the loop axes a later split
    // created), so creation order, and with it numbering, can differ from the
    // original: give every clone its original's name so the copy prints the
    // same, and continue numbering after the original's.
    clone->name_ = statement->name_;
  }
  for (size_t i = 0; i < to.val_counters_.size(); ++i) {
    to.val_counters_[i] = std::max(to.val_counters_[i], from.val_counters_[i]);
  }
  to.expr_counter_ = std::max(to.expr_counter_, from.expr_counter_);
  for (Val* input : from.inputs()) {
    to.addInput(cloner.clone(input));
  }
  for (Val* output : from.outputs()) {
    to.addOutput(cloner.clone(output));
  }
  return cloner;
}

}  // namespace hostir
