#include "hostir/host_ir/scope.h"

#include <sstream>

#include "hostir/ir/statement.h"

namespace hostir {

std::string Scope::ownerDescription() const {
  return owner_ == nullptr ? std::string("the top-level scope")
                           : "the body of " + owner_->toInlineString();
}

void Scope::checkInsertable(const Expr* expr) const {
  HOSTIR_CHECK(expr != nullptr, "cannot insert a null expr into ", ownerDescription());
  HOSTIR_CHECK(!contains(expr), expr->toInlineString(), " is already in ", ownerDescription(),
               "; an expr appears once in a scope (erase it first to move it)");
  HOSTIR_CHECK(expr != owner_, "cannot insert ", expr->toInlineString(), " into its own body");
}

Expr* Scope::front() const {
  HOSTIR_CHECK(!empty(), ownerDescription(), " is empty: it has no first expr");
  return exprs_.front();
}

Expr* Scope::back() const {
  HOSTIR_CHECK(!empty(), ownerDescription(), " is empty: it has no last expr");
  return exprs_.back();
}

Scope::Iterator Scope::find(const Expr* expr) {
  auto it = positions_.find(expr);
  return it == positions_.end() ? exprs_.end() : it->second;
}

Scope::Iterator Scope::at(const Expr* expr) {
  auto it = positions_.find(expr);
  HOSTIR_CHECK(it != positions_.end(), (expr ? expr->toInlineString() : std::string("a null expr")),
               " is not in ", ownerDescription());
  return it->second;
}

Scope::Iterator Scope::push_back(Expr* expr) {
  return insert(exprs_.end(), expr);
}

Scope::Iterator Scope::push_front(Expr* expr) {
  return insert(exprs_.begin(), expr);
}

Scope::Iterator Scope::insert(Iterator position, Expr* expr) {
  checkInsertable(expr);
  Iterator inserted = exprs_.insert(position, expr);
  positions_.emplace(expr, inserted);
  return inserted;
}

Scope::Iterator Scope::insertBefore(const Expr* reference, Expr* expr) {
  return insert(at(reference), expr);
}

Scope::Iterator Scope::insertAfter(Iterator position, Expr* expr) {
  HOSTIR_CHECK(position != exprs_.end(), "cannot insert ",
               (expr ? expr->toInlineString() : std::string("null expr")), " after the end of ",
               ownerDescription());
  return insert(std::next(position), expr);
}

Scope::Iterator Scope::insertAfter(const Expr* reference, Expr* expr) {
  return insertAfter(at(reference), expr);
}

Scope::Iterator Scope::erase(Iterator position) {
  HOSTIR_CHECK(position != exprs_.end(), "cannot erase the end of ", ownerDescription());
  positions_.erase(*position);
  return exprs_.erase(position);
}

Scope::Iterator Scope::erase(const Expr* expr) {
  return erase(at(expr));
}

Scope::Iterator Scope::replace(Iterator position, const std::vector<Expr*>& replacements) {
  HOSTIR_CHECK(position != exprs_.end(), "cannot replace the end of ", ownerDescription());
  Expr* replaced = *position;
  for (size_t i = 0; i < replacements.size(); ++i) {
    // The replaced expr may reappear among its replacements (e.g. wrapped
    // between new exprs), so it is not "already in" the scope here.
    if (replacements[i] != replaced) {
      checkInsertable(replacements[i]);
    }
    for (size_t j = 0; j < i; ++j) {
      HOSTIR_CHECK(replacements[j] != replacements[i], replacements[i]->toInlineString(),
                   " is listed twice among the replacements of ", replaced->toInlineString());
    }
  }
  Iterator next = erase(position);
  Iterator first = next;
  bool first_set = false;
  for (Expr* replacement : replacements) {
    Iterator inserted = insert(next, replacement);
    if (!first_set) {
      first = inserted;
      first_set = true;
    }
  }
  return first;
}

Scope::Iterator Scope::replace(const Expr* expr, const std::vector<Expr*>& replacements) {
  return replace(at(expr), replacements);
}

void Scope::moveRange(Iterator first, Iterator last, Scope& destination,
                      Iterator destination_position) {
  if (first == last) {
    return;
  }
  bool same_scope = &destination == this;
  for (Iterator it = first; it != last; ++it) {
    HOSTIR_CHECK(it != exprs_.end(), "moveRange: the range does not lie in ", ownerDescription());
    HOSTIR_CHECK(*it != destination.owner_, "cannot move ", (*it)->toInlineString(),
                 " into its own body");
    HOSTIR_CHECK(!same_scope || it != destination_position, "moveRange: the destination lies ",
                 "inside the moved range of ", ownerDescription());
    HOSTIR_CHECK(same_scope || !destination.contains(*it), (*it)->toInlineString(),
                 " is already in ", destination.ownerDescription());
  }
  if (same_scope) {
    exprs_.splice(destination_position, exprs_, first, last);
    return;
  }
  for (Iterator it = first; it != last; ++it) {
    positions_.erase(*it);
  }
  // splice keeps the moved nodes (and so the iterators stored below).
  Iterator after_moved = destination_position;
  destination.exprs_.splice(destination_position, exprs_, first, last);
  for (Iterator it = first; it != after_moved; ++it) {
    destination.positions_.emplace(*it, it);
  }
}

std::string Scope::toString(int indent) const {
  std::stringstream ss;
  for (const Expr* expr : exprs_) {
    ss << expr->toString(indent);
  }
  return ss.str();
}

}  // namespace hostir
