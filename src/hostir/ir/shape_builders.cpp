// The shape and view builders of arith.h: broadcast, select, slice (bounds
// clamped as torch clamps them), permute and reshape.

#include "hostir/ir/arith.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "hostir/ir/arith_support.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"

namespace hostir {

using namespace arith_support;

TensorView* broadcast(TensorView* in, const std::vector<bool>& is_broadcast_dim) {
  HOSTIR_CHECK(in != nullptr, "broadcast: input is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  std::vector<int64_t> flags;
  for (bool is_broadcast : is_broadcast_dim) {
    flags.push_back(is_broadcast ? 1 : 0);
  }
  BroadcastOp::validate({in}, {flags});
  Fusion* container = in->container();
  std::vector<IterDomain*> ids;
  size_t next = 0;
  for (bool is_broadcast : is_broadcast_dim) {
    if (is_broadcast) {
      ids.push_back(IrBuilder::createInContainer<IterDomain>(container, constantIn(container, 1),
                                                             IterType::Broadcast));
    } else {
      ids.push_back(freshId(shape[next++]));
    }
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<BroadcastOp>(container, std::vector<Val*>{in},
                                            std::vector<Val*>{out}, std::vector<Attribute>{flags});
  return out;
}

TensorView* select(TensorView* in, int64_t dim, Val* index) {
  HOSTIR_CHECK(in != nullptr && index != nullptr, "select: an operand is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  int64_t axis = normalizeAxis(dim, static_cast<int64_t>(shape.size()), "select", in);
  SelectOp::validate({in, index}, {axis});
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) != axis) {
      ids.push_back(freshId(shape[i]));
    }
  }
  TensorView* out = makeViewOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<SelectOp>(in->container(), std::vector<Val*>{in, index},
                                         std::vector<Val*>{out}, std::vector<Attribute>{axis});
  return out;
}

TensorView* select(TensorView* in, int64_t dim, int64_t index) {
  HOSTIR_CHECK(in != nullptr, "select: input is null");
  return select(in, dim, constantIn(in->container(), index));
}

namespace {

// A slice bound as torch takes it, in [0, n]: a negative bound counts from
// the end, then it is clamped. Only min and max on integers, so the extent
// folds when everything is constant and never overflows at run time
// (stop = INT64_MAX, start = INT64_MIN): clamped = max(min(b, n), -n) lies
// in [-n, n], and min(max(-clamped, 0), 1) is 1 exactly when it is negative.
Val* torchSliceBound(Val* bound, Val* n) {
  Fusion* container = bound->container();
  auto constant = [&](int64_t value) -> Val* {
    return IrBuilder::createInContainer<Scalar>(container, value);
  };
  const Scalar* c_bound = asConstInt(bound);
  if ((c_bound != nullptr && c_bound->constInt() == 0) || bound == n) {
    return bound;  // 0 and the extent itself (x[s:x.size(0)]) are in range
  }
  Val* upper = scalarBinaryOp(BinaryOpType::Minimum, bound, n);
  if (c_bound != nullptr && c_bound->constInt() > 0) {
    return upper;  // a constant that cannot be negative: readable extents
  }
  Val* clamped = scalarBinaryOp(BinaryOpType::Maximum, upper,
                                scalarBinaryOp(BinaryOpType::Sub, constant(0), n));
  Val* negative = scalarBinaryOp(
      BinaryOpType::Minimum,
      scalarBinaryOp(BinaryOpType::Maximum, scalarBinaryOp(BinaryOpType::Sub, constant(0), clamped),
                     constant(0)),
      constant(1));
  return scalarBinaryOp(BinaryOpType::Add, clamped, scalarBinaryOp(BinaryOpType::Mul, n, negative));
}

// The extent torch gives x[start:stop] on an axis of extent n:
// max(0, bound(stop) - bound(start)). Constant bounds are validated to lie in
// [0, n] (SliceOp::validate), so their extent stays stop - start.
Val* torchSliceExtent(Val* start, Val* stop, Val* n) {
  if (asConstInt(start) != nullptr && asConstInt(stop) != nullptr) {
    return sub(stop, start);
  }
  Val* first = torchSliceBound(start, n);
  Val* last = torchSliceBound(stop, n);
  // Both lie in [0, n]: from 0, or up to n itself, the difference is >= 0.
  if (const Scalar* zero = asConstInt(first); zero != nullptr && zero->constInt() == 0) {
    return last;
  }
  if (last == n) {
    return scalarBinaryOp(BinaryOpType::Sub, n, first);
  }
  Fusion* container = start->container();
  return scalarBinaryOp(BinaryOpType::Maximum, scalarBinaryOp(BinaryOpType::Sub, last, first),
                        IrBuilder::createInContainer<Scalar>(container, int64_t{0}));
}

}  // namespace

TensorView* slice(TensorView* in, int64_t dim, Val* start, Val* stop) {
  HOSTIR_CHECK(in != nullptr && start != nullptr && stop != nullptr, "slice: an operand is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  int64_t axis = normalizeAxis(dim, static_cast<int64_t>(shape.size()), "slice", in);
  SliceOp::validate({in, start, stop}, {axis});
  std::vector<IterDomain*> ids;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) == axis) {
      Val* extent = torchSliceExtent(start, stop, shape[i]->extent());
      ids.push_back(IrBuilder::createInContainer<IterDomain>(in->container(), extent));
    } else {
      ids.push_back(freshId(shape[i]));
    }
  }
  TensorView* out = makeViewOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<SliceOp>(in->container(), std::vector<Val*>{in, start, stop},
                                        std::vector<Val*>{out}, std::vector<Attribute>{axis});
  return out;
}

