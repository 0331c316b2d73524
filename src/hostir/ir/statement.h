#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/types.h"

namespace hostir {

class Fusion;
class Expr;
class IrCloner;
class OptInDispatch;

// Defined in cloner.cpp; a friend of Statement and Fusion so that a copy
// keeps every statement's name.
IrCloner copyFusion(const Fusion& from, Fusion& to);

enum class ValType { TensorView, TensorDomain, IterDomain, Scalar, Stream };

// Plain data carried by an Expr (an enum, an axis, a flag). Kept in one
// generic list so that sameAs and cloning need no per-node code.
using Attribute = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>>;

std::string toString(const Attribute& attribute);

// Anything owned by a container. Created only through IrBuilder, which
// registers it with the container and gives it a per-kind name number.
class Statement {
 public:
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Fusion* container() const {
    return container_;
  }
  int64_t name() const {
    return name_;
  }
  virtual bool isVal() const = 0;

  // Multi-line form (an Expr with its outputs and inputs).
  virtual std::string toString(int indent = 0) const = 0;
  // Single-token form used when this is an operand.
  virtual std::string toInlineString() const = 0;

 protected:
  explicit Statement(Fusion* container) : container_(container) {}
  friend class Fusion;
  friend IrCloner copyFusion(const Fusion& from, Fusion& to);

  Fusion* container_;
  int64_t name_ = -1;
};

class Val : public Statement {
 public:
  bool isVal() const final {
    return true;
  }
  ValType vtype() const {
    return vtype_;
  }
  DataType dtype() const {
    return dtype_;
  }
  Expr* definition() const {
    return definition_;
  }
  const std::vector<Expr*>& uses() const {
    return uses_;
  }
  bool isFusionInput() const;
  bool isFusionOutput() const;

  // Structural equality: same kind, same constant or same symbol.
  virtual bool sameAs(const Val* other) const {
    return this == other;
  }

  // Creates this Val's counterpart in the cloner's target container.
  virtual Val* cloneInto(IrCloner& cloner) const = 0;

  template <typename T>
  T* as() {
    auto* result = dynamic_cast<T*>(this);
    HOSTIR_ASSERT(result != nullptr, "bad cast of ", toInlineString());
    return result;
  }
  template <typename T>
  const T* as() const {
    auto* result = dynamic_cast<const T*>(this);
    HOSTIR_ASSERT(result != nullptr, "bad cast of ", toInlineString());
    return result;
  }
  template <typename T>
  bool isA() const {
    return dynamic_cast<const T*>(this) != nullptr;
  }

  // Set by Expr construction; exposed for passes that rewire definitions.
  void setDefinition(Expr* expr) {
    definition_ = expr;
  }
  void addUse(Expr* expr);
  void removeUse(Expr* expr);

 protected:
  Val(Fusion* container, ValType vtype, DataType dtype)
      : Statement(container), vtype_(vtype), dtype_(dtype) {}

  ValType vtype_;
  DataType dtype_;
  Expr* definition_ = nullptr;
  std::vector<Expr*> uses_;
};

// An operation. Operands are Vals (inputs), results are Vals (outputs) unless
// a node says otherwise, plain data are attributes, and Vals an expr refers to
// without reading or defining them (a loop index, an alias target) are
// attribute vals.
class Expr : public Statement {
 public:
  bool isVal() const final {
    return false;
  }
  const std::vector<Val*>& inputs() const {
    return inputs_;
  }
  const std::vector<Val*>& outputs() const {
    return outputs_;
  }
  const std::vector<Attribute>& attributes() const {
    return attributes_;
  }
  const std::vector<Val*>& attributeVals() const {
    return attribute_vals_;
  }
  Val* input(size_t i) const {
    HOSTIR_ASSERT(i < inputs_.size(), opName(), " has no input ", i);
    return inputs_[i];
  }
  Val* output(size_t i) const {
    HOSTIR_ASSERT(i < outputs_.size(), opName(), " has no output ", i);
    return outputs_[i];
  }
  Val* attributeVal(size_t i) const {
    HOSTIR_ASSERT(i < attribute_vals_.size(), opName(), " has no attribute val ", i);
    return attribute_vals_[i];
  }
  template <typename T>
  const T& attribute(size_t i) const {
    HOSTIR_ASSERT(i < attributes_.size(), opName(), " has no attribute ", i);
    return std::get<T>(attributes_[i]);
  }

  virtual const char* opName() const = 0;
  // The name printed for the op (e.g. "add" for a BinaryOp); opName by default.
  virtual std::string displayName() const {
    return opName();
  }

  // Same node kind with sameAs operands and equal attributes.
  virtual bool sameAs(const Expr* other) const;

  // Builds a node of the same kind in `container` from given operands; the
  // cloner and passes use it to copy nodes without per-kind code.
  virtual Expr* newObject(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,
                          std::vector<Attribute> attributes,
                          std::vector<Val*> attribute_vals) const = 0;

  // Hook for nodes that own more than operands (a loop body).
  virtual void cloneExtrasInto(Expr* /*clone*/, IrCloner& /*cloner*/) const {}

  virtual void accept(OptInDispatch& dispatcher) const = 0;

