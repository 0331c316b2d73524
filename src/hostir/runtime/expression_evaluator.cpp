#include "hostir/runtime/expression_evaluator.h"

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scalar_arithmetic.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/tensor_memory.h"

namespace hostir {

namespace {
// A scalar input holds its declared dtype's alternative (validateInputs has
// checked that the value fits): True given for an Int64 is 1, 3 given for a
// Double is 3.0, so what reads it finds the type it expects.
PolymorphicValue asDtype(const PolymorphicValue& value, DataType dtype) {
  if (!hasValue(value)) {
    return value;
  }
  auto number = [&](auto as) {
    return std::visit(
        [&](auto v) -> PolymorphicValue {
          if constexpr (std::is_arithmetic_v<decltype(v)>) {
            return static_cast<decltype(as)>(v);
          } else {
            return v;
          }
        },
        value);
  };
  if (dtype == DataType::Bool) {
    return std::holds_alternative<int64_t>(value) ? number(bool{}) : value;
  }
  if (isIntegralType(dtype)) {
    return std::holds_alternative<bool>(value) ? number(int64_t{}) : value;
  }
  if (isComplexType(dtype)) {
    return number(std::complex<double>{});
  }
  return number(double{});
}
}  // namespace

void ExpressionEvaluator::bind(const Val* val, PolymorphicValue value) {
  HOSTIR_ASSERT(val != nullptr);
  if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
    HOSTIR_CHECK(isTensor(value), tv->toInlineString(), " needs a tensor, got ",
                 describeValue(value));
    bindTensor(tv, std::get<at::Tensor>(value));
    return;
  }
  HOSTIR_CHECK(!isTensor(value), val->toInlineString(), " is a scalar, got ", describeValue(value));
  bindings_[val] = asDtype(value, val->dtype());
  cache_.clear();
}

void ExpressionEvaluator::bindTensor(const TensorView* tv, const at::Tensor& tensor) {
  std::vector<IterDomain*> shape = tv->shapeDomain();
  if (!tensor.defined()) {
    bindings_[tv] = tensor;  // a tensor absent on this device
    return;
  }
  // A host program's tensor (not a segment's own, which the segment's
  // executor binds): its memory is named in the tensor-memory trace.
  if (runtime::tracingTensorMemory() && tensor.has_storage() &&
      dynamic_cast<const HostIrContainer*>(tv->container()) != nullptr) {
    std::string name = "T";  // appended: GCC 12 warns falsely on "T" + ...
    name += std::to_string(tv->name());
    nameMemoryOf(tensor, name);
  }
  if (isPacked(tv, tensor)) {
    // An encoded tensor in a panel layout (docs/targets.md): its extents are
    // those of the plain tensor it was packed from.
    if (auto sizes = plainSizesOf(tensor); sizes && sizes->size() == shape.size()) {
      for (size_t axis = 0; axis < shape.size(); ++axis) {
        bindShardExtent(tv, axis, (*sizes)[axis]);
      }
    }
    bindings_[tv] = tensor;
    cache_.clear();
    return;
  }
  HOSTIR_CHECK(static_cast<int64_t>(shape.size()) == tensor.dim(), tv->toInlineString(),
               " has rank ", shape.size(), " but the tensor bound to it has sizes ",
               tensor.sizes());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    bindShardExtent(tv, axis, tensor.size(static_cast<int64_t>(axis)));
  }
  // Re-binding a tensor (or binding one computed before) makes everything
  // derived from its old value stale.
  if (bindings_.count(tv) != 0 || cache_.count(tv) != 0) {
    cache_.clear();
  }
  bindings_[tv] = tensor;
}

