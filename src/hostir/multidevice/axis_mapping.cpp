#include "hostir/multidevice/axis_mapping.h"

#include <algorithm>

#include "hostir/ir/gather_ops.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

// Builds the map from shape-dim pairs, dropping broadcast axes on either side.
class AxisMapBuilder {
 public:
  AxisMapBuilder(const TensorView* producer, const TensorView* consumer)
      : producer_(producer), consumer_(consumer), producer_dims_(shapeToLogical(producer)) {}

  // `consumer_logical_pos` indexes the consumer's full logical domain.
  void add(int64_t producer_dim, int64_t consumer_logical_pos) {
    if (producer_dim < 0 || producer_dim >= static_cast<int64_t>(producer_dims_.size())) {
      return;
    }
    int64_t p = producer_dims_[static_cast<size_t>(producer_dim)];
    const auto& p_ids = producer_->getLogicalDomain();
    const auto& c_ids = consumer_->getLogicalDomain();
    if (consumer_logical_pos < 0 || consumer_logical_pos >= static_cast<int64_t>(c_ids.size())) {
      return;
    }
    if (p_ids[static_cast<size_t>(p)]->isBroadcast() ||
        c_ids[static_cast<size_t>(consumer_logical_pos)]->isBroadcast()) {
      return;
    }
    map_.emplace_back(p, consumer_logical_pos);
  }
  // Both sides given as shape dims.
  void addDims(int64_t producer_dim, int64_t consumer_dim) {
    std::vector<int64_t> consumer_dims = shapeToLogical(consumer_);
    if (consumer_dim < 0 || consumer_dim >= static_cast<int64_t>(consumer_dims.size())) {
      return;
    }
    add(producer_dim, consumer_dims[static_cast<size_t>(consumer_dim)]);
  }
  AxisMap take() {
    return std::move(map_);
  }

 private:
  const TensorView* producer_;
  const TensorView* consumer_;
  std::vector<int64_t> producer_dims_;
  AxisMap map_;
};

int64_t rankOf(const TensorView* tv) {
  return tv->rank();
}

// Matmul: A [..., M, K] (or [K]) and B [..., K, N] (or [K]); the output is
// [batch..., M?, N?] with batch axes broadcast right-aligned.
void mapMatmul(const MatmulOp* op, const TensorView* producer, AxisMapBuilder& builder) {
  int64_t na = rankOf(op->a());
  int64_t nb = rankOf(op->b());
  int64_t a_batch = na >= 2 ? na - 2 : 0;
  int64_t b_batch = nb >= 2 ? nb - 2 : 0;
  int64_t batch = std::max(a_batch, b_batch);
  if (producer == op->a()) {
    for (int64_t i = 0; i < a_batch; ++i) {
      builder.addDims(i, i + batch - a_batch);
    }
    if (na >= 2) {
      builder.addDims(na - 2, batch);
    }
  }
  if (producer == op->b()) {
    for (int64_t i = 0; i < b_batch; ++i) {
      builder.addDims(i, i + batch - b_batch);
    }
    if (nb >= 2) {
      builder.addDims(nb - 1, batch + (na >= 2 ? 1 : 0));
    }
  }
}

// Linear: in [..., K], weight [N, K] (or [K]), bias [N]; out [..., N?].
void mapLinear(const LinearOp* op, const TensorView* producer, AxisMapBuilder& builder) {
  int64_t nx = rankOf(op->in());
  bool has_n = rankOf(op->weight()) == 2;
  if (producer == op->in()) {
    for (int64_t i = 0; i + 1 < nx; ++i) {
      builder.addDims(i, i);
    }
  }
  if (has_n && (producer == op->weight() || producer == op->bias())) {
    builder.addDims(0, nx - 1);
  }
}

void mapBinary(const TensorView* producer, const TensorView* consumer, AxisMapBuilder& builder) {
  int64_t np = rankOf(producer);
  int64_t nc = rankOf(consumer);
  for (int64_t i = 0; i < np; ++i) {
    builder.addDims(i, i + nc - np);
  }
}

// An integer extent as a quotient of products: the symbols (free, or
// computed other than by a product) and the constant of each side.
struct ExtentQuotient {
  std::vector<const Val*> symbols;
  std::vector<const Val*> divisor_symbols;
  int64_t constant = 1;
  int64_t divisor = 1;
  bool overflowed = false;
};

const BinaryOp* integerBinaryOp(const Val* val, BinaryOpType type) {
  const auto* op = dynamic_cast<const BinaryOp*>(val->definition());
  return op != nullptr && op->type() == type && isIntegralType(val->dtype()) ? op : nullptr;
}

void collectFactors(const Val* val, std::vector<const Val*>& symbols, int64_t& constant,
                    bool& overflowed) {
  if (const auto* scalar = dynamic_cast<const Scalar*>(val);
      scalar != nullptr && scalar->isConstInt()) {
    overflowed |= __builtin_mul_overflow(constant, scalar->constInt(), &constant);
  } else if (const BinaryOp* mul = integerBinaryOp(val, BinaryOpType::Mul)) {
    collectFactors(mul->lhs(), symbols, constant, overflowed);
    collectFactors(mul->rhs(), symbols, constant, overflowed);
  } else {
    symbols.push_back(val);
  }
}