TensorView* slice(TensorView* in, int64_t dim, int64_t start, int64_t stop) {
  HOSTIR_CHECK(in != nullptr, "slice: input is null");
  return slice(in, dim, constantIn(in->container(), start), constantIn(in->container(), stop));
}

TensorView* permute(TensorView* in, const std::vector<int64_t>& dims) {
  HOSTIR_CHECK(in != nullptr, "permute: input is null");
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto rank = static_cast<int64_t>(shape.size());
  // Negative dims are the user's spelling (normalized when the count is
  // right; PermuteOp::validate says what is wrong with a wrong count).
  std::vector<int64_t> normalized = dims;
  if (static_cast<int64_t>(dims.size()) == rank) {
    for (int64_t& d : normalized) {
      d = normalizeAxis(d, rank, "permute", in);
    }
  }
  PermuteOp::validate({in}, {normalized});
  std::vector<IterDomain*> ids;
  for (int64_t d : normalized) {
    ids.push_back(freshId(shape[static_cast<size_t>(d)]));
  }
  TensorView* out = makeTensorOver(in->container(), ids, in->dtype());
  IrBuilder::createInContainer<PermuteOp>(in->container(), std::vector<Val*>{in},
                                          std::vector<Val*>{out},
                                          std::vector<Attribute>{normalized});
  return out;
}

TensorView* reshape(TensorView* in, const std::vector<int64_t>& new_sizes) {
  HOSTIR_CHECK(in != nullptr, "reshape: input is null");
  ReshapeOp::validate({in}, {});
  Fusion* container = in->container();
  std::vector<IterDomain*> shape = in->shapeDomain();
  auto inferred = std::count(new_sizes.begin(), new_sizes.end(), -1);
  HOSTIR_CHECK(inferred <= 1, "reshape(", describe(in), "): at most one size may be -1");
  int64_t known = 1;
  for (int64_t size : new_sizes) {
    HOSTIR_CHECK(size >= -1, "reshape(", describe(in), "): invalid size ", size);
    known *= size == -1 ? 1 : size;
  }
  Val* numel = constantIn(container, 1);
  for (IterDomain* id : shape) {
    numel = mul(numel, id->extent());
  }
  const Scalar* c_numel = asConstInt(numel);
  if (c_numel != nullptr) {
    bool ok =
        inferred ? (known != 0 && c_numel->constInt() % known == 0) : c_numel->constInt() == known;
    std::stringstream sizes;
    for (size_t i = 0; i < new_sizes.size(); ++i) {
      sizes << (i ? ", " : "") << new_sizes[i];
    }
    HOSTIR_CHECK(ok, "reshape(", describe(in), "): ", c_numel->constInt(),
                 " elements cannot be viewed as {", sizes.str(),
                 "}; the new sizes must hold the same number of elements");
  }
  std::vector<IterDomain*> ids;
  for (int64_t size : new_sizes) {
    Val* extent = size == -1 ? div(numel, constantIn(container, known))
                             : static_cast<Val*>(constantIn(container, size));
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<ReshapeOp>(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                                          std::vector<Attribute>{});
  return out;
}

TensorView* reshapeToExtents(TensorView* in, const std::vector<Val*>& new_sizes) {
  HOSTIR_CHECK(in != nullptr, "reshape: input is null");
  std::vector<int64_t> constant_sizes;
  for (Val* size : new_sizes) {
    HOSTIR_CHECK(
        size != nullptr && size->vtype() == ValType::Scalar && isIntegralType(size->dtype()),
        "reshape(", describe(in), "): a size is ",
        size == nullptr ? std::string("null") : describe(size), "; give integer scalars");
    if (const Scalar* c = asConstInt(size)) {
      constant_sizes.push_back(c->constInt());
    }
  }
  if (constant_sizes.size() == new_sizes.size()) {
    return reshape(in, constant_sizes);
  }
  // Sizes known at run time: ATen's reshape checks the element count there
  // (a constant -1 is the elements over the product of the other sizes).
  ReshapeOp::validate({in}, {});
  Fusion* container = in->container();
  size_t inferred = new_sizes.size();
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    const Scalar* c = asConstInt(new_sizes[i]);
    HOSTIR_CHECK(c == nullptr || c->constInt() >= -1, "reshape(", describe(in), "): invalid size ",
                 describe(new_sizes[i]));
    if (c != nullptr && c->constInt() == -1) {
      HOSTIR_CHECK(inferred == new_sizes.size(), "reshape(", describe(in),
                   "): at most one size may be -1");
      inferred = i;
    }
  }
  Val* inferred_size = nullptr;
  if (inferred < new_sizes.size()) {
    Val* numel = constantIn(container, 1);
    for (IterDomain* id : in->shapeDomain()) {
      numel = mul(numel, id->extent());
    }
    Val* known = constantIn(container, 1);
    for (size_t i = 0; i < new_sizes.size(); ++i) {
      known = i == inferred ? known : mul(known, new_sizes[i]);
    }
    inferred_size = div(numel, known);
  }
  std::vector<IterDomain*> ids;
  std::vector<Val*> operands{in};
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    Val* extent = i == inferred ? inferred_size : new_sizes[i];
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
    if (i != inferred && asConstInt(extent) == nullptr) {
      operands.push_back(extent);
    }
  }
  TensorView* out = makeTensorOver(container, ids, in->dtype());
  IrBuilder::createInContainer<ReshapeOp>(container, std::move(operands), std::vector<Val*>{out},
                                          std::vector<Attribute>{});
  return out;
}

}  // namespace hostir
