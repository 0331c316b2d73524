#include "hostir/host_ir/for_loop.h"

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scalar_names.h"

namespace hostir {

ForLoop::ForLoop(Fusion* container, Val* index, Val* start, Val* stop, Val* step)
    : ForLoop(container, std::vector<Val*>{start, stop, step}, std::vector<Val*>{}, {},
              std::vector<Val*>{index}) {}

ForLoop::ForLoop(Fusion* container, Val* index, IterDomain* iter_domain)
    : ForLoop(container,
              std::vector<Val*>{IrBuilder::createInContainer<Scalar>(container, int64_t{0}),
                                iter_domain->extent(),
                                IrBuilder::createInContainer<Scalar>(container, int64_t{1})},
              std::vector<Val*>{}, {}, std::vector<Val*>{index, iter_domain}) {}

void ForLoop::validateStructure() const {
  HOSTIR_ASSERT(inputs_.size() == 3 && outputs_.empty() && attributes_.empty() &&
                    (attribute_vals_.size() == 1 || attribute_vals_.size() == 2),
                "ForLoop built with the wrong number of operands");
  Val* index = attribute_vals_[0];
  auto is_integer = [](const Val* val) {
    return val->vtype() == ValType::Scalar && isIntegralType(val->dtype());
  };
  HOSTIR_CHECK(is_integer(index), "FOR loop index must be an integer scalar, got ",
               index->toInlineString());
  auto* constant = dynamic_cast<const Scalar*>(index);
  HOSTIR_CHECK(constant == nullptr || !constant->isConst(), "FOR loop index ",
               index->toInlineString(), " is a constant; give a symbolic scalar (e.g. StreamIdx)");
  const char* bound_names[] = {"start", "stop", "step"};
  for (size_t i = 0; i < 3; ++i) {
    HOSTIR_CHECK(is_integer(inputs_[i]), "FOR ", index->toInlineString(), ": ", bound_names[i],
                 " must be an integer scalar, got ", inputs_[i]->toInlineString());
  }
  if (auto* step = dynamic_cast<const Scalar*>(inputs_[2]); step && step->isConstInt()) {
    HOSTIR_CHECK(step->constInt() > 0, "FOR ", index->toInlineString(), ": step ", step->constInt(),
                 " must be positive");
  }
  if (attribute_vals_.size() == 2) {
    HOSTIR_CHECK(attribute_vals_[1]->vtype() == ValType::IterDomain, "FOR ",
                 index->toInlineString(), " iterates ", attribute_vals_[1]->toInlineString(),
                 ", which is not an IterDomain");
  }
}

IterDomain* ForLoop::iterDomain() const {
  return attribute_vals_.size() == 2 ? attribute_vals_[1]->as<IterDomain>() : nullptr;
}

bool ForLoop::sameAs(const Expr* other) const {
  if (other == this) {
    return true;
  }
  const auto* loop = dynamic_cast<const ForLoop*>(other);
  if (loop == nullptr || !Expr::sameAs(other) || body_.size() != loop->body_.size()) {
    return false;
  }
  auto it = loop->body_.begin();
  for (const Expr* expr : body_) {
    if (!expr->sameAs(*it++)) {
      return false;
    }
  }
  return true;
}

void ForLoop::cloneExtrasInto(Expr* clone, IrCloner& cloner) const {
  Scope& cloned_body = clone->as<ForLoop>()->body_;
  for (const Expr* expr : body_) {
    cloned_body.push_back(cloner.clone(expr));
  }
}

std::string ForLoop::header() const {
  std::string result = "FOR " + index()->toInlineString();
  if (IterDomain* id = iterDomain()) {
    return result + " in " + id->toInlineString() + ":";
  }
  return result + " from " + start()->toInlineString() + " to " + stop()->toInlineString() +
         " step " + step()->toInlineString() + ":";
}

std::string ForLoop::toInlineString() const {
  return header();
}

std::string ForLoop::toString(int indent) const {
  std::string text = indentString(indent) + header() + "\n";
  for (const Scalar* scalar : ScalarNames::definitionsIn(this)) {
    text += indentString(indent + 1) + ScalarNames::definitionLine(scalar) + "\n";
  }
  return text + body_.toString(indent + 1);
}

HOSTIR_DEFINE_HOST_EXPR(ForLoop)

}  // namespace hostir
