#pragma once

#include <string>

#include "hostir/host_ir/scope.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

class IterDomain;

// for (index = start; index < stop; index += step) { body }
//
// Layout: inputs {start, stop, step} (read when the loop starts); attribute
// vals {index} or {index, iter_domain}: the loop binds the index rather than
// reading it, and may name the IterDomain it iterates (a Stream axis) so the
// printer and passes can relate the loop to the tensors it chunks. The body
// is a Scope; cloning clones it.
class ForLoop : public Expr {
  HOSTIR_DECLARE_EXPR(ForLoop)
  ForLoop(Fusion* container, Val* index, Val* start, Val* stop, Val* step);
  // Iterates `iter_domain`: start 0, stop its extent, step 1.
  ForLoop(Fusion* container, Val* index, IterDomain* iter_domain);

  Val* index() const {
    return attributeVal(0);
  }
  Val* start() const {
    return input(0);
  }
  Val* stop() const {
    return input(1);
  }
  Val* step() const {
    return input(2);
  }
  // The iterated IterDomain, or nullptr for a loop with explicit bounds.
  IterDomain* iterDomain() const;

  Scope& body() {
    return body_;
  }
  const Scope& body() const {
    return body_;
  }

  // Same bounds and index, and bodies of pairwise sameAs exprs.
  bool sameAs(const Expr* other) const override;
  void cloneExtrasInto(Expr* clone, IrCloner& cloner) const override;
  // "FOR StreamIdx in iStreamIdx2{i0}:" or "FOR i5 from 0 to i0 step 1:",
  // then the body one level deeper.
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  std::string header() const;

  Scope body_{this};
};

}  // namespace hostir
