#include "hostir/ir/resize_ops.h"

#include "hostir/ir/arith.h"
#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/node_checks.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
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

}  // namespace

void PadOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(attributes.empty() && inputs.size() >= 2, "PadOp built with the wrong operands");
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  HOSTIR_CHECK(in != nullptr, "pad: the padded operand must be a tensor, got ",
               describe(inputs[0]));
  const size_t rank = in->shapeDomain().size();
  HOSTIR_CHECK(inputs.size() == 2 + 2 * rank, "pad(", describe(in), "): got ",
               (inputs.size() - 2) / 2, " width pairs for rank ", rank, "; give one per axis");
  HOSTIR_CHECK(inputs[1] != nullptr && inputs[1]->vtype() == ValType::Scalar, "pad(", describe(in),
               "): the pad value must be a scalar, got ", describe(inputs[1]));
  HOSTIR_CHECK(in->dtype() == DataType::Bool || inputs[1]->dtype() != DataType::Bool, "pad(",
               describe(in), "): a Bool pad value for a ", hostir::toString(in->dtype()),
               " tensor; give a number");
  for (size_t i = 2; i < inputs.size(); ++i) {
    const Val* width = inputs[i];
    HOSTIR_CHECK(width != nullptr && width->vtype() == ValType::Scalar &&
                     isIntegralType(width->dtype()) && width->dtype() != DataType::Bool,
                 "pad(", describe(in), "): widths must be integer scalars, got ", describe(width));
    const Scalar* constant = asConstInt(width);
    HOSTIR_CHECK(constant == nullptr || constant->constInt() >= 0, "pad(", describe(in),
                 "): width ", constant ? constant->constInt() : 0, " of axis ", (i - 2) / 2,
                 " is negative; valid: >= 0 (crop with slice)");
  }
}

void PadOp::validateStructure() const {
  checkNode(this, [&] {
    validate(inputs_, attributes_);
    const auto* out = dynamic_cast<const TensorView*>(outputs_.size() == 1 ? output(0) : nullptr);
    HOSTIR_CHECK(out != nullptr && out->rank() == in()->rank() && out->dtype() == in()->dtype(),
                 "pad: the output must be one tensor of the input's rank and dtype");
  });
}

void CatOp::validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(attributes.size() == 1 && std::holds_alternative<int64_t>(attributes[0]),
                "CatOp built with the wrong attributes");
  HOSTIR_CHECK(!inputs.empty(), "cat: needs at least one tensor");
  std::vector<const TensorView*> tensors;
  for (const Val* input : inputs) {
    const auto* tv = dynamic_cast<const TensorView*>(input);
    HOSTIR_CHECK(tv != nullptr, "cat: every operand must be a tensor, got ", describe(input));
    tensors.push_back(tv);
  }
  const TensorView* first = tensors[0];
  const int64_t rank = first->rank();
  const int64_t dim = std::get<int64_t>(attributes[0]);
  HOSTIR_CHECK(dim >= 0 && dim < rank, "cat(", describe(first), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [0, ", rank, ")");
  for (const TensorView* tv : tensors) {
    HOSTIR_CHECK(tv->rank() == rank, "cat: ", describe(tv), " has rank ", tv->rank(), " but ",
                 describe(first), " has rank ", rank, "; every tensor needs the same rank");
    HOSTIR_CHECK(tv->dtype() == first->dtype(), "cat: ", describe(tv), " has dtype ",
                 hostir::toString(tv->dtype()), " but ", describe(first), " has ",
                 hostir::toString(first->dtype()), "; cast them to one dtype first");
    for (int64_t axis = 0; axis < rank; ++axis) {
      const Scalar* a = asConstInt(first->shapeDomain()[static_cast<size_t>(axis)]->extent());
      const Scalar* b = asConstInt(tv->shapeDomain()[static_cast<size_t>(axis)]->extent());
      HOSTIR_CHECK(axis == dim || a == nullptr || b == nullptr || a->constInt() == b->constInt(),
                   "cat(dim=", dim, "): ", describe(tv), " and ", describe(first),
                   " differ on axis ", axis, "; all axes but dim must have equal extents");
    }
  }
}

void CatOp::validateStructure() const {
  checkNode(this, [&] {
    validate(inputs_, attributes_);
    const auto* out = dynamic_cast<const TensorView*>(outputs_.size() == 1 ? output(0) : nullptr);
    const auto* first = input(0)->as<TensorView>();
    HOSTIR_CHECK(out != nullptr && out->rank() == first->rank() && out->dtype() == first->dtype(),
                 "cat: the output must be one tensor of the inputs' rank and dtype");
  });
}