  // Whether outputs are defined by this expr. A node that binds its output
  // as a view of another tensor, for example, must not become its definition.
  virtual bool definesOutputs() const {
    return true;
  }

  template <typename T>
  const T* as() const {
    auto* result = dynamic_cast<const T*>(this);
    HOSTIR_ASSERT(result != nullptr, "bad cast of ", opName());
    return result;
  }
  template <typename T>
  T* as() {
    auto* result = dynamic_cast<T*>(this);
    HOSTIR_ASSERT(result != nullptr, "bad cast of ", opName());
    return result;
  }
  template <typename T>
  bool isA() const {
    return dynamic_cast<const T*>(this) != nullptr;
  }

  // Generic form: "outs\n   = OpName( ins, attr=... )".
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 protected:
  Expr(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,
       std::vector<Attribute> attributes, std::vector<Val*> attribute_vals);

  // Registers uses/definitions; called by IrBuilder once the object is fully
  // constructed (so virtual definesOutputs() is honoured).
  void wire();
  friend class IrBuilder;

  // Names printed for each attribute, in order; "" hides an attribute.
  virtual std::vector<std::string> attributeNames() const {
    return {};
  }
  std::string indentString(int indent) const {
    return std::string(2 * indent, ' ');
  }
  std::string outputsString() const;
  std::string inputsString() const;

  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  std::vector<Attribute> attributes_;
  std::vector<Val*> attribute_vals_;
};

// Declares the boilerplate every concrete Expr kind needs. The constructor
// runs the node's validateStructure(), so every way of making a node (a
// builder, IrBuilder::create, newObject in a pass, cloning) is checked: a
// fusion op checks its operands' semantics there (ops.cpp), not only in its
// builder. HOSTIR_DECLARE_EXPR_OF names a base between Expr and the kind
// (tensor_op.h's TensorOp).
#define HOSTIR_DECLARE_EXPR(ClassName) HOSTIR_DECLARE_EXPR_OF(ClassName, Expr)
#define HOSTIR_DECLARE_EXPR_OF(ClassName, Base)                                           \
 public:                                                                                  \
  ClassName(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,       \
            std::vector<Attribute> attributes, std::vector<Val*> attribute_vals = {})     \
      : Base(container, std::move(inputs), std::move(outputs), std::move(attributes),     \
             std::move(attribute_vals)) {                                                 \
    validateStructure();                                                                  \
  }                                                                                       \
  Expr* newObject(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs, \
                  std::vector<Attribute> attributes, std::vector<Val*> attribute_vals)    \
      const override;                                                                     \
  void accept(OptInDispatch& dispatcher) const override;                                  \
  const char* opName() const override {                                                   \
    return #ClassName;                                                                    \
  }                                                                                       \
                                                                                          \
 private:                                                                                 \
  void validateStructure() const;                                                         \
                                                                                          \
 public:

// A kind's generic constructor, registered under its opName by
// HOSTIR_DEFINE_EXPR_NEW_OBJECT: what the host IR text parser makes a node
// of a named kind with, so that a new kind is parsed without an entry of its
// own anywhere.
using ExprMaker = Expr* (*)(Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,
                            std::vector<Attribute> attributes, std::vector<Val*> attribute_vals);
struct ExprMakerRegistration {
  ExprMakerRegistration(const char* op_name, ExprMaker maker);
};
// The registered kinds by opName, in name order.
const std::map<std::string, ExprMaker>& exprMakers();

// Defines newObject (and registers the kind's maker), shared by every
// layer's nodes.
#define HOSTIR_DEFINE_EXPR_NEW_OBJECT(ClassName)                                              \
  namespace {                                                                                 \
  const ExprMakerRegistration ClassName##_maker_registration(                                 \
      #ClassName, [](Fusion* container, std::vector<Val*> inputs, std::vector<Val*> outputs,  \
                     std::vector<Attribute> attributes, std::vector<Val*> attribute_vals) {   \
        return static_cast<Expr*>(IrBuilder::createInContainer<ClassName>(                    \
            container, std::move(inputs), std::move(outputs), std::move(attributes),          \
            std::move(attribute_vals)));                                                      \
      });                                                                                     \
  }                                                                                           \
  Expr* ClassName::newObject(Fusion* container, std::vector<Val*> inputs,                     \
                             std::vector<Val*> outputs, std::vector<Attribute> attributes,    \
                             std::vector<Val*> attribute_vals) const {                        \
    return IrBuilder::createInContainer<ClassName>(container, std::move(inputs),              \
                                                   std::move(outputs), std::move(attributes), \
                                                   std::move(attribute_vals));                \
  }

// Defines the out-of-line boilerplate of a core IR node in its .cpp file.
#define HOSTIR_DEFINE_EXPR(ClassName)                       \
  HOSTIR_DEFINE_EXPR_NEW_OBJECT(ClassName)                  \
  void ClassName::accept(OptInDispatch& dispatcher) const { \
    dispatcher.handle(this);                                \
  }                                                         \
  void OptInDispatch::handle(const ClassName* expr) {       \
    unhandled(expr);                                        \
  }

}  // namespace hostir
