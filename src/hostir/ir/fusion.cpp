#include "hostir/ir/fusion.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <unordered_set>

#include "hostir/ir/options.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {
thread_local Fusion* current_fusion = nullptr;
}  // namespace

FusionGuard::FusionGuard(Fusion* fusion) : previous_(current_fusion) {
  current_fusion = fusion;
}

FusionGuard::~FusionGuard() {
  current_fusion = previous_;
}

Fusion* FusionGuard::getCurFusion() {
  return current_fusion;
}

void Fusion::registerStatement(Statement* statement) {
  statements_.emplace_back(statement);
  if (statement->isVal()) {
    auto* val = static_cast<Val*>(statement);
    statement->name_ = val_counters_.at(static_cast<size_t>(val->vtype()))++;
  } else {
    statement->name_ = expr_counter_++;
  }
}

void Fusion::renameStatement(Statement* statement, int64_t name) {
  HOSTIR_CHECK(statement->container() == this, "renaming a statement of another container");
  HOSTIR_CHECK(name >= 0, "a statement's number must not be negative, got ", name);
  statement->name_ = name;
  int64_t& counter =
      statement->isVal()
          ? val_counters_.at(static_cast<size_t>(static_cast<Val*>(statement)->vtype()))
          : expr_counter_;
  counter = std::max(counter, name + 1);
}

void Fusion::addInput(Val* input) {
  HOSTIR_CHECK(input->container() == this, input->toInlineString(),
               " belongs to another container and cannot be an input here");
  HOSTIR_CHECK(!isInput(input), input->toInlineString(), " is already an input");
  HOSTIR_CHECK(input->definition() == nullptr, input->toInlineString(), " is computed by ",
               input->definition()->opName(),
               "; only a tensor without a definition can be an input");
  if (auto* tv = dynamic_cast<TensorView*>(input)) {
    tv->setMemoryType(MemoryType::Global);
  }
  inputs_.push_back(input);
}

void Fusion::addOutput(Val* output) {
  HOSTIR_CHECK(output->container() == this, output->toInlineString(),
               " belongs to another container and cannot be an output here");
  if (auto* tv = dynamic_cast<TensorView*>(output)) {
    tv->setMemoryType(MemoryType::Global);
  }
  outputs_.push_back(output);
}

bool Fusion::isInput(const Val* val) const {
  return std::find(inputs_.begin(), inputs_.end(), val) != inputs_.end();
}

bool Fusion::isOutput(const Val* val) const {
  return std::find(outputs_.begin(), outputs_.end(), val) != outputs_.end();
}

std::vector<Expr*> Fusion::exprs() const {
  // Iterative post-order DFS from the outputs along operand edges.
  std::vector<Expr*> order;
  std::unordered_set<const Expr*> done;
  std::unordered_set<const Val*> visited_vals;
  struct Frame {
    Expr* expr;
    size_t next_input;
  };
  for (Val* output : outputs_) {
    Expr* root = output->definition();
    if (root == nullptr || done.count(root)) {
      continue;
    }
    std::vector<Frame> stack{{root, 0}};
    std::unordered_set<const Expr*> on_stack{root};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_input < frame.expr->inputs().size()) {
        Val* input = frame.expr->inputs()[frame.next_input++];
        Expr* def = input->definition();
        if (def != nullptr && !done.count(def) && !isInput(input) &&
            input->vtype() != ValType::IterDomain) {
          HOSTIR_ASSERT(!on_stack.count(def), "cycle through ", def->opName());
          on_stack.insert(def);
          stack.push_back({def, 0});
        }
        continue;
      }
      done.insert(frame.expr);
      on_stack.erase(frame.expr);
      order.push_back(frame.expr);
      stack.pop_back();
    }
  }
  return order;
}

std::string Fusion::toString() const {
  std::stringstream ss;
  ss << "%Fusion {\n  inputs:\n";
  for (Val* input : inputs_) {
    ss << "    " << input->toInlineString() << "\n";
  }
  ss << "  outputs:\n";
  for (Val* output : outputs_) {
    ss << "    " << output->toInlineString() << "\n";
  }
  ss << "  exprs:\n";
  for (Expr* expr : exprs()) {
    ss << expr->toString(2);
  }
  ss << "} // %Fusion\n";
  return ss.str();
}

void Fusion::print() const {
  std::cout << toString() << std::flush;
}

void Fusion::printIfDumpEnabled(const std::string& what) const {
  if (isDumpEnabled(what)) {
    std::cout << toString() << std::flush;
  }
}

}  // namespace hostir
