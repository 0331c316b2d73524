#include "hostir/ir/scalar_names.h"

#include <string>

#include "hostir/ir/scalar.h"

namespace hostir {
namespace {
thread_local const ScalarNames* active = nullptr;
}  // namespace

ScalarNames::ScalarNames(std::map<const Expr*, std::vector<const Scalar*>> definitions_by_scope)
    : definitions_by_scope_(std::move(definitions_by_scope)), previous_(active) {
  for (const auto& [scope, scalars] : definitions_by_scope_) {
    named_.insert(scalars.begin(), scalars.end());
  }
  active = this;
}

ScalarNames::~ScalarNames() {
  active = previous_;
}

bool ScalarNames::isNamed(const Scalar* scalar) {
  return active != nullptr && active->named_.count(scalar) > 0;
}

std::vector<const Scalar*> ScalarNames::definitionsIn(const Expr* scope) {
  if (active == nullptr) {
    return {};
  }
  auto it = active->definitions_by_scope_.find(scope);
  return it == active->definitions_by_scope_.end() ? std::vector<const Scalar*>{} : it->second;
}

std::string ScalarNames::definitionLine(const Scalar* scalar) {
  return scalar->toInlineString() + " = " + scalar->definition()->toInlineString();
}

}  // namespace hostir
