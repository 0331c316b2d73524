#pragma once

#include <map>
#include <string>
#include <vector>

namespace hostir {

class Expr;
class Scalar;

// Makes a printed program readable: while a ScalarNames is alive on this
// thread, each scalar in it prints as its own name (`i45`) instead of its
// whole defining expression, and the program printer writes each definition
// once (`i45 = ( StreamIdx * i30 )`) at the top of the program or of the
// loop whose index it depends on (`scope` nullptr: the top level). Scalars
// of one scope with the same definition share one name and one line.
class ScalarNames {
 public:
  explicit ScalarNames(std::map<const Expr*, std::vector<const Scalar*>> definitions_by_scope);
  ~ScalarNames();
  ScalarNames(const ScalarNames&) = delete;
  ScalarNames& operator=(const ScalarNames&) = delete;

  // "i45", or "" when `scalar` is not named.
  static std::string nameOf(const Scalar* scalar);
  // The definitions to print at the top of `scope` (a host IR loop, or
  // nullptr), operands first; empty when no ScalarNames is active.
  static std::vector<const Scalar*> definitionsIn(const Expr* scope);
  // "i45 = ( StreamIdx * i30 )"
  static std::string definitionLine(const Scalar* scalar);

 private:
  std::map<const Expr*, std::vector<const Scalar*>> definitions_by_scope_;  // printed ones
  std::map<const Scalar*, std::string> names_;
  const ScalarNames* previous_;
};

}  // namespace hostir
