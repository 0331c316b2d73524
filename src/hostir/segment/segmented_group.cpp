#include "hostir/segment/segmented_group.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/segment/segmented_fusion.h"

namespace hostir {

namespace {

bool isConstScalar(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConst();
}

std::string groupIds(const std::vector<SegmentedGroup*>& groups) {
  if (groups.empty()) {
    return "none";
  }
  std::stringstream ss;
  for (size_t i = 0; i < groups.size(); ++i) {
    ss << (i ? ", " : "") << groups[i]->id();
  }
  return ss.str();
}

}  // namespace

std::vector<Expr*> SegmentedGroup::forwardedExprs() const {
  std::vector<Expr*> result;
  std::copy_if(exprs_.begin(), exprs_.end(), std::back_inserter(result),
               [&](const Expr* expr) { return owner_->isForwarded(expr); });
  return result;
}

bool SegmentedGroup::isForwarded(const Expr* expr) const {
  return owner_->isForwarded(expr) && std::find(exprs_.begin(), exprs_.end(), expr) != exprs_.end();
}

const std::vector<Val*>& SegmentedGroup::inputs() const {
  computeBoundary();
  return inputs_;
}

const std::vector<Val*>& SegmentedGroup::outputs() const {
  computeBoundary();
  return outputs_;
}

void SegmentedGroup::computeBoundary() const {
  if (boundary_valid_) {
    return;
  }
  const SegmentedFusion& segmented = *owner_;
  std::unordered_set<const Expr*> members(exprs_.begin(), exprs_.end());

  // Candidates in order of first use; scalars are filtered afterwards, once
  // the tensor inputs whose extents bind them are known.
  std::vector<Val*> candidates;
  std::unordered_set<const Val*> seen;
  std::unordered_set<const Val*> extents_of_tensor_inputs;
  auto add_scalar_leaves = [&](Val* root) {
    // Scalar arithmetic is cloned along with its user, so only its leaves
    // (fusion inputs and free symbols) have to come from outside.
    std::vector<Val*> stack{root};
    while (!stack.empty()) {
      Val* scalar = stack.back();
      stack.pop_back();
      if (!seen.insert(scalar).second || isConstScalar(scalar)) {
        continue;
      }
      if (segmented.isFusionInput(scalar) || scalar->definition() == nullptr) {
        candidates.push_back(scalar);
        continue;
      }
      const std::vector<Val*>& operands = scalar->definition()->inputs();
      for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
        if ((*it)->vtype() == ValType::Scalar) {
          stack.push_back(*it);
        }
      }
    }
  };
  for (const Expr* expr : exprs_) {
    for (Val* in : expr->inputs()) {
      if (in->vtype() == ValType::Scalar) {
        add_scalar_leaves(in);
        continue;
      }
      Expr* definition = in->definition();
      bool from_outside =
          definition == nullptr || segmented.isFusionInput(in) || members.count(definition) == 0;
      if (from_outside && seen.insert(in).second) {
        candidates.push_back(in);
        if (auto* tv = dynamic_cast<TensorView*>(in)) {
          for (IterDomain* id : tv->getLogicalDomain()) {
            extents_of_tensor_inputs.insert(id->extent());
          }
        }
      }
    }
  }
  inputs_.clear();
  for (Val* candidate : candidates) {
    bool bound_by_a_tensor_input = candidate->vtype() == ValType::Scalar &&
                                   !segmented.isFusionInput(candidate) &&
                                   extents_of_tensor_inputs.count(candidate) != 0;
    if (!bound_by_a_tensor_input) {
      inputs_.push_back(candidate);
    }
  }

  outputs_.clear();
  std::unordered_set<const Val*> seen_outputs;
  for (const Expr* expr : exprs_) {
    // Each reader of a forwarded value recomputes it.
    if (owner_->forwarding_resolved_ && owner_->isForwarded(expr)) {
      continue;
    }
    for (Val* out : expr->outputs()) {
      bool read_elsewhere = std::any_of(out->uses().begin(), out->uses().end(), [&](Expr* use) {
        return owner_->isDataflowExpr(use) && members.count(use) == 0;
      });
      if ((segmented.isFusionOutput(out) || read_elsewhere) && seen_outputs.insert(out).second) {
        outputs_.push_back(out);
      }
    }
  }
  boundary_valid_ = true;
}

std::string SegmentedGroup::toString(int indent) const {
  std::string pad(2 * indent, ' ');
  std::stringstream ss;
  ss << pad << "group " << id_ << " (producers: " << groupIds(producers_)
     << "; consumers: " << groupIds(consumers_) << ") {\n";
  ss << pad << "  inputs:\n";
  for (const Val* in : inputs()) {
    ss << pad << "    " << in->toInlineString() << "\n";
  }
  ss << pad << "  outputs:\n";
  for (const Val* out : outputs()) {
    ss << pad << "    " << out->toInlineString() << "\n";
  }
  ss << pad << "  exprs:\n";
  for (const Expr* expr : exprs_) {
    if (owner_->isForwarded(expr)) {
      ss << pad << "    // forwarded: recomputed in each group that uses it\n";
    }
    ss << expr->toString(indent + 2);
  }
  ss << pad << "} // group " << id_ << "\n";
  return ss.str();
}

}  // namespace hostir
