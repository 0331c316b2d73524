#include "hostir/ir/scalar_names.h"

#include <string>

#include "hostir/ir/scalar.h"
#include "hostir/ir/types.h"

namespace hostir {
namespace {
thread_local const ScalarNames* active = nullptr;
}  // namespace

ScalarNames::ScalarNames(std::map<const Expr*, std::vector<const Scalar*>> definitions_by_scope)
    : previous_(active) {
  active = this;
  for (auto& [scope, scalars] : definitions_by_scope) {
    // Operands come first, so a definition's text already uses the names
    // (shared ones included) of its operands.
    std::map<std::string, std::string> name_of_definition;
    std::vector<const Scalar*>& printed = definitions_by_scope_[scope];
    for (const Scalar* scalar : scalars) {
      const std::string definition = scalar->definition()->toInlineString();
      auto [it, first] = name_of_definition.emplace(definition, "");
      if (first) {
        // Built by appends: GCC 12 warns falsely (-Wrestrict) on literal + string.
        it->second.assign(1, isComplexType(scalar->dtype())    ? 'c'
                             : isFloatingType(scalar->dtype()) ? 'd'
                                                               : 'i');
        it->second.append(std::to_string(scalar->name()));
        printed.push_back(scalar);
      }
      names_[scalar] = it->second;
    }
  }
}

ScalarNames::~ScalarNames() {
  active = previous_;
}

std::string ScalarNames::nameOf(const Scalar* scalar) {
  if (active == nullptr) {
    return "";
  }
  auto it = active->names_.find(scalar);
  return it == active->names_.end() ? "" : it->second;
}

std::vector<const Scalar*> ScalarNames::definitionsIn(const Expr* scope) {
  if (active == nullptr) {
    return {};
  }
  auto it = active->definitions_by_scope_.find(scope);
  return it == active->definitions_by_scope_.end() ? std::vector<const Scalar*>{} : it->second;
}

std::string ScalarNames::definitionLine(const Scalar* scalar) {
  return nameOf(scalar) + " = " + scalar->definition()->toInlineString();
}

}  // namespace hostir