TensorView* pad(TensorView* in, const std::vector<Val*>& widths, Val* value) {
  HOSTIR_CHECK(in != nullptr, "pad: input is null");
  Fusion* container = in->container();
  std::vector<IterDomain*> shape = in->shapeDomain();
  const size_t rank = shape.size();
  HOSTIR_CHECK(widths.size() % 2 == 0 && widths.size() <= 2 * rank, "pad(", describe(in), "): got ",
               widths.size(), " widths; give pairs (left, right) from the last axis backwards, ",
               "at most ", 2 * rank, " for rank ", rank);
  if (value == nullptr) {
    value = in->dtype() == DataType::Bool ? IrBuilder::createInContainer<Scalar>(container, false)
                                          : IrBuilder::createInContainer<Scalar>(container, 0.0);
  }
  auto* zero = IrBuilder::createInContainer<Scalar>(container, int64_t{0});
  std::vector<Val*> inputs{in, value};
  inputs.resize(2 + 2 * rank, zero);
  for (size_t pair = 0; pair < widths.size() / 2; ++pair) {
    size_t axis = rank - 1 - pair;
    inputs[2 + 2 * axis] = widths[2 * pair];
    inputs[3 + 2 * axis] = widths[2 * pair + 1];
  }
  PadOp::validate(inputs, {});
  std::vector<IterDomain*> ids;
  for (size_t axis = 0; axis < rank; ++axis) {
    Val* left = inputs[2 + 2 * axis];
    Val* right = inputs[3 + 2 * axis];
    const Scalar* l = asConstInt(left);
    const Scalar* r = asConstInt(right);
    if (l != nullptr && r != nullptr && l->constInt() == 0 && r->constInt() == 0) {
      ids.push_back(IrBuilder::createInContainer<IterDomain>(container, shape[axis]->extent(),
                                                             shape[axis]->iterType()));
    } else {
      Val* extent = add(add(shape[axis]->extent(), left), right);
      ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
    }
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<PadOp>(container, inputs, std::vector<Val*>{out},
                                      std::vector<Attribute>{});
  return out;
}

TensorView* pad(TensorView* in, const std::vector<int64_t>& widths, Val* value) {
  HOSTIR_CHECK(in != nullptr, "pad: input is null");
  std::vector<Val*> vals;
  for (int64_t width : widths) {
    vals.push_back(IrBuilder::createInContainer<Scalar>(in->container(), width));
  }
  return pad(in, vals, value);
}

TensorView* cat(const std::vector<TensorView*>& inputs, int64_t dim) {
  HOSTIR_CHECK(!inputs.empty(), "cat: needs at least one tensor");
  for (TensorView* tv : inputs) {
    HOSTIR_CHECK(tv != nullptr, "cat: an operand is null");
  }
  const int64_t rank = inputs[0]->rank();
  HOSTIR_CHECK(dim >= -rank && dim < rank, "cat(", describe(inputs[0]), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  const int64_t axis = dim < 0 ? dim + rank : dim;
  std::vector<Val*> operands(inputs.begin(), inputs.end());
  CatOp::validate(operands, {axis});
  Fusion* container = inputs[0]->container();
  std::vector<IterDomain*> ids;
  for (int64_t a = 0; a < rank; ++a) {
    if (a == axis) {
      Val* extent = inputs[0]->shapeDomain()[static_cast<size_t>(a)]->extent();
      for (size_t i = 1; i < inputs.size(); ++i) {
        extent = add(extent, inputs[i]->shapeDomain()[static_cast<size_t>(a)]->extent());
      }
      ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
      continue;
    }
    // The most known extent of the axis: a constant over a symbolic one.
    IterDomain* like = inputs[0]->shapeDomain()[static_cast<size_t>(a)];
    for (TensorView* tv : inputs) {
      IterDomain* id = tv->shapeDomain()[static_cast<size_t>(a)];
      if (asConstInt(like->extent()) == nullptr && asConstInt(id->extent()) != nullptr) {
        like = id;
      }
    }
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, like->extent()));
  }
  TensorView* out = makeTensorOver(container, ids, inputs[0]->dtype());
  IrBuilder::createInContainer<CatOp>(container, operands, std::vector<Val*>{out},
                                      std::vector<Attribute>{axis});
  return out;
}

HOSTIR_DEFINE_EXPR(PadOp)
HOSTIR_DEFINE_EXPR(CatOp)

}  // namespace hostir
