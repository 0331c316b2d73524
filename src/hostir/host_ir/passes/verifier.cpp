#include "hostir/host_ir/passes/verifier.h"

#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/error.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {
namespace {

class HostProgramVerifier {
 public:
  explicit HostProgramVerifier(const HostIrContainer& program) {
    for (const ForLoop* loop : loopsOf(program.topLevel())) {
      all_indices_.insert(loop->index());
    }
    for (const Val* input : program.inputs()) {
      defined_.insert(input);
    }
  }

  void verify(const Scope& scope) {
    for (const Expr* expr : scope) {
      checkIndicesInScope(expr);
      checkDefinedBeforeUse(expr);
      if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
        HOSTIR_CHECK(posted_.count(wait->communication()) > 0, expr->toInlineString(),
                     " comes before ", wait->communication()->toInlineString(),
                     ", which it waits for; a Wait must follow its communication");
      }
      if (expr->isA<Communication>() || expr->isA<P2PCommunication>() ||
          expr->isA<EndCoalescing>()) {
        posted_.insert(expr);
      }
      for (const Val* output : expr->outputs()) {
        defined_.insert(output);
      }
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        in_scope_.push_back(loop->index());
        verify(loop->body());
        in_scope_.pop_back();
      }
    }
  }

 private:
  static std::vector<const ForLoop*> loopsOf(const Scope& scope) {
    std::vector<const ForLoop*> loops;
    for (const Expr* expr : scope) {
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        loops.push_back(loop);
        for (const ForLoop* nested : loopsOf(loop->body())) {
          loops.push_back(nested);
        }
      }
    }
    return loops;
  }

  void checkDefinedBeforeUse(const Expr* expr) {
    if (expr->isA<Communication>() || expr->isA<P2PCommunication>()) {
      return;
    }
    for (const Val* input : expr->inputs()) {
      if (input->vtype() == ValType::TensorView) {
        HOSTIR_CHECK(defined_.count(input) > 0, input->toInlineString(), " is read by\n",
                     expr->toString(1),
                     "before the program computes, allocates or views it; define it earlier");
      }
    }
  }

  void checkIndicesInScope(const Expr* expr) {
    std::vector<const Val*> vals(expr->inputs().begin(), expr->inputs().end());
    vals.insert(vals.end(), expr->outputs().begin(), expr->outputs().end());
    vals.insert(vals.end(), expr->attributeVals().begin(), expr->attributeVals().end());
    const auto* loop = dynamic_cast<const ForLoop*>(expr);
    for (const Val* val : vals) {
      for (const Val* index : indicesOf(val)) {
        const bool own_index = loop != nullptr && index == loop->index();
        bool in_scope = false;
        for (const Val* active : in_scope_) {
          in_scope = in_scope || active == index;
        }
        HOSTIR_CHECK(in_scope || own_index, val->toInlineString(), " in\n", expr->toString(1),
                     "depends on the index of a loop it is not in; a loop's index and what is "
                     "computed from it exist only inside that loop's body");
      }
    }
  }

  // The loop indices `val` depends on: through scalar definitions, and for
  // a tensor, through the extents of its axes.
  const std::set<const Val*>& indicesOf(const Val* val) {
    auto cached = indices_.find(val);
    if (cached != indices_.end()) {
      return cached->second;
    }
    std::set<const Val*> found;
    if (all_indices_.count(val) > 0) {
      found.insert(val);
    } else if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
      for (const auto* domain : {&tv->getLogicalDomain(), &tv->getLoopDomain()}) {
        for (const IterDomain* id : *domain) {
          const std::set<const Val*>& of_extent = indicesOf(id->extent());
          found.insert(of_extent.begin(), of_extent.end());
        }
      }
    } else if (val->vtype() == ValType::Scalar && val->definition() != nullptr) {
      for (const Val* operand : val->definition()->inputs()) {
        const std::set<const Val*>& of_operand = indicesOf(operand);
        found.insert(of_operand.begin(), of_operand.end());
      }
    }
    return indices_.emplace(val, std::move(found)).first->second;
  }

  std::unordered_set<const Val*> all_indices_;
  std::vector<const Val*> in_scope_;
  std::unordered_set<const Val*> defined_;
  std::unordered_set<const Expr*> posted_;
  std::unordered_map<const Val*, std::set<const Val*>> indices_;
};

}  // namespace

void verifyHostProgram(const HostIrContainer& program) {
  HostProgramVerifier(program).verify(program.topLevel());
}

}  // namespace hostir
