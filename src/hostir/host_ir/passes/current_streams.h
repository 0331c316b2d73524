#pragma once

#include <unordered_map>

namespace hostir {

class Expr;
class Scope;

// Which stream is current before each top-level expr of a host program, as
// far as the program's text says: the caller's at the start; a
// GetCurrentStream names the current one; a SetCurrentStream makes its
// stream current (the one a GetCurrentStream named, if it did); a loop
// whose body ends on the stream it started on (a pipeline's loop that ends
// each iteration back on the caller's stream) leaves that one current, and
// any other (a fork loop, which leaves a worker's) leaves it unknown: it may
// run no iteration. What the scheduling passes ask before they
// move a Wait past stream switches: the Wait blocks the stream current
// where it is, and may only land where the same one is.
class CurrentStreams {
 public:
  // The stream current at a position, compared by identity: the same value
  // at two positions means the same stream; nullptr means not known.
  using Id = const void*;

  explicit CurrentStreams(const Scope& top);

  // Before `expr`, a top-level expr of `top`.
  Id before(const Expr* expr) const;
  // After the last top-level expr.
  Id atEnd() const {
    return at_end_;
  }

 private:
  std::unordered_map<const Expr*, Id> before_;
  Id at_end_ = nullptr;
};

}  // namespace hostir
