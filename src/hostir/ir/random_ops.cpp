#include "hostir/ir/random_ops.h"

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

std::string describe(const Val* val) {
  return val == nullptr ? std::string("null") : val->toInlineString();
}

bool isIntegerScalar(const Val* val) {
  return val != nullptr && val->vtype() == ValType::Scalar && isIntegralType(val->dtype()) &&
         val->dtype() != DataType::Bool;
}

}  // namespace

std::string toString(RandomKind kind) {
  return kind == RandomKind::Normal ? "normal" : "uniform";
}

void RandomOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(attributes.size() == 2 && std::holds_alternative<int64_t>(attributes[0]) &&
                    std::holds_alternative<int64_t>(attributes[1]) && inputs.size() >= 2,
                "RandomOp built with the wrong operands");
  const bool normal = std::get<int64_t>(attributes[0]) == static_cast<int64_t>(RandomKind::Normal);
  const std::string op = normal ? "normal" : "uniform";
  for (size_t i = 0; i < 2; ++i) {
    HOSTIR_CHECK(inputs[i] != nullptr && inputs[i]->vtype() == ValType::Scalar &&
                     inputs[i]->dtype() != DataType::Bool,
                 op, ": ", normal ? (i == 0 ? "mean" : "std") : (i == 0 ? "low" : "high"),
                 " must be a number scalar, got ", describe(inputs[i]));
  }
  const size_t first_extent = std::get<int64_t>(attributes[1]) != 0 ? 4 : 2;
  HOSTIR_ASSERT(inputs.size() >= first_extent, "RandomOp built without its seed and offset");
  for (size_t i = 2; i < first_extent; ++i) {
    HOSTIR_CHECK(isIntegerScalar(inputs[i]), op, ": rng_", i == 2 ? "seed" : "offset",
                 " must be an integer scalar, got ", describe(inputs[i]));
  }
  for (size_t i = first_extent; i < inputs.size(); ++i) {
    HOSTIR_CHECK(isIntegerScalar(inputs[i]), op, ": every size must be an integer scalar, got ",
                 describe(inputs[i]));
    const auto* size = dynamic_cast<const Scalar*>(inputs[i]);
    HOSTIR_CHECK(!size->isConstInt() || size->constInt() >= 0, op, ": size ", describe(size),
                 " is negative; valid: >= 0");
  }
}

void RandomOp::validateStructure() const {
  validate(inputs_, attributes_);
  const auto* out = dynamic_cast<const TensorView*>(outputs_.size() == 1 ? output(0) : nullptr);
  HOSTIR_CHECK(out != nullptr && isFloatingType(out->dtype()), displayName(), ": the output ",
               describe(outputs_.empty() ? nullptr : output(0)),
               " must be one tensor of a floating dtype");
}
TensorView* RandomOp::out() const {
  return output(0)->as<TensorView>();
}

namespace {

TensorView* randomOp(RandomKind kind, Val* a, Val* b, const std::vector<Val*>& shape,
                     DataType dtype, Val* seed, Val* offset) {
  const std::string op = hostir::toString(kind);
  HOSTIR_CHECK(a != nullptr && b != nullptr, op, ": an operand is null");
  HOSTIR_CHECK((seed == nullptr) == (offset == nullptr), op,
               ": give rng_seed and rng_offset together, or neither (torch's generator)");
  HOSTIR_CHECK(isFloatingType(dtype), op, ": dtype ", hostir::toString(dtype),
               " is not a floating dtype; use Float, Double, Half or BFloat16");
  std::vector<Val*> inputs{a, b};
  if (seed != nullptr) {
    inputs.push_back(seed);
    inputs.push_back(offset);
  }
  inputs.insert(inputs.end(), shape.begin(), shape.end());
  std::vector<Attribute> attributes{static_cast<int64_t>(kind), int64_t{seed != nullptr}};
  RandomOp::validate(inputs, attributes);
  Fusion* container = a->container();
  TensorView* out = makeTensorOfExtents(container, shape, dtype);
  IrBuilder::createInContainer<RandomOp>(container, inputs, std::vector<Val*>{out},
                                         std::move(attributes));
  return out;
}

}  // namespace

TensorView* uniform(Val* low, Val* high, const std::vector<Val*>& shape, DataType dtype, Val* seed,
                    Val* offset) {
  return randomOp(RandomKind::Uniform, low, high, shape, dtype, seed, offset);
}

TensorView* normal(Val* mean, Val* std, const std::vector<Val*>& shape, DataType dtype, Val* seed,
                   Val* offset) {
  return randomOp(RandomKind::Normal, mean, std, shape, dtype, seed, offset);
}

HOSTIR_DEFINE_EXPR(RandomOp)

}  // namespace hostir
