#include "hostir/ir/ops.h"

#include <algorithm>
#include <sstream>
#include <variant>

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/node_checks.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

std::string describe(const Val* val) {
  return val == nullptr ? std::string("null") : val->toInlineString();
}

const Scalar* asConstInt(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConstInt() ? scalar : nullptr;
}

bool isIntegerScalar(const Val* val) {
  return val != nullptr && val->vtype() == ValType::Scalar && isIntegralType(val->dtype());
}

// Whether two axes may be the same size; false only when both are known
// constants that differ.
bool mayHaveSameExtent(const IterDomain* a, const IterDomain* b) {
  const Scalar* ca = asConstInt(a->extent());
  const Scalar* cb = asConstInt(b->extent());
  return ca == nullptr || cb == nullptr || ca->constInt() == cb->constInt();
}

// A node kind's operand and attribute counts: a mismatch is a hostir bug
// (the builders and passes make nodes of known kinds).
void expectCounts(const char* op_name, const std::vector<Val*>& inputs, size_t min_inputs,
                  size_t max_inputs, const std::vector<Attribute>& attributes,
                  size_t num_attributes) {
  HOSTIR_ASSERT(inputs.size() >= min_inputs && inputs.size() <= max_inputs &&
                    attributes.size() == num_attributes,
                op_name, " built with the wrong number of operands");
}

void expectArity(const Expr* expr, size_t min_inputs, size_t max_inputs, size_t outputs,
                 size_t attributes) {
  expectCounts(expr->opName(), expr->inputs(), min_inputs, max_inputs, expr->attributes(),
               attributes);
  HOSTIR_ASSERT(expr->outputs().size() == outputs, expr->opName(),
                " built with the wrong number of operands");
}

template <typename T>
const T& attributeOf(const char* op_name, const std::vector<Attribute>& attributes, size_t i) {
  HOSTIR_ASSERT(std::holds_alternative<T>(attributes[i]), op_name, " attribute ", i,
                " has the wrong type");
  return std::get<T>(attributes[i]);
}

template <typename Enum>
Enum enumAttribute(const char* op_name, const std::vector<Attribute>& attributes, size_t i,
                   Enum last) {
  int64_t value = attributeOf<int64_t>(op_name, attributes, i);
  HOSTIR_ASSERT(value >= 0 && value <= static_cast<int64_t>(last), op_name, " attribute ", i,
                " is not an op type: ", value);
  return static_cast<Enum>(value);
}

// Operand `i` of `op` as a tensor.
const TensorView* tensorOperand(const std::string& op, const std::vector<Val*>& inputs, size_t i) {
  const auto* tv = dynamic_cast<const TensorView*>(inputs[i]);
  HOSTIR_CHECK(tv != nullptr, op, ": operand ", i, " must be a tensor, got ", describe(inputs[i]));
  return tv;
}

// An axis of a node's attribute: the builders normalize negative axes, so
// a node's axes are in [0, rank).
void checkNodeAxis(const std::string& call, const char* what, int64_t axis, size_t rank) {
  HOSTIR_CHECK(axis >= 0 && axis < static_cast<int64_t>(rank), call, ": ", what, " ", axis,
               " is out of range for rank ", rank, "; valid: [0, ", rank, ")");
}

// The element count of a tensor of constant extents; -1 when an extent is
// symbolic (or the count does not fit: nothing to compare then).
int64_t constantNumel(const TensorView* tv) {
  int64_t numel = 1;
  for (const IterDomain* id : tv->shapeDomain()) {
    const Scalar* extent = asConstInt(id->extent());
    if (extent == nullptr || __builtin_mul_overflow(numel, extent->constInt(), &numel)) {
      return -1;
    }
  }
  return numel;
}