int64_t ExpressionEvaluator::localSize(const TensorView* tv, size_t axis, int64_t extent) const {
  const IterDomain* id = tv->shapeDomain().at(axis);
  const ParallelType parallel_type =
      tv->hasDeviceMesh() ? shardingParallelType(tv, id) : ParallelType::Serial;
  if (!isDeviceDim(parallel_type)) {
    return extent;
  }
  const DeviceMesh& mesh = tv->getDeviceMesh();
  const int64_t devices = mesh.size(parallel_type);
  if (my_device_ < 0 || !mesh.has(my_device_)) {
    return ceilDivRows(extent, devices);
  }
  return rowChunk(extent, devices, mesh.idxOf(my_device_, parallel_type)).rows;
}

void ExpressionEvaluator::bindShardExtent(const TensorView* tv, size_t axis, int64_t local) {
  const Val* extent = tv->shapeDomain()[axis]->extent();
  const int64_t devices = shardDivisors(tv)[axis];
  if (devices == 1) {
    bindExtent(extent, local, tv, axis);
    return;
  }
  const auto* scalar = extent->as<Scalar>();
  if (!scalar->isConst() && !isBound(extent)) {
    // Nobody said what the global extent is (the ranks' agreement binds
    // it first on a multi-rank run): take the even layout, local × devices,
    // whose torch.chunk piece on every device is `local` again.
    bindExtent(extent, local * devices, tv, axis);
    return;
  }
  if (scalar->definition() != nullptr && !scalar->isConst()) {
    return;  // derived extents are checked by the ops that compute the tensor
  }
  const int64_t global = scalar->isConst() ? scalar->constInt() : evaluateInt(extent);
  const int64_t expected = localSize(tv, axis, global);
  HOSTIR_CHECK(local == expected, tv->toInlineString(), " axis ", axis, " has extent ", global,
               " sharded over ", devices, " devices, so this device (", my_device_,
               ") holds torch.chunk's ", expected, " rows of it, but the tensor bound to it has ",
               local);
}

void ExpressionEvaluator::bindExtent(const Val* extent, int64_t size, const TensorView* tv,
                                     size_t axis) {
  const auto* scalar = extent->as<Scalar>();
  if (scalar->isConst()) {
    HOSTIR_CHECK(scalar->constInt() == size, tv->toInlineString(), " axis ", axis, " has size ",
                 scalar->constInt(), " but the tensor bound to it has size ", size);
    return;
  }
  if (scalar->definition() != nullptr) {
    // Derived extents are checked by the ops that compute the tensor. A
    // segment's input may have one whose operands the segment never sees
    // (its FusionExecutor gets the tensor, not the slice's scalars): the
    // tensor's size is then its value.
    if (!canEvaluate(extent)) {
      bindings_[extent] = size;
      cache_.clear();
    }
    return;
  }
  auto bound = bindings_.find(extent);
  if (bound != bindings_.end()) {
    int64_t previous = std::get<int64_t>(bound->second);
    if (previous != size) {
      auto source = extent_sources_.find(extent);
      std::string first = source == extent_sources_.end()
                              ? std::string("an earlier binding")
                              : source->second.first->toInlineString() + " axis " +
                                    std::to_string(source->second.second);
      HOSTIR_THROW("size mismatch on ", extent->toInlineString(), ": ", first, " has size ",
                   previous, " but ", tv->toInlineString(), " axis ", axis, " has size ", size,
                   "; tensors sharing a symbolic extent must agree");
    }
    return;
  }
  bindings_[extent] = size;
  extent_sources_[extent] = {tv, axis};
  cache_.clear();
}

void ExpressionEvaluator::bindNamed(const std::string& symbol, PolymorphicValue value) {
  named_[symbol] = std::move(value);
  cache_.clear();
}

void ExpressionEvaluator::unbind(const Val* val) {
  bindings_.erase(val);
  cache_.clear();
}

bool ExpressionEvaluator::canEvaluate(const Val* val) const {
  if (bindings_.count(val) != 0 || cache_.count(val) != 0) {
    return true;
  }
  if (const auto* scalar = dynamic_cast<const Scalar*>(val)) {
    if (scalar->isConst() || (!scalar->symbol().empty() && named_.count(scalar->symbol()) != 0)) {
      return true;
    }
  }
  const Expr* def = val->definition();
  if (def == nullptr) {
    return false;
  }
  for (const Val* input : def->inputs()) {
    if (!canEvaluate(input)) {
      return false;
    }
  }
  return true;
}

