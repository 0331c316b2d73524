#include "hostir/ir/scatter_ops.h"

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

std::string describe(const Val* val) {
  return val == nullptr ? std::string("null") : val->toInlineString();
}

// A tensor src has the input's rank and dtype (as torch's scatters need).
void checkSrcTensor(const std::string& call, const TensorView* in, const TensorView* src) {
  HOSTIR_CHECK(src->rank() == in->rank(), call, ": src has rank ", src->rank(),
               " but the input has rank ", in->rank(), "; give src the same rank");
  HOSTIR_CHECK(src->dtype() == in->dtype(), call, ": src has dtype ",
               hostir::toString(src->dtype()), ", the input ", hostir::toString(in->dtype()),
               "; cast src first (as torch needs)");
}

// dim counted from the end when negative, for the builder `op`.
int64_t normalizedDim(const std::string& op, const TensorView* in, int64_t dim) {
  const int64_t rank = in->rank();
  HOSTIR_CHECK(dim >= -rank && dim < rank, op, "(", describe(in), "): dim ", dim,
               " is out of range for rank ", rank, "; valid: [", -rank, ", ", rank, ")");
  return dim < 0 ? dim + rank : dim;
}

// A node of kind Op on `inputs` (the first one the input, validated before)
// whose output is shaped and typed as that input.
template <typename Op>
TensorView* makeShapedAsInput(std::vector<Val*> inputs, std::vector<Attribute> attributes) {
  TensorView* in = inputs[0]->as<TensorView>();
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  for (IterDomain* id : in->shapeDomain()) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, id->extent()));
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<Op>(container, std::move(inputs), std::vector<Val*>{out},
                                   std::move(attributes));
  return out;
}

}  // namespace

void ScatterOp::validate(const std::vector<Val*>& inputs,
                         const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(inputs.size() == 3 && attributes.size() == 1 &&
                    std::holds_alternative<int64_t>(attributes[0]),
                "ScatterOp built with the wrong operands");
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  const auto* index = dynamic_cast<const TensorView*>(inputs[1]);
  const Val* src = inputs[2];
  const std::string call =
      "scatter(" + describe(inputs[0]) + ", " + describe(inputs[1]) + ", " + describe(src) + ")";
  HOSTIR_CHECK(in != nullptr && index != nullptr, call,
               ": the input and the index must be tensors");
  HOSTIR_CHECK(
      src != nullptr && (src->vtype() == ValType::TensorView || src->vtype() == ValType::Scalar),
      call, ": src must be a tensor or a scalar");
  const int64_t dim = std::get<int64_t>(attributes[0]);
  checkDimAndIndexDtype(call, in, index, dim);
  HOSTIR_CHECK(index->rank() == in->rank(), call, ": the index has rank ", index->rank(),
               " but the input has rank ", in->rank(), "; scatter needs the same rank");
  if (const auto* src_tv = dynamic_cast<const TensorView*>(src)) {
    checkSrcTensor(call, in, src_tv);
  }
}

TensorView* scatter(TensorView* in, TensorView* index, Val* src, int64_t dim) {
  HOSTIR_CHECK(in != nullptr && index != nullptr && src != nullptr, "scatter: an operand is null");
  std::vector<Attribute> attributes{normalizedDim("scatter", in, dim)};
  ScatterOp::validate({in, index, src}, attributes);
  return makeShapedAsInput<ScatterOp>({in, index, src}, std::move(attributes));
}

HOSTIR_DEFINE_TENSOR_OP(ScatterOp)

std::string toString(ScatterAddKind kind) {
  return kind == ScatterAddKind::IndexAdd ? "index_add" : "scatter_add";
}

