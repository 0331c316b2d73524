#pragma once

#include <utility>
#include <vector>

namespace hostir {

class Expr;
class HostIrContainer;
class Scope;

// Every expr of the host program in program order, loop bodies included
// (a loop before its body), each with the scope that holds it: what a pass
// walks to find every reader of a value or to edit an expr where it is.
std::vector<std::pair<Scope*, Expr*>> allExprs(HostIrContainer& container);

}  // namespace hostir