ExtentQuotient asQuotient(const Val* extent) {
  ExtentQuotient q;
  if (const BinaryOp* div = integerBinaryOp(extent, BinaryOpType::Div)) {
    collectFactors(div->lhs(), q.symbols, q.constant, q.overflowed);
    collectFactors(div->rhs(), q.divisor_symbols, q.divisor, q.overflowed);
  } else {
    collectFactors(extent, q.symbols, q.constant, q.overflowed);
  }
  return q;
}

// The same symbols, each matched once (sameAs), in any order.
bool sameSymbols(std::vector<const Val*> a, const std::vector<const Val*>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (const Val* symbol : b) {
    auto it = std::find_if(a.begin(), a.end(), [&](const Val* s) { return s->sameAs(symbol); });
    if (it == a.end()) {
      return false;
    }
    a.erase(it);
  }
  return true;
}

// Whether two extents are equal whatever their symbols' values: a = A/A' and
// b = B/B' (products; a division's divisor 1 where there is none) with A·B'
// and B·A' the same product. Equal quotients have equal integer parts, so
// this holds for the rounding division too. A reshape's -1 extent is such a
// quotient: {-1, 8} of [S, 2, 4] has the extent (S·2·4)/8, which is S.
bool provablyEqual(const Val* a, const Val* b) {
  if (a->sameAs(b)) {
    return true;
  }
  ExtentQuotient x = asQuotient(a);
  ExtentQuotient y = asQuotient(b);
  if (x.overflowed || y.overflowed || x.divisor == 0 || y.divisor == 0) {
    return false;
  }
  int64_t left = 0;
  int64_t right = 0;
  if (__builtin_mul_overflow(x.constant, y.divisor, &left) ||
      __builtin_mul_overflow(y.constant, x.divisor, &right) || left != right) {
    return false;
  }
  std::vector<const Val*> left_symbols = x.symbols;
  left_symbols.insert(left_symbols.end(), y.divisor_symbols.begin(), y.divisor_symbols.end());
  std::vector<const Val*> right_symbols = y.symbols;
  right_symbols.insert(right_symbols.end(), x.divisor_symbols.begin(), x.divisor_symbols.end());
  return sameSymbols(std::move(left_symbols), right_symbols);
}

// Reshape: leading axes keep their identity while their extents agree,
// proved symbolically (provablyEqual): a -1 that keeps the outer axis maps.
void mapReshape(const TensorView* producer, const TensorView* consumer, AxisMapBuilder& builder) {
  std::vector<IterDomain*> p = producer->shapeDomain();
  std::vector<IterDomain*> c = consumer->shapeDomain();
  for (size_t i = 0; i < std::min(p.size(), c.size()); ++i) {
    if (!provablyEqual(p[i]->extent(), c[i]->extent())) {
      break;
    }
    builder.addDims(static_cast<int64_t>(i), static_cast<int64_t>(i));
  }
}

}  // namespace

std::vector<int64_t> shapeToLogical(const TensorView* tv) {
  std::vector<int64_t> dims;
  const auto& logical = tv->getLogicalDomain();
  for (size_t i = 0; i < logical.size(); ++i) {
    if (!logical[i]->isReduction()) {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  return dims;
}

int64_t logicalToShape(const TensorView* tv, int64_t logical_pos) {
  std::vector<int64_t> dims = shapeToLogical(tv);
  auto it = std::find(dims.begin(), dims.end(), logical_pos);
  return it == dims.end() ? -1 : it - dims.begin();
}

std::vector<TensorView*> tensorInputs(const Expr* expr) {
  std::vector<TensorView*> result;
  for (Val* input : expr->inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      result.push_back(tv);
    }
  }
  return result;
}

TensorView* tensorOutput(const Expr* expr) {
  for (Val* output : expr->outputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(output)) {
      return tv;
    }
  }
  return nullptr;
}

namespace {

bool isConstZero(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConstInt() && scalar->constInt() == 0;
}

// The ops that work along one axis (pad's padded axes, cat, cumsum,
// index_select, index_add) carry every other axis of their input through
// unchanged, so a shard of it computes its own shard of the output; without
// the map the sharding passes gathered such an input and the op wrote the
// first rows of the whole result on every device (a slice's grad, a pad,
// was wrong on every rank but the first: gradient fuzzer --resize-ops, 2
// and 4 ranks). take_along_axis, scatter and scatter_add are not mapped:
// their index may be shorter than the input off the axis.
void mapIndexedOp(const Expr* expr, const TensorView* producer, int64_t np,
                  AxisMapBuilder& builder) {
  std::vector<int64_t> along;
  if (const auto* pad_op = dynamic_cast<const PadOp*>(expr)) {
    for (int64_t i = 0; i < np; ++i) {
      if (!isConstZero(pad_op->left(i)) || !isConstZero(pad_op->right(i))) {
        along.push_back(i);
      }
    }
  } else if (const auto* cat_op = dynamic_cast<const CatOp*>(expr)) {
    along.push_back(cat_op->dim());
  } else if (const auto* scan = dynamic_cast<const ScanOp*>(expr)) {
    along.push_back(scan->dim());
  } else if (const auto* gather = dynamic_cast<const GatherOp*>(expr);
             gather != nullptr && gather->kind() == GatherKind::IndexSelect &&
             producer == gather->in()) {
    along.push_back(gather->dim());
  } else if (const auto* add = dynamic_cast<const ScatterAddOp*>(expr);
             add != nullptr && add->kind() == ScatterAddKind::IndexAdd &&
             producer != add->index()) {
    along.push_back(add->dim());
  } else {
    return;
  }
  for (int64_t i = 0; i < np; ++i) {
    if (std::find(along.begin(), along.end(), i) == along.end()) {
      builder.addDims(i, i);
    }
  }
}

}  // namespace