// Right-aligned, as in PyTorch: sizes match or one is a broadcast axis.
void checkBroadcastable(const std::string& op, const TensorView* lhs, const TensorView* rhs) {
  std::vector<IterDomain*> l = lhs->shapeDomain();
  std::vector<IterDomain*> r = rhs->shapeDomain();
  size_t rank = std::max(l.size(), r.size());
  for (size_t i = 0; i < rank; ++i) {
    IterDomain* a = i + l.size() >= rank ? l[i + l.size() - rank] : nullptr;
    IterDomain* b = i + r.size() >= rank ? r[i + r.size() - rank] : nullptr;
    if (a == nullptr || b == nullptr || a->isBroadcast() || b->isBroadcast()) {
      continue;
    }
    HOSTIR_CHECK(mayHaveSameExtent(a, b), op, ": cannot broadcast ", describe(lhs), " with ",
                 describe(rhs), ": ", describe(a), " and ", describe(b),
                 " differ; sizes must match or one must be a broadcast axis");
  }
}

}  // namespace

void LoadStoreOp::validate(const std::vector<Val*>& inputs,
                           const std::vector<Attribute>& attributes) {
  expectCounts("LoadStoreOp", inputs, 1, 1, attributes, 0);
}

void LoadStoreOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 0);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}

void UnaryOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("UnaryOp", inputs, 1, 1, attributes, 1);
  auto type = enumAttribute("UnaryOp", attributes, 0, UnaryOpType::GeluDerivative);
  HOSTIR_CHECK(inputs[0] != nullptr, hostir::toString(type), ": the operand is null");
  HOSTIR_CHECK(inputs[0]->vtype() == ValType::TensorView || inputs[0]->vtype() == ValType::Scalar,
               hostir::toString(type), ": ", describe(inputs[0]),
               " is neither a tensor nor a scalar");
  const Val* in = inputs[0];
  bool bool_ok = type != UnaryOpType::Neg && type != UnaryOpType::Relu && type != UnaryOpType::Abs;
  HOSTIR_CHECK(bool_ok || in->dtype() != DataType::Bool, hostir::toString(type), "(", describe(in),
               "): a bool tensor is not supported; cast it to a numeric dtype first");
  const bool parts = type == UnaryOpType::Real || type == UnaryOpType::Imag;
  HOSTIR_CHECK(!parts || isComplexType(in->dtype()), hostir::toString(type), "(", describe(in),
               "): needs a complex operand (ComplexFloat or ComplexDouble), got ",
               hostir::toString(in->dtype()));
  // torch has no complex relu, gelu, erf or signbit (they order numbers).
  const bool ordered = type == UnaryOpType::Relu || type == UnaryOpType::Gelu ||
                       type == UnaryOpType::GeluDerivative || type == UnaryOpType::Erf ||
                       type == UnaryOpType::Signbit;
  HOSTIR_CHECK(!ordered || !isComplexType(in->dtype()), hostir::toString(type), "(", describe(in),
               "): not defined for a complex operand (as in torch); apply it to ",
               "real(x) / imag(x)");
}

void UnaryOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}

std::string UnaryOp::displayName() const {
  if (type() == UnaryOpType::Cast) {
    return "cast<" + hostir::toString(out()->dtype()) + ">";
  }
  return hostir::toString(type());
}

void BinaryOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("BinaryOp", inputs, 2, 2, attributes, 1);
  auto type = enumAttribute("BinaryOp", attributes, 0, BinaryOpType::Fmod);
  const std::string op = hostir::toString(type);
  for (const Val* val : inputs) {
    HOSTIR_CHECK(val != nullptr, op, ": an operand is null");
    HOSTIR_CHECK(val->vtype() == ValType::TensorView || val->vtype() == ValType::Scalar, op, ": ",
                 describe(val), " is neither a tensor nor a scalar");
  }
  const auto* lhs = dynamic_cast<const TensorView*>(inputs[0]);
  const auto* rhs = dynamic_cast<const TensorView*>(inputs[1]);
  for (const Val* val : inputs) {
    HOSTIR_CHECK(!isIntegerOnly(type) || isIntegralType(val->dtype()), op, "(", describe(inputs[0]),
                 ", ", describe(inputs[1]), "): ", describe(val), " has dtype ",
                 hostir::toString(val->dtype()), "; ", op, " takes integer operands");
    HOSTIR_CHECK(
        !isBitwiseLogical(type) || isIntegralType(val->dtype()) || val->dtype() == DataType::Bool,
        op, "(", describe(inputs[0]), ", ", describe(inputs[1]), "): ", describe(val),
        " has dtype ", hostir::toString(val->dtype()), "; ", op, " takes integer or Bool operands");
    // Complex numbers have no order (torch refuses these on them too).
    const bool ordered = type == BinaryOpType::Lt || type == BinaryOpType::Le ||
                         type == BinaryOpType::Gt || type == BinaryOpType::Ge ||
                         type == BinaryOpType::Maximum || type == BinaryOpType::Minimum ||
                         type == BinaryOpType::Fmod || type == BinaryOpType::NextAfter;
    HOSTIR_CHECK(!ordered || !isComplexType(val->dtype()), op, "(", describe(inputs[0]), ", ",
                 describe(inputs[1]), "): ", describe(val), " is complex (",
                 hostir::toString(val->dtype()), "); ", op,
                 " needs real operands (complex numbers have no order); compare real(x) or abs(x)");
  }
  bool integer_only = type == BinaryOpType::CeilDiv || type == BinaryOpType::Mod;
  if (lhs == nullptr && rhs == nullptr) {
    HOSTIR_CHECK(
        !integer_only || (isIntegralType(inputs[0]->dtype()) && isIntegralType(inputs[1]->dtype())),
        op, "(", describe(inputs[0]), ", ", describe(inputs[1]), ") needs integer scalars");
    return;
  }
  HOSTIR_CHECK(!integer_only, op, " is defined on integer scalars, not on tensor ",
               describe(lhs != nullptr ? lhs : rhs));
  if (lhs == nullptr || rhs == nullptr) {
    return;
  }
  checkBroadcastable(op, lhs, rhs);
}

void BinaryOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
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

void ReductionOp::validate(const std::vector<Val*>& inputs,
                           const std::vector<Attribute>& attributes) {
  expectCounts("ReductionOp", inputs, 1, 1, attributes, 2);
  auto type = enumAttribute("ReductionOp", attributes, 0, ReductionOpType::Product);
  const auto& axes = attributeOf<std::vector<int64_t>>("ReductionOp", attributes, 1);
  const std::string op = hostir::toString(type);
  const TensorView* in = tensorOperand(op, inputs, 0);
  const std::string call = op + "(" + describe(in) + ")";
  HOSTIR_CHECK(!axes.empty(), call, ": give at least one axis to reduce");
  size_t rank = in->shapeDomain().size();
  for (size_t i = 0; i < axes.size(); ++i) {
    checkNodeAxis(call, "axis", axes[i], rank);
    HOSTIR_CHECK(i == 0 || axes[i - 1] < axes[i], call, ": reduced axes ",
                 hostir::toString(Attribute(axes)),
                 " must be distinct and increasing (a builder sorts them)");
  }
}

void ReductionOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 2);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* ReductionOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* ReductionOp::out() const {
  return output(0)->as<TensorView>();
}

void BroadcastOp::validate(const std::vector<Val*>& inputs,
                           const std::vector<Attribute>& attributes) {
  expectCounts("BroadcastOp", inputs, 1, 1, attributes, 1);
  const auto& flags = attributeOf<std::vector<int64_t>>("BroadcastOp", attributes, 0);
  const TensorView* in = tensorOperand("broadcast", inputs, 0);
  size_t rank = in->shapeDomain().size();
  auto kept = static_cast<size_t>(std::count(flags.begin(), flags.end(), 0));
  HOSTIR_CHECK(kept == rank, "broadcast(", describe(in), "): ", kept,
               " entries of is_broadcast_dim are false but the input has rank ", rank,
               "; exactly one false entry per input axis is valid");
  HOSTIR_CHECK(std::all_of(flags.begin(), flags.end(), [](int64_t f) { return f == 0 || f == 1; }),
               "broadcast(", describe(in), "): is_broadcast flags ",
               hostir::toString(Attribute(flags)), " must each be 0 or 1");
}

void BroadcastOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* BroadcastOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* BroadcastOp::out() const {
  return output(0)->as<TensorView>();
}

std::vector<std::pair<IterDomain*, IterDomain*>> matmulBatchAxes(
    const std::vector<IterDomain*>& a_shape, const std::vector<IterDomain*>& b_shape) {
  std::vector<IterDomain*> a_batch(a_shape.begin(), a_shape.end() - (a_shape.size() >= 2 ? 2 : 1));
  std::vector<IterDomain*> b_batch(b_shape.begin(), b_shape.end() - (b_shape.size() >= 2 ? 2 : 1));
  size_t batch_rank = std::max(a_batch.size(), b_batch.size());
  std::vector<std::pair<IterDomain*, IterDomain*>> pairs;
  for (size_t i = 0; i < batch_rank; ++i) {
    IterDomain* x =
        i + a_batch.size() >= batch_rank ? a_batch[i + a_batch.size() - batch_rank] : nullptr;
    IterDomain* y =
        i + b_batch.size() >= batch_rank ? b_batch[i + b_batch.size() - batch_rank] : nullptr;
    pairs.emplace_back(x, y);
  }
  return pairs;
}

void MatmulOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("MatmulOp", inputs, 2, 2, attributes, 0);
  const TensorView* a = tensorOperand("matmul", inputs, 0);
  const TensorView* b = tensorOperand("matmul", inputs, 1);
  const std::string call = "matmul(" + describe(a) + ", " + describe(b) + ")";
  std::vector<IterDomain*> as = a->shapeDomain();
  std::vector<IterDomain*> bs = b->shapeDomain();
  HOSTIR_CHECK(!as.empty() && !bs.empty(), call, ": both operands need rank >= 1");
  HOSTIR_CHECK(a->dtype() == b->dtype(), call,
               ": operands must have the same dtype; cast one of them");
  IterDomain* ka = as.back();
  IterDomain* kb = bs.size() == 1 ? bs[0] : bs[bs.size() - 2];
  HOSTIR_CHECK(mayHaveSameExtent(ka, kb), call, ": inner sizes differ: ", describe(ka), " vs ",
               describe(kb), "; A's last axis must match B's ",
               bs.size() == 1 ? "only axis" : "second-to-last axis");
  for (const auto& [x, y] : matmulBatchAxes(as, bs)) {
    if (x == nullptr || y == nullptr || x->isBroadcast() || y->isBroadcast()) {
      continue;
    }
    HOSTIR_CHECK(mayHaveSameExtent(x, y), call, ": batch axes ", describe(x), " and ", describe(y),
                 " differ; they must match or one must be a broadcast axis");
  }
}

void MatmulOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 0);
  checkNode(this, [&] { validate(inputs_, attributes_); });
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

void LinearOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("LinearOp", inputs, 2, 3, attributes, 0);
  const TensorView* in = tensorOperand("linear", inputs, 0);
  const TensorView* weight = tensorOperand("linear", inputs, 1);
  const TensorView* bias = inputs.size() == 3 ? tensorOperand("linear", inputs, 2) : nullptr;
  std::vector<IterDomain*> xs = in->shapeDomain();
  std::vector<IterDomain*> ws = weight->shapeDomain();
  std::string call = "linear(" + describe(in) + ", " + describe(weight) +
                     (bias ? ", " + describe(bias) : std::string()) + ")";
  HOSTIR_CHECK(!xs.empty(), call, ": the input needs rank >= 1");
  HOSTIR_CHECK(ws.size() == 1 || ws.size() == 2, call,
               ": the weight must be [N, K] or [K], got rank ", ws.size());
  HOSTIR_CHECK(in->dtype() == weight->dtype() && (!bias || bias->dtype() == in->dtype()), call,
               ": input, weight and bias must have the same dtype");
  HOSTIR_CHECK(mayHaveSameExtent(xs.back(), ws.back()), call,
               ": inner sizes differ: ", describe(xs.back()), " vs ", describe(ws.back()),
               "; the input's last axis must match the weight's last axis");
  if (bias != nullptr) {
    std::vector<IterDomain*> bs = bias->shapeDomain();
    HOSTIR_CHECK(bs.size() <= 1 && (ws.size() == 2 || bs.empty()), call,
                 ": the bias must be [N] (or 0-D) matching the weight's first axis");
    HOSTIR_CHECK(bs.empty() || mayHaveSameExtent(bs[0], ws[0]), call, ": bias ", describe(bs[0]),
                 " does not match the weight's ", describe(ws[0]));
  }
}

