#include "hostir/ir/ops.h"

#include <sstream>

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

std::string toString(UnaryOpType type) {
  switch (type) {
    case UnaryOpType::Neg: return "neg";
    case UnaryOpType::Abs: return "abs";
    case UnaryOpType::Exp: return "exp";
    case UnaryOpType::Log: return "log";
    case UnaryOpType::Sqrt: return "sqrt";
    case UnaryOpType::Relu: return "relu";
    case UnaryOpType::Sigmoid: return "sigmoid";
    case UnaryOpType::Tanh: return "tanh";
    case UnaryOpType::Gelu: return "gelu";
    case UnaryOpType::Cast: return "cast";
  }
  HOSTIR_ASSERT(false, "unknown UnaryOpType");
}

std::string toString(BinaryOpType type) {
  switch (type) {
    case BinaryOpType::Add: return "add";
    case BinaryOpType::Sub: return "sub";
    case BinaryOpType::Mul: return "mul";
    case BinaryOpType::Div: return "div";
    case BinaryOpType::Maximum: return "maximum";
    case BinaryOpType::Minimum: return "minimum";
    case BinaryOpType::CeilDiv: return "ceilDiv";
    case BinaryOpType::Mod: return "mod";
  }
  HOSTIR_ASSERT(false, "unknown BinaryOpType");
}

std::string toString(ReductionOpType type) {
  switch (type) {
    case ReductionOpType::Sum: return "sum";
    case ReductionOpType::Max: return "max";
    case ReductionOpType::Min: return "min";
    case ReductionOpType::Product: return "product";
  }
  HOSTIR_ASSERT(false, "unknown ReductionOpType");
}

namespace {
void expectArity(const Expr* expr, size_t min_inputs, size_t max_inputs, size_t outputs,
                 size_t attributes) {
  HOSTIR_ASSERT(expr->inputs().size() >= min_inputs && expr->inputs().size() <= max_inputs &&
                    expr->outputs().size() == outputs && expr->attributes().size() == attributes,
                expr->opName(), " built with the wrong number of operands");
}
}  // namespace

void LoadStoreOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 0);
}

void UnaryOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
}

std::string UnaryOp::displayName() const {
  if (type() == UnaryOpType::Cast) {
    return "cast<" + hostir::toString(out()->dtype()) + ">";
  }
  return hostir::toString(type());
}

void BinaryOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 1);
}

std::string BinaryOp::toInlineString() const {
  std::stringstream ss;
  const char* infix = nullptr;
  switch (type()) {
    case BinaryOpType::Add: infix = "+"; break;
    case BinaryOpType::Sub: infix = "-"; break;
    case BinaryOpType::Mul: infix = "*"; break;
    case BinaryOpType::Div: infix = "/"; break;
    case BinaryOpType::Mod: infix = "%"; break;
    default: break;
  }
  if (infix != nullptr) {
    ss << "( " << lhs()->toInlineString() << " " << infix << " " << rhs()->toInlineString() << " )";
  } else {
    ss << displayName() << "(" << lhs()->toInlineString() << ", " << rhs()->toInlineString() << ")";
  }
  return ss.str();
}

void ReductionOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 2);
}
TensorView* ReductionOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* ReductionOp::out() const {
  return output(0)->as<TensorView>();
}

void BroadcastOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
}
TensorView* BroadcastOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* BroadcastOp::out() const {
  return output(0)->as<TensorView>();
}

void MatmulOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 0);
}
TensorView* MatmulOp::a() const {
  return input(0)->as<TensorView>();
}
TensorView* MatmulOp::b() const {
  return input(1)->as<TensorView>();
}
TensorView* MatmulOp::out() const {
  return output(0)->as<TensorView>();
}

void LinearOp::validateStructure() const {
  expectArity(this, 2, 3, 1, 0);
}
TensorView* LinearOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* LinearOp::weight() const {
  return input(1)->as<TensorView>();
}
TensorView* LinearOp::bias() const {
  return hasBias() ? input(2)->as<TensorView>() : nullptr;
}
TensorView* LinearOp::out() const {
  return output(0)->as<TensorView>();
}

void SelectOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 1);
}
TensorView* SelectOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* SelectOp::out() const {
  return output(0)->as<TensorView>();
}

void SliceOp::validateStructure() const {
  expectArity(this, 3, 3, 1, 1);
}
TensorView* SliceOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* SliceOp::out() const {
  return output(0)->as<TensorView>();
}

void PermuteOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
}
TensorView* PermuteOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* PermuteOp::out() const {
  return output(0)->as<TensorView>();
}

void ReshapeOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 0);
}
TensorView* ReshapeOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* ReshapeOp::out() const {
  return output(0)->as<TensorView>();
}

void FullOp::validateStructure() const {
  HOSTIR_ASSERT(!inputs_.empty() && outputs_.size() == 1 && attributes_.empty());
}
TensorView* FullOp::out() const {
  return output(0)->as<TensorView>();
}

HOSTIR_DEFINE_EXPR(LoadStoreOp)
HOSTIR_DEFINE_EXPR(UnaryOp)
HOSTIR_DEFINE_EXPR(BinaryOp)
HOSTIR_DEFINE_EXPR(ReductionOp)
HOSTIR_DEFINE_EXPR(BroadcastOp)
HOSTIR_DEFINE_EXPR(MatmulOp)
HOSTIR_DEFINE_EXPR(LinearOp)
HOSTIR_DEFINE_EXPR(SelectOp)
HOSTIR_DEFINE_EXPR(SliceOp)
HOSTIR_DEFINE_EXPR(PermuteOp)
HOSTIR_DEFINE_EXPR(ReshapeOp)
HOSTIR_DEFINE_EXPR(FullOp)

}  // namespace hostir