AxisMap mapProducerToConsumer(const Expr* expr, const TensorView* producer) {
  TensorView* consumer = tensorOutput(expr);
  if (consumer == nullptr) {
    return {};
  }
  AxisMapBuilder builder(producer, consumer);
  int64_t np = rankOf(producer);
  if (expr->isA<LoadStoreOp>() || expr->isA<UnaryOp>()) {
    for (int64_t i = 0; i < np; ++i) {
      builder.addDims(i, i);
    }
  } else if (expr->isA<BinaryOp>() || expr->isA<WhereOp>()) {
    mapBinary(producer, consumer, builder);
  } else if (expr->isA<ReductionOp>()) {
    // The output keeps reduced axes as reduction IterDomains: same rank.
    for (int64_t i = 0; i < np; ++i) {
      builder.add(i, i);
    }
  } else if (const auto* bcast = dynamic_cast<const BroadcastOp*>(expr)) {
    const std::vector<int64_t>& flags = bcast->isBroadcastDims();
    int64_t next = 0;
    for (size_t i = 0; i < flags.size(); ++i) {
      if (flags[i] == 0) {
        builder.addDims(next++, static_cast<int64_t>(i));
      }
    }
  } else if (const auto* mm = dynamic_cast<const MatmulOp*>(expr)) {
    mapMatmul(mm, producer, builder);
  } else if (const auto* lin = dynamic_cast<const LinearOp*>(expr)) {
    mapLinear(lin, producer, builder);
  } else if (const auto* sel = dynamic_cast<const SelectOp*>(expr)) {
    for (int64_t i = 0, out = 0; i < np; ++i) {
      if (i != sel->dim()) {
        builder.addDims(i, out++);
      }
    }
  } else if (const auto* sl = dynamic_cast<const SliceOp*>(expr)) {
    for (int64_t i = 0; i < np; ++i) {
      if (i != sl->dim()) {
        builder.addDims(i, i);
      }
    }
  } else if (const auto* perm = dynamic_cast<const PermuteOp*>(expr)) {
    const std::vector<int64_t>& dims = perm->dims();
    for (size_t out = 0; out < dims.size(); ++out) {
      builder.addDims(dims[out], static_cast<int64_t>(out));
    }
  } else if (expr->isA<ReshapeOp>()) {
    mapReshape(producer, consumer, builder);
  } else {
    mapIndexedOp(expr, producer, np, builder);
  }
  return builder.take();
}

int64_t mappedConsumerAxis(const AxisMap& map, int64_t producer_pos) {
  for (const auto& [p, c] : map) {
    if (p == producer_pos) {
      return c;
    }
  }
  return -1;
}

int64_t mappedProducerAxis(const AxisMap& map, int64_t consumer_pos) {
  for (const auto& [p, c] : map) {
    if (c == consumer_pos) {
      return p;
    }
  }
  return -1;
}

int64_t contractedAxis(const Expr* expr, const TensorView* operand) {
  int64_t dim = -1;
  if (const auto* mm = dynamic_cast<const MatmulOp*>(expr)) {
    if (operand == mm->a()) {
      dim = rankOf(operand) - 1;
    } else if (operand == mm->b()) {
      dim = rankOf(operand) == 1 ? 0 : rankOf(operand) - 2;
    }
  } else if (const auto* lin = dynamic_cast<const LinearOp*>(expr)) {
    if (operand == lin->in() || operand == lin->weight()) {
      dim = rankOf(operand) - 1;
    }
  }
  return dim < 0 ? -1 : shapeToLogical(operand)[static_cast<size_t>(dim)];
}

int64_t rowAxisOfFirstOperand(const Expr* expr) {
  const TensorView* first = nullptr;
  if (const auto* mm = dynamic_cast<const MatmulOp*>(expr)) {
    first = mm->a();
  } else if (const auto* lin = dynamic_cast<const LinearOp*>(expr)) {
    first = lin->in();
  }
  if (first == nullptr || rankOf(first) < 2) {
    return -1;
  }
  return shapeToLogical(first)[static_cast<size_t>(rankOf(first) - 2)];
}

}  // namespace hostir