namespace {

// The extents of src an index allows, where both are known: scatter_add's
// index is no longer than src anywhere nor than in off dim; index_add's src
// is in with dim's extent the number of indices.
void checkScatterAddExtents(ScatterAddKind kind, const TensorView* in, const TensorView* index,
                            const TensorView* src, int64_t dim, const std::string& call) {
  const std::vector<IterDomain*> in_shape = in->shapeDomain();
  const std::vector<IterDomain*> src_shape = src->shapeDomain();
  const std::vector<IterDomain*> index_shape = index->shapeDomain();
  for (size_t axis = 0; axis < in_shape.size(); ++axis) {
    const int64_t n = constExtentOr(in_shape[axis]);
    const int64_t s = constExtentOr(src_shape[axis]);
    const bool on_dim = static_cast<int64_t>(axis) == dim;
    if (kind == ScatterAddKind::ScatterAdd) {
      const int64_t m = constExtentOr(index_shape[axis]);
      HOSTIR_CHECK(m < 0 || ((on_dim || n < 0 || m <= n) && (s < 0 || m <= s)), call, ": on axis ",
                   axis, " the index has extent ", m, ", src ", s, " and the input ", n,
                   "; the index may not be longer than src, nor than the input off dim");
      continue;
    }
    const int64_t want = on_dim ? (index->rank() == 0 ? 1 : constExtentOr(index_shape[0])) : n;
    HOSTIR_CHECK(want < 0 || s < 0 || s == want, call, ": on axis ", axis, " src has extent ", s,
                 " but needs ", want, on_dim ? " (the number of indices)" : " (the input's)");
  }
}

}  // namespace

void ScatterAddOp::validate(const std::vector<Val*>& inputs,
                            const std::vector<Attribute>& attributes) {
  HOSTIR_ASSERT(inputs.size() == 3 && attributes.size() == 2 &&
                    std::holds_alternative<int64_t>(attributes[0]) &&
                    std::holds_alternative<int64_t>(attributes[1]),
                "ScatterAddOp built with the wrong operands");
  const int64_t kind_value = std::get<int64_t>(attributes[1]);
  HOSTIR_ASSERT(kind_value >= 0 && kind_value <= static_cast<int64_t>(ScatterAddKind::IndexAdd),
                "ScatterAddOp attribute 1 is not a ScatterAddKind: ", kind_value);
  const auto kind = static_cast<ScatterAddKind>(kind_value);
  const auto* in = dynamic_cast<const TensorView*>(inputs[0]);
  const auto* index = dynamic_cast<const TensorView*>(inputs[1]);
  const auto* src = dynamic_cast<const TensorView*>(inputs[2]);
  const std::string call = hostir::toString(kind) + "(" + describe(inputs[0]) + ", " +
                           describe(inputs[1]) + ", " + describe(inputs[2]) + ")";
  HOSTIR_CHECK(in != nullptr && index != nullptr && src != nullptr, call,
               ": the input, the index and src must be tensors");
  const int64_t dim = std::get<int64_t>(attributes[0]);
  checkDimAndIndexDtype(call, in, index, dim);
  if (kind == ScatterAddKind::IndexAdd) {
    HOSTIR_CHECK(index->rank() <= 1, call, ": the index has rank ", index->rank(),
                 "; index_add takes a 1-D (or 0-D) index");
  } else {
    HOSTIR_CHECK(index->rank() == in->rank(), call, ": the index has rank ", index->rank(),
                 " but the input has rank ", in->rank(), "; scatter_add needs the same rank");
  }
  checkSrcTensor(call, in, src);
  checkScatterAddExtents(kind, in, index, src, dim, call);
}

namespace {

TensorView* scatterAddOp(ScatterAddKind kind, TensorView* in, TensorView* index, TensorView* src,
                         int64_t dim) {
  const std::string op = hostir::toString(kind);
  HOSTIR_CHECK(in != nullptr && index != nullptr && src != nullptr, op, ": an operand is null");
  std::vector<Attribute> attributes{normalizedDim(op, in, dim), static_cast<int64_t>(kind)};
  ScatterAddOp::validate({in, index, src}, attributes);
  return makeShapedAsInput<ScatterAddOp>({in, index, src}, std::move(attributes));
}

}  // namespace

TensorView* scatterAdd(TensorView* in, TensorView* index, TensorView* src, int64_t dim) {
  return scatterAddOp(ScatterAddKind::ScatterAdd, in, index, src, dim);
}

TensorView* indexAdd(TensorView* in, TensorView* index, TensorView* src, int64_t dim) {
  return scatterAddOp(ScatterAddKind::IndexAdd, in, index, src, dim);
}

HOSTIR_DEFINE_TENSOR_OP(ScatterAddOp)

}  // namespace hostir
