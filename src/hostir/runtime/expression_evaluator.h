#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/ir/statement.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class TensorView;

// Binds Vals to concrete values and evaluates everything that depends on
// them: scalar expressions (extents, loop indices) and fusion ops (through
// ATen). Values computed from bindings are cached; re-binding a scalar (a
// loop index) drops the cache, so nothing derived from the old value is
// reused.
class ExpressionEvaluator {
 public:
  // Binds a scalar or tensor. Binding a tensor also binds the symbolic
  // extents of its logical axes and checks the constant ones; a symbol bound
  // to two different sizes is an error naming both tensors. An extent
  // derived from other values (a run-time slice's `( i3 - i2 )`) is left to
  // the ops that compute the tensor, unless those values are unknown here (a
  // segment that does not receive the slice's scalars): then it is bound to
  // the tensor's size.
  void bind(const Val* val, PolymorphicValue value);
  void bindTensor(const TensorView* tv, const at::Tensor& tensor);
  void unbind(const Val* val);
  // Binds every Scalar with this symbol (e.g. "numberOfStreams"), whichever
  // Val object spells it.
  void bindNamed(const std::string& symbol, PolymorphicValue value);
  bool isBound(const Val* val) const {
    return bindings_.count(val) != 0;
  }

  // Whether evaluate(val) has what it needs: `val` is bound, constant, a
  // bound named symbol, or defined from values that are.
  bool canEvaluate(const Val* val) const;
  // The value of `val`: bound, constant, or computed from its definition.
  PolymorphicValue evaluate(const Val* val);
  int64_t evaluateInt(const Val* val);
  at::Tensor evaluateTensor(const Val* val);
  // The sizes of a tensor's shape (logical axes without reductions) on this
  // device: a sharded axis of extent n over d devices has torch.chunk's
  // piece of it on this device, rowChunk(n, d, index along the mesh
  // dimension).rows; ceilDiv(n, d) when no device was set or the tensor's
  // mesh lacks it.
  std::vector<int64_t> evaluateShape(const TensorView* tv);
  // The device whose shards are bound and evaluated (-1: none). A sharded
  // axis whose global extent is known (constant, or bound before the tensor)
  // must then hold this device's torch.chunk rows of it.
  void setDevice(int64_t device) {
    my_device_ = device;
  }

  // Forgets cached derived values (bindings stay).
  void invalidateCache() {
    cache_.clear();
  }

 private:
  PolymorphicValue evaluateScalarExpr(const Expr* expr);
  void bindExtent(const Val* extent, int64_t size, const TensorView* tv, size_t axis);
  // Binds (or checks) the extent of `tv`'s shape axis `axis` from this
  // device's `local` size of it.
  void bindShardExtent(const TensorView* tv, size_t axis, int64_t local);
  // This device's size of `tv`'s shape axis `axis` whose extent is `extent`.
  int64_t localSize(const TensorView* tv, size_t axis, int64_t extent) const;
  int64_t my_device_ = -1;

  std::unordered_map<const Val*, PolymorphicValue> bindings_;
  std::unordered_map<const Val*, PolymorphicValue> cache_;
  std::unordered_map<std::string, PolymorphicValue> named_;
  // Which tensor axis bound each symbolic extent, for error messages.
  std::unordered_map<const Val*, std::pair<const TensorView*, size_t>> extent_sources_;
};

}  // namespace hostir
