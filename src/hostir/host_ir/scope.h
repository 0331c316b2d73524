#pragma once

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace hostir {

class Expr;

// An ordered list of host exprs: the top level of a HostIrContainer or the
// body of a ForLoop. Passes edit programs only through this API. Iterators
// stay valid across every operation except the erasure (or replacement) of
// the expr they point to, and moving an expr to another scope carries its
// iterator along (std::list::splice).
//
// An expr appears at most once in a scope; finding it is O(1). The scope
// holds pointers only: exprs are owned by their container.
class Scope {
 public:
  using Iterator = std::list<Expr*>::iterator;
  using ConstIterator = std::list<Expr*>::const_iterator;

  // `owner` is the expr whose body this is (a ForLoop), or nullptr for a
  // container's top level.
  explicit Scope(Expr* owner = nullptr) : owner_(owner) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  Expr* owner() const {
    return owner_;
  }

  Iterator begin() {
    return exprs_.begin();
  }
  Iterator end() {
    return exprs_.end();
  }
  ConstIterator begin() const {
    return exprs_.begin();
  }
  ConstIterator end() const {
    return exprs_.end();
  }
  size_t size() const {
    return exprs_.size();
  }
  bool empty() const {
    return exprs_.empty();
  }
  Expr* front() const;
  Expr* back() const;
  const std::list<Expr*>& exprs() const {
    return exprs_;
  }
  std::vector<Expr*> toVector() const {
    return {exprs_.begin(), exprs_.end()};
  }

  bool contains(const Expr* expr) const {
    return positions_.count(expr) != 0;
  }
  // Position of `expr`, or end() when it is not in this scope.
  Iterator find(const Expr* expr);
  // Position of `expr`; an error naming it when it is not in this scope.
  Iterator at(const Expr* expr);

  Iterator push_back(Expr* expr);
  Iterator push_front(Expr* expr);
  // Inserts before `position` (which may be end()).
  Iterator insert(Iterator position, Expr* expr);
  Iterator insertBefore(const Expr* reference, Expr* expr);
  Iterator insertAfter(Iterator position, Expr* expr);
  Iterator insertAfter(const Expr* reference, Expr* expr);

  // Removes the expr at `position`; returns the position after it.
  Iterator erase(Iterator position);
  Iterator erase(const Expr* expr);

  // Puts `replacements` (possibly none) where the expr at `position` was;
  // returns the position of the first replacement, or the one after the
  // removed expr when there are none.
  Iterator replace(Iterator position, const std::vector<Expr*>& replacements);
  Iterator replace(const Expr* expr, const std::vector<Expr*>& replacements);

  // Moves [first, last) of this scope before `destination_position` of
  // `destination` (e.g. into a loop body, with destination.end()). The moved
  // exprs keep their order and their iterators. Moving into this same scope
  // is allowed when destination_position is outside the range.
  void moveRange(Iterator first, Iterator last, Scope& destination, Iterator destination_position);
  void moveRangeToBack(Iterator first, Iterator last, Scope& destination) {
    moveRange(first, last, destination, destination.end());
  }

  // Each expr's toString at `indent`, in order.
  std::string toString(int indent = 0) const;

 private:
  void checkInsertable(const Expr* expr) const;
  std::string ownerDescription() const;

  Expr* owner_;
  std::list<Expr*> exprs_;
  std::unordered_map<const Expr*, Iterator> positions_;
};

}  // namespace hostir
