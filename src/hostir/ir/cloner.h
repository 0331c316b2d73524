#pragma once

#include <unordered_map>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class Fusion;

// Copies statements into another container, memoized so shared operands are
// copied once. Cloning a Val also copies what defines its shape (extent
// arithmetic, Split/Merge), but not the op that computes a tensor: copying a
// subgraph makes its boundary tensors definition-free, ready to be inputs.
class IrCloner {
 public:
  explicit IrCloner(Fusion* target) : target_(target) {}

  Fusion* target() const {
    return target_;
  }

  Val* clone(const Val* val);
  Expr* clone(const Expr* expr);

  template <typename T>
  T* clone(const T* statement) {
    if (statement == nullptr) {
      return nullptr;
    }
    if constexpr (std::is_base_of_v<Expr, T>) {
      return static_cast<T*>(clone(static_cast<const Expr*>(statement)));
    } else {
      return static_cast<T*>(clone(static_cast<const Val*>(statement)));
    }
  }

  template <typename T>
  std::vector<T*> clone(const std::vector<T*>& statements) {
    std::vector<T*> result;
    result.reserve(statements.size());
    for (const T* statement : statements) {
      result.push_back(clone(statement));
    }
    return result;
  }

  // Pre-seeds the map, e.g. to make a clone refer to an existing Val.
  void map(const Val* from, Val* to) {
    vals_[from] = to;
  }
  bool isCloned(const Val* val) const {
    return vals_.count(val) != 0;
  }

 private:
  Val* cloneVal(const Val* val, bool with_definition);

  Fusion* target_;
  std::unordered_map<const Val*, Val*> vals_;
  std::unordered_map<const Expr*, Expr*> exprs_;
};

// Copies a whole fusion (all statements, inputs, outputs) into `to`, which
// must be empty; returns the cloner holding the old -> new map.
IrCloner copyFusion(const Fusion& from, Fusion& to);

}  // namespace hostir