void LinearOp::validateStructure() const {
  expectArity(this, 2, 3, 1, 0);
  checkNode(this, [&] { validate(inputs_, attributes_); });
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

void SelectOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("SelectOp", inputs, 2, 2, attributes, 1);
  int64_t dim = attributeOf<int64_t>("SelectOp", attributes, 0);
  const TensorView* in = tensorOperand("select", inputs, 0);
  const Val* index = inputs[1];
  std::vector<IterDomain*> shape = in->shapeDomain();
  checkNodeAxis("select(" + describe(in) + ")", "dim", dim, shape.size());
  HOSTIR_CHECK(isIntegerScalar(index), "select(", describe(in),
               "): the index must be an integer scalar, got ", describe(index));
  const Scalar* constant = asConstInt(index);
  const Scalar* extent = asConstInt(shape[static_cast<size_t>(dim)]->extent());
  HOSTIR_CHECK(
      constant == nullptr ||
          (constant->constInt() >= 0 && (!extent || constant->constInt() < extent->constInt())),
      "select(", describe(in), ", dim=", dim, "): index ", describe(index),
      " is out of range; valid: [0, ", describe(shape[static_cast<size_t>(dim)]->extent()), ")");
}

void SelectOp::validateStructure() const {
  expectArity(this, 2, 2, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* SelectOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* SelectOp::out() const {
  return output(0)->as<TensorView>();
}

void SliceOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("SliceOp", inputs, 3, 3, attributes, 1);
  int64_t dim = attributeOf<int64_t>("SliceOp", attributes, 0);
  const TensorView* in = tensorOperand("slice", inputs, 0);
  const Val* start = inputs[1];
  const Val* stop = inputs[2];
  std::vector<IterDomain*> shape = in->shapeDomain();
  checkNodeAxis("slice(" + describe(in) + ")", "dim", dim, shape.size());
  for (const Val* bound : {start, stop}) {
    HOSTIR_CHECK(isIntegerScalar(bound), "slice(", describe(in),
                 "): bounds must be integer scalars, got ", describe(bound));
  }
  const IterDomain* sliced = shape[static_cast<size_t>(dim)];
  const Scalar* c_start = asConstInt(start);
  const Scalar* c_stop = asConstInt(stop);
  const Scalar* c_extent = asConstInt(sliced->extent());
  bool valid = (!c_start || c_start->constInt() >= 0) &&
               (!c_start || !c_stop || c_start->constInt() <= c_stop->constInt()) &&
               (!c_stop || !c_extent || c_stop->constInt() <= c_extent->constInt());
  HOSTIR_CHECK(valid, "slice(", describe(in), ", dim=", dim, ", start=", describe(start),
               ", stop=", describe(stop),
               "): need 0 <= start <= stop <= ", describe(sliced->extent()));
}

void SliceOp::validateStructure() const {
  expectArity(this, 3, 3, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* SliceOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* SliceOp::out() const {
  return output(0)->as<TensorView>();
}

void PermuteOp::validate(const std::vector<Val*>& inputs,
                         const std::vector<Attribute>& attributes) {
  expectCounts("PermuteOp", inputs, 1, 1, attributes, 1);
  const auto& dims = attributeOf<std::vector<int64_t>>("PermuteOp", attributes, 0);
  const TensorView* in = tensorOperand("permute", inputs, 0);
  const std::string call = "permute(" + describe(in) + ")";
  size_t rank = in->shapeDomain().size();
  HOSTIR_CHECK(dims.size() == rank, call, ": got ", dims.size(), " dims for rank ", rank,
               "; give a permutation of 0..", static_cast<int64_t>(rank) - 1);
  for (int64_t d : dims) {
    checkNodeAxis(call, "dim", d, rank);
  }
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  HOSTIR_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), call,
               ": dims repeat an axis; give a permutation of 0..", static_cast<int64_t>(rank) - 1);
}

void PermuteOp::validateStructure() const {
  expectArity(this, 1, 1, 1, 1);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* PermuteOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* PermuteOp::out() const {
  return output(0)->as<TensorView>();
}

void ReshapeOp::validate(const std::vector<Val*>& inputs,
                         const std::vector<Attribute>& attributes) {
  expectCounts("ReshapeOp", inputs, 1, inputs.size(), attributes, 0);
  tensorOperand("reshape", inputs, 0);
  for (size_t i = 1; i < inputs.size(); ++i) {
    HOSTIR_CHECK(inputs[i] != nullptr && inputs[i]->vtype() == ValType::Scalar &&
                     isIntegralType(inputs[i]->dtype()),
                 "reshape: operand ", i, " must be an integer scalar (a size), got ",
                 describe(inputs[i]));
  }
}

void ReshapeOp::validateStructure() const {
  expectArity(this, 1, inputs_.size(), 1, 0);
  checkNode(this, [&] {
    validate(inputs_, attributes_);
    // The builder checks the sizes a user asks for; a node's output must hold
    // the input's elements where both counts are known.
    const auto* out = dynamic_cast<const TensorView*>(output(0));
    HOSTIR_CHECK(out != nullptr, "reshape: the output must be a tensor, got ", describe(output(0)));
    int64_t in_numel = constantNumel(input(0)->as<TensorView>());
    int64_t out_numel = constantNumel(out);
    HOSTIR_CHECK(in_numel < 0 || out_numel < 0 || in_numel == out_numel, "reshape(",
                 describe(input(0)), "): ", in_numel, " elements cannot be viewed as ",
                 describe(out), " of ", out_numel,
                 " elements; the output must hold the same number of elements");
  });
}
TensorView* ReshapeOp::in() const {
  return input(0)->as<TensorView>();
}
TensorView* ReshapeOp::out() const {
  return output(0)->as<TensorView>();
}

void FullOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("FullOp", inputs, 1, inputs.size(), attributes, 0);
  HOSTIR_CHECK(inputs[0] != nullptr && inputs[0]->vtype() == ValType::Scalar,
               "full: the fill value must be a scalar");
  for (size_t i = 1; i < inputs.size(); ++i) {
    HOSTIR_CHECK(isIntegerScalar(inputs[i]), "full: every size must be an integer scalar");
    const Scalar* c = asConstInt(inputs[i]);
    HOSTIR_CHECK(c == nullptr || c->constInt() >= 0, "full: size ", describe(inputs[i]),
                 " is negative");
  }
}

void FullOp::validateStructure() const {
  expectArity(this, 1, inputs_.size(), 1, 0);
  checkNode(this, [&] {
    validate(inputs_, attributes_);
    const auto* out = dynamic_cast<const TensorView*>(output(0));
    HOSTIR_CHECK(out != nullptr && out->shapeDomain().size() + 1 == inputs_.size(),
                 "full: the output ", describe(output(0)),
                 " must be a tensor with one axis per "
                 "size operand (",
                 inputs_.size() - 1, ")");
  });
}
TensorView* FullOp::out() const {
  return output(0)->as<TensorView>();
}

void WhereOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("WhereOp", inputs, 3, 3, attributes, 0);
  for (const Val* val : inputs) {
    HOSTIR_CHECK(val != nullptr, "where: an operand is null");
  }
  const auto* condition = dynamic_cast<const TensorView*>(inputs[0]);
  HOSTIR_CHECK(condition != nullptr, "where(", describe(inputs[0]), ", ", describe(inputs[1]), ", ",
               describe(inputs[2]), "): the condition must be a Bool tensor, got the scalar ",
               describe(inputs[0]));
  const std::string call = "where(" + describe(inputs[0]) + ", " + describe(inputs[1]) + ", " +
                           describe(inputs[2]) + ")";
  HOSTIR_CHECK(condition->dtype() == DataType::Bool, call, ": the condition ", describe(condition),
               " has dtype ", hostir::toString(condition->dtype()),
               "; it must be Bool (e.g. a comparison such as gt(x, 0))");
  for (size_t i = 1; i < 3; ++i) {
    HOSTIR_CHECK(inputs[i]->vtype() == ValType::TensorView || inputs[i]->vtype() == ValType::Scalar,
                 call, ": ", describe(inputs[i]), " is neither a tensor nor a scalar");
  }
  std::vector<const TensorView*> tensors{condition};
  for (size_t i = 1; i < 3; ++i) {
    if (const auto* tv = dynamic_cast<const TensorView*>(inputs[i])) {
      tensors.push_back(tv);
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    for (size_t j = i + 1; j < tensors.size(); ++j) {
      checkBroadcastable("where", tensors[i], tensors[j]);
    }
  }
}

void WhereOp::validateStructure() const {
  expectArity(this, 3, 3, 1, 0);
  checkNode(this, [&] { validate(inputs_, attributes_); });
}
TensorView* WhereOp::condition() const {
  return input(0)->as<TensorView>();
}
TensorView* WhereOp::out() const {
  return output(0)->as<TensorView>();
}

void IotaOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  expectCounts("IotaOp", inputs, 3, 3, attributes, 0);
  for (const Val* val : inputs) {
    HOSTIR_CHECK(val != nullptr && val->vtype() == ValType::Scalar,
                 "iota: length, start and step must be scalars, got ", describe(val));
  }
  HOSTIR_CHECK(isIntegerScalar(inputs[0]), "iota: the length must be an integer scalar, got ",
               describe(inputs[0]), " of dtype ", hostir::toString(inputs[0]->dtype()));
  const Scalar* length = asConstInt(inputs[0]);
  HOSTIR_CHECK(length == nullptr || length->constInt() >= 0, "iota: the length ",
               describe(inputs[0]), " is negative; valid: >= 0");
  for (size_t i = 1; i < 3; ++i) {
    HOSTIR_CHECK(inputs[i]->dtype() != DataType::Bool, "iota: ", i == 1 ? "start " : "step ",
                 describe(inputs[i]), " is a Bool; give a number");
  }
}

void IotaOp::validateStructure() const {
  expectArity(this, 3, 3, 1, 0);
  checkNode(this, [&] {
    validate(inputs_, attributes_);
    const auto* out = dynamic_cast<const TensorView*>(output(0));
    HOSTIR_CHECK(out != nullptr && out->shapeDomain().size() == 1, "iota: the output ",
                 describe(output(0)), " must be a 1-D tensor");
    HOSTIR_CHECK(out->dtype() != DataType::Bool, "iota: the output ", describe(out),
                 " has dtype Bool; use a numeric dtype");
    HOSTIR_CHECK(!isIntegralType(out->dtype()) ||
                     (isIntegralType(start()->dtype()) && isIntegralType(step()->dtype())),
                 "iota: an integer result (", describe(out), ") needs integer start and step, got ",
                 describe(start()), " and ", describe(step()));
  });
}
TensorView* IotaOp::out() const {
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
HOSTIR_DEFINE_EXPR(WhereOp)
HOSTIR_DEFINE_EXPR(IotaOp)

}  // namespace hostir