PolymorphicValue ExpressionEvaluator::evaluate(const Val* val) {
  auto bound = bindings_.find(val);
  if (bound != bindings_.end()) {
    return bound->second;
  }
  if (const auto* scalar = dynamic_cast<const Scalar*>(val)) {
    if (scalar->isConst()) {
      return std::visit([](auto v) -> PolymorphicValue { return v; }, *scalar->value());
    }
    if (!scalar->symbol().empty()) {
      auto named = named_.find(scalar->symbol());
      if (named != named_.end()) {
        return named->second;
      }
    }
  }
  auto cached = cache_.find(val);
  if (cached != cache_.end()) {
    return cached->second;
  }
  const Expr* def = val->definition();
  HOSTIR_CHECK(def != nullptr, val->toInlineString(),
               " has no value: bind it (as a program input or a runtime symbol) before "
               "evaluating what depends on it");
  if (val->vtype() == ValType::Scalar) {
    PolymorphicValue result = evaluateScalarExpr(def);
    cache_[val] = result;
    return result;
  }
  std::vector<at::Tensor> outputs = evaluateFusionOp(def, *this);
  for (size_t i = 0; i < outputs.size(); ++i) {
    cache_[def->output(i)] = outputs[i];
  }
  return cache_.at(val);
}

int64_t ExpressionEvaluator::evaluateInt(const Val* val) {
  PolymorphicValue value = evaluate(val);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    return *i;
  }
  if (const auto* b = std::get_if<bool>(&value)) {
    return *b ? 1 : 0;
  }
  HOSTIR_THROW(val->toInlineString(), " should be an integer, got ", describeValue(value));
}

at::Tensor ExpressionEvaluator::evaluateTensor(const Val* val) {
  PolymorphicValue value = evaluate(val);
  HOSTIR_CHECK(isTensor(value), val->toInlineString(), " should be a tensor, got ",
               describeValue(value));
  return std::get<at::Tensor>(value);
}

std::vector<int64_t> ExpressionEvaluator::evaluateShape(const TensorView* tv) {
  std::vector<int64_t> sizes;
  std::vector<IterDomain*> shape = tv->shapeDomain();
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    sizes.push_back(localSize(tv, axis, evaluateInt(shape[axis]->extent())));
  }
  return sizes;
}

PolymorphicValue ExpressionEvaluator::evaluateScalarExpr(const Expr* expr) {
  auto scalar = [&](const Val* operand) -> ScalarValue {
    PolymorphicValue value = evaluate(operand);
    if (const auto* i = std::get_if<int64_t>(&value)) {
      return *i;
    }
    if (const auto* d = std::get_if<double>(&value)) {
      return *d;
    }
    if (const auto* b = std::get_if<bool>(&value)) {
      return *b;
    }
    if (const auto* c = std::get_if<std::complex<double>>(&value)) {
      return *c;
    }
    HOSTIR_THROW(operand->toInlineString(), " should be a scalar, got ", describeValue(value));
  };
  if (const auto* unary = dynamic_cast<const UnaryOp*>(expr)) {
    ScalarValue value =
        applyScalarUnaryOp(unary->type(), scalar(unary->in()), unary->out()->dtype());
    return std::visit([](auto v) -> PolymorphicValue { return v; }, value);
  }
  const auto* op = dynamic_cast<const BinaryOp*>(expr);
  HOSTIR_ASSERT(op != nullptr, "scalar defined by unsupported ", expr->opName());
  std::optional<ScalarValue> result = applyScalarBinaryOp(
      op->type(), scalar(op->lhs()), scalar(op->rhs()), [op] { return op->toInlineString(); });
  HOSTIR_CHECK(result.has_value(), op->toInlineString(), " needs integer operands");
  return std::visit([](auto v) -> PolymorphicValue { return v; }, *result);
}

}  // namespace hostir
