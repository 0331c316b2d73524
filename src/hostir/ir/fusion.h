#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class TensorView;

// Owns every Statement created in it; records the program's inputs and
// outputs. HostIrContainer derives from it, so a host program shares the IR.
class Fusion {
 public:
  Fusion() = default;
  virtual ~Fusion() = default;
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;

  void addInput(Val* input);
  void addOutput(Val* output);
  const std::vector<Val*>& inputs() const {
    return inputs_;
  }
  const std::vector<Val*>& outputs() const {
    return outputs_;
  }
  bool isInput(const Val* val) const;
  bool isOutput(const Val* val) const;

  // Exprs that compute the outputs, in a deterministic topological order
  // (IterDomain transforms and extent arithmetic are not listed: they belong
  // to tensor domains, not to the dataflow). A HostIrContainer returns its
  // top-level program order instead.
  virtual std::vector<Expr*> exprs() const;

  // Every statement, in creation order.
  const std::vector<std::unique_ptr<Statement>>& statements() const {
    return statements_;
  }

  virtual std::string toString() const;
  void print() const;

  // Prints toString() when HOSTIR_DUMP names `what` (e.g. "fusion").
  void printIfDumpEnabled(const std::string& what) const;

  // Registration, used by IrBuilder only.
  void registerStatement(Statement* statement);
  // Gives `statement` (of this container) the number `name`, and numbers
  // later statements of its kind after it: the host IR text parser restores
  // the numbers a program printed with (it checks that no two statements
  // of a kind share one).
  void renameStatement(Statement* statement, int64_t name);

 private:
  friend IrCloner copyFusion(const Fusion& from, Fusion& to);

 protected:
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;

 private:
  std::vector<std::unique_ptr<Statement>> statements_;
  std::array<int64_t, 5> val_counters_{};
  int64_t expr_counter_ = 0;
};

// Makes a container current for the IrBuilder in this scope (thread-local,
// restored on exit).
class FusionGuard {
 public:
  explicit FusionGuard(Fusion* fusion);
  ~FusionGuard();
  FusionGuard(const FusionGuard&) = delete;
  FusionGuard& operator=(const FusionGuard&) = delete;

  static Fusion* getCurFusion();

 private:
  Fusion* previous_;
};

class IrBuilder {
 public:
  template <typename T, typename... Args>
  static T* create(Args&&... args) {
    Fusion* fusion = FusionGuard::getCurFusion();
    HOSTIR_CHECK(fusion != nullptr,
                 "no current Fusion: create IR inside `FusionGuard fg(&fusion);`");
    return createInContainer<T>(fusion, std::forward<Args>(args)...);
  }

  template <typename T, typename... Args>
  static T* createInContainer(Fusion* fusion, Args&&... args) {
    auto* statement = new T(fusion, std::forward<Args>(args)...);
    fusion->registerStatement(statement);
    if constexpr (std::is_base_of_v<Expr, T>) {
      statement->wire();
    }
    return statement;
  }
};

}  // namespace hostir
