#include "hostir/ir/statement.h"

#include <algorithm>
#include <sstream>

#include "hostir/ir/fusion.h"

namespace hostir {

namespace {
std::map<std::string, ExprMaker>& mutableExprMakers() {
  static std::map<std::string, ExprMaker> makers;
  return makers;
}
}  // namespace

ExprMakerRegistration::ExprMakerRegistration(const char* op_name, ExprMaker maker) {
  mutableExprMakers()[op_name] = maker;
}

const std::map<std::string, ExprMaker>& exprMakers() {
  return mutableExprMakers();
}

std::string toString(const Attribute& attribute) {
  return std::visit(
      [](const auto& value) -> std::string {
        using T = std::decay_t<decltype(value)>;
        std::stringstream ss;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          ss << "{";
          for (size_t i = 0; i < value.size(); ++i) {
            ss << (i ? ", " : "") << value[i];
          }
          ss << "}";
        } else if constexpr (std::is_same_v<T, bool>) {
          ss << (value ? "true" : "false");
        } else {
          ss << value;
        }
        return ss.str();
      },
      attribute);
}

bool Val::isFusionInput() const {
  return container_->isInput(this);
}

bool Val::isFusionOutput() const {
  return container_->isOutput(this);
}

void Val::addUse(Expr* expr) {
  // An expr registers all its uses at once, so a repeat (add(x, x)) can only
  // be the last entry: checking it keeps wiring O(1) for Vals with many
  // uses (a loop's stream, an extent read by every loop).
  if (uses_.empty() || uses_.back() != expr) {
    uses_.push_back(expr);
  }
}

void Val::removeUse(Expr* expr) {
  uses_.erase(std::remove(uses_.begin(), uses_.end(), expr), uses_.end());
}

Expr::Expr(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,
           std::vector<Attribute> attributes, std::vector<Val*> attribute_vals)
    : Statement(container),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      attributes_(std::move(attributes)),
      attribute_vals_(std::move(attribute_vals)) {
  auto check_owned = [&](const std::vector<Val*>& vals) {
    for (Val* val : vals) {
      HOSTIR_ASSERT(val != nullptr, "null operand");
      HOSTIR_ASSERT(val->container() == container, val->toInlineString(),
                    " is owned by another container");
    }
  };
  check_owned(inputs_);
  check_owned(outputs_);
  check_owned(attribute_vals_);
}

void Expr::wire() {
  for (Val* input : inputs_) {
    input->addUse(this);
  }
  if (definesOutputs()) {
    for (Val* output : outputs_) {
      output->setDefinition(this);
    }
  }
}

bool Expr::sameAs(const Expr* other) const {
  if (this == other) {
    return true;
  }
  if (other == nullptr || std::string(opName()) != other->opName() ||
      inputs_.size() != other->inputs_.size() || outputs_.size() != other->outputs_.size() ||
      attribute_vals_.size() != other->attribute_vals_.size() ||
      attributes_ != other->attributes_) {
    return false;
  }
  auto same_vals = [](const std::vector<Val*>& a, const std::vector<Val*>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i]->sameAs(b[i])) {
        return false;
      }
    }
    return true;
  };
  return same_vals(inputs_, other->inputs_) && same_vals(attribute_vals_, other->attribute_vals_);
}

std::string Expr::outputsString() const {
  std::stringstream ss;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    ss << (i ? ", " : "") << outputs_[i]->toInlineString();
  }
  return ss.str();
}

std::string Expr::inputsString() const {
  std::stringstream ss;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    ss << (i ? ", " : "") << inputs_[i]->toInlineString();
  }
  return ss.str();
}

std::string Expr::toInlineString() const {
  std::stringstream ss;
  ss << displayName() << "(" << inputsString() << ")";
  return ss.str();
}

std::string Expr::toString(int indent) const {
  std::stringstream ss;
  std::string pad = indentString(indent);
  ss << pad << outputsString() << "\n" << pad << "   = " << displayName() << "( " << inputsString();
  std::vector<std::string> names = attributeNames();
  for (size_t i = 0; i < attributes_.size() && i < names.size(); ++i) {
    if (!names[i].empty()) {
      ss << ", " << names[i] << " = " << hostir::toString(attributes_[i]);
    }
  }
  ss << " )\n";
  return ss.str();
}

}  // namespace hostir
