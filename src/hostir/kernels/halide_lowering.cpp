#include "hostir/kernels/halide_lowering.h"

#include <algorithm>
#include <string>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/halide_lowering_state.h"

namespace hostir {

namespace halide_lowering {

// prefix + number (without operator+ on a literal, which GCC 12 flags with
// a false -Wrestrict).
std::string numbered(const char* prefix, int64_t number) {
  std::string text(prefix);
  text += std::to_string(number);
  return text;
}

Halide::Type storageType(DataType dtype) {
  switch (dtype) {
    case DataType::Float: return Halide::Float(32);
    case DataType::Double: return Halide::Float(64);
    case DataType::Half: return Halide::Float(16);
    case DataType::BFloat16: return Halide::BFloat(16);
    case DataType::Int32: return Halide::Int(32);
    case DataType::Int64: return Halide::Int(64);
    case DataType::Bool: return Halide::Bool();
    case DataType::ComplexFloat:  // not compiled (kernel_signature.cpp)
    case DataType::ComplexDouble: break;
  }
  HOSTIR_ASSERT(false, "unknown dtype");
  return {};
}

// What arithmetic on a dtype computes in: ATen's CPU kernels compute half
// and bfloat16 in float and round the result.
Halide::Type computeType(DataType dtype) {
  if (dtype == DataType::Half || dtype == DataType::BFloat16) {
    return Halide::Float(32);
  }
  return storageType(dtype);
}

Expr convert(Expr value, Halide::Type type) {
  if (value.type() == type) {
    return value;
  }
  if (type.is_bool()) {
    return value != Halide::Internal::make_zero(value.type());
  }
  if (type.is_float() && type.bits() == 16 && !type.is_bfloat() && value.type().is_float()) {
    // Halide 14 converts a float NaN to half infinity; torch keeps it NaN.
    Expr half_nan = Halide::reinterpret(type, Halide::cast(Halide::UInt(16), 0x7e00));
    return Halide::select(Halide::is_nan(value), half_nan, Halide::cast(type, value));
  }
  return Halide::cast(type, value);
}

HalideKernel Lowering::run() {
  for (const TensorView* input : signature_.tensor_inputs) {
    Halide::ImageParam image(storageType(input->dtype()), static_cast<int>(input->rank()),
                             numbered("in", arguments_.size()));
    arguments_.push_back(image);
    Func wrapper(numbered("T", input->name()));
    std::vector<Var> vars = varsFor(input->rank());
    if (vars.empty()) {
      wrapper() = image();
    } else {
      wrapper(vars) = image(std::vector<Expr>(vars.begin(), vars.end()));
    }
    funcs_[input] = wrapper;
  }
  for (size_t i = 0; i < signature_.scalars.size(); ++i) {
    const KernelScalarArgument& scalar = signature_.scalars[i];
    std::string name = numbered("s", i);
    if (scalar.floating) {
      Halide::Param<double> param(name);
      arguments_.push_back(param);
      scalar_exprs_.push_back(param);
    } else {
      Halide::Param<int64_t> param(name);
      arguments_.push_back(param);
      scalar_exprs_.push_back(param);
    }
  }
  for (const hostir::Expr* expr : fusion_.exprs()) {
    if (!expr->outputs().empty() && expr->output(0)->vtype() == ValType::TensorView) {
      lower(expr);  // scalar arithmetic arrives as an argument
    }
  }
  std::vector<Func> outputs;
  for (size_t i = 0; i < signature_.outputs.size(); ++i) {
    const TensorView* tv = signature_.outputs[i];
    Func output(numbered("out", i));
    std::vector<Var> vars = varsFor(tv->rank());
    if (vars.empty()) {
      output() = funcs_.at(tv)();
    } else {
      output(vars) = funcs_.at(tv)(std::vector<Expr>(vars.begin(), vars.end()));
    }
    declareNonNegativeExtents(output);
    scheduleOutput(output, tv, vars);
    outputs.push_back(output);
  }
  scheduleReductions(outputs);
  scheduleSharedRowValues(outputs);
  return HalideKernel{Halide::Pipeline(outputs), arguments_};
}

// A kernel without run-time checks (engineTarget, kernel_cache.cpp) has no
// "extent >= 0" assertions for Halide's simplifier to learn from: then it
// could not tell that a row's last partial vector is one vector, and
// compiled it as a loop holding a whole and a predicated copy of the body.
// An extent declared as max(extent, 0) says it without a check (and with
// checks, the check always holds).
void Lowering::declareNonNegativeExtents(Func& output) {
  Halide::OutputImageParam buffer = output.output_buffer();
  for (int d = 0; d < buffer.dimensions(); ++d) {
    buffer.dim(d).set_extent(Halide::max(buffer.dim(d).extent(), 0));
  }
}

std::vector<Var> Lowering::varsFor(int64_t rank) {
  std::vector<Var> vars;
  for (int64_t i = 0; i < rank; ++i) {
    vars.emplace_back(numbered("d", i));
  }
  return vars;
}

int Lowering::lanes(const TensorView* tv) const {
  int bytes = std::max(1, computeType(tv->dtype()).bytes());
  return std::max(1, target_.vector_bits / (8 * bytes));
}

// The value of `tv` at `index` (outermost first), in its compute type.
Expr Lowering::load(const TensorView* tv, const Index& index) {
  auto it = funcs_.find(tv);
  HOSTIR_ASSERT(it != funcs_.end(), "kernel lowering: ", tv->toInlineString(),
                " is read before it is defined");
  Expr value = index.empty() ? it->second() : it->second(Index(index.rbegin(), index.rend()));
  return convert(value, computeType(tv->dtype()));
}

// A tensor operand of a pointwise op read at the op's output index:
// right-aligned, broadcast axes read at 0.
Expr Lowering::loadBroadcast(const TensorView* tv, const Index& out_index) {
  std::vector<IterDomain*> shape = tv->shapeDomain();
  size_t offset = out_index.size() - shape.size();
  Index index;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    index.push_back(shape[axis]->isBroadcast() ? Expr(0) : out_index[axis + offset]);
  }
  return load(tv, index);
}

Expr Lowering::scalar(const Val* val) {
  if (const auto* constant = dynamic_cast<const Scalar*>(val);
      constant != nullptr && constant->isConst()) {
    const ScalarValue& value = *constant->value();
    if (const auto* d = std::get_if<double>(&value)) {
      return Expr(*d);
    }
    if (const auto* b = std::get_if<bool>(&value)) {
      return Halide::cast(Halide::Bool(), Expr(*b ? 1 : 0));
    }
    return Halide::cast(Halide::Int(64), Expr(std::get<int64_t>(value)));
  }
  Expr argument = scalar_exprs_.at(const_cast<KernelSignature&>(signature_).valueArgument(val));
  if (val->dtype() == DataType::Bool) {
    return argument != Halide::cast(argument.type(), 0);
  }
  return argument;
}

Expr Lowering::extent(const TensorView* tv, int64_t axis) {
  size_t index = const_cast<KernelSignature&>(signature_).extentArgument(tv, axis);
  return Halide::cast(Halide::Int(32), scalar_exprs_.at(index));
}

Expr Lowering::index32(const Val* val) {
  return Halide::cast(Halide::Int(32), scalar(val));
}

// The reads of resize_gather_lowering.h through this lowering.
KernelReads Lowering::reads() {
  return {[this](const TensorView* tv, const Index& i) { return load(tv, i); },
          [this](const TensorView* tv, int64_t axis) { return extent(tv, axis); },
          [this](const Val* val) { return scalar(val); }};
}

// Defines `out`'s Func from its value at an output index.
void Lowering::define(const TensorView* out, const std::function<Expr(const Index&)>& body) {
  Func func(numbered("T", out->name()));
  std::vector<Var> vars = varsFor(out->rank());
  Index index(vars.rbegin(), vars.rend());  // outermost first
  Expr value = convert(body(index), storageType(out->dtype()));
  if (vars.empty()) {
    func() = value;
  } else {
    func(vars) = value;
  }
  funcs_[out] = func;
}

void Lowering::uniteAligned(const TensorView* out, const TensorView* in) {
  std::vector<IterDomain*> shape = in->shapeDomain();
  int64_t offset = out->rank() - static_cast<int64_t>(shape.size());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (!shape[axis]->isBroadcast()) {
      classes_.unite(in, static_cast<int64_t>(axis), out, static_cast<int64_t>(axis) + offset);
    }
  }
}

void Lowering::lower(const hostir::Expr* expr) {
  if (const auto* op = dynamic_cast<const LoadStoreOp*>(expr)) {
    const auto* in = op->in()->as<TensorView>();
    const auto* out = op->out()->as<TensorView>();
    uniteAligned(out, in);
    define(out, [&](const Index& i) { return load(in, i); });
  } else if (const auto* op = dynamic_cast<const UnaryOp*>(expr)) {
    lowerUnary(op);
  } else if (const auto* op = dynamic_cast<const BinaryOp*>(expr)) {
    lowerBinary(op);
  } else if (const auto* op = dynamic_cast<const WhereOp*>(expr)) {
    lowerWhere(op);
  } else if (const auto* op = dynamic_cast<const IotaOp*>(expr)) {
    lowerIota(op);
  } else if (const auto* op = dynamic_cast<const ReductionOp*>(expr)) {
    lowerReduction(op);
  } else if (const auto* op = dynamic_cast<const BroadcastOp*>(expr)) {
    const std::vector<int64_t>& flags = op->isBroadcastDims();
    int64_t in_axis = 0;
    for (size_t axis = 0; axis < flags.size(); ++axis) {
      if (flags[axis] == 0) {
        classes_.unite(op->in(), in_axis++, op->out(), static_cast<int64_t>(axis));
      }
    }
    define(op->out(), [&](const Index& i) {
      Index index;
      for (size_t axis = 0; axis < flags.size(); ++axis) {
        if (flags[axis] == 0) {
          index.push_back(i[axis]);
        }
      }
      return load(op->in(), index);
    });
  } else if (const auto* op = dynamic_cast<const SelectOp*>(expr)) {
    Expr n = extent(op->in(), op->dim());
    Expr position = index32(op->index());
    position = Halide::select(position < 0, position + n, position);
    define(op->out(), [&](const Index& i) {
      Index index(i);
      index.insert(index.begin() + op->dim(), position);
      return load(op->in(), index);
    });
  } else if (const auto* op = dynamic_cast<const SliceOp*>(expr)) {
    // torch's bounds: a negative start counts from the end, and the
    // start is clamped into [0, n]; in 64 bits, so a start beyond 32 bits
    // (-2^32 + 1 given at run time) is clamped, not truncated.
    Expr n = extent(op->in(), op->dim());
    Expr n64 = Halide::cast(Halide::Int(64), n);
    Expr start64 = Halide::cast(Halide::Int(64), scalar(op->start()));
    start64 = Halide::select(start64 < 0, start64 + n64, start64);
    Expr start = Halide::cast(Halide::Int(32),
                              Halide::clamp(start64, Halide::cast(Halide::Int(64), 0), n64));
    for (int64_t axis = 0; axis < op->out()->rank(); ++axis) {
      classes_.unite(op->in(), axis, op->out(), axis);
    }
    define(op->out(), [&](const Index& i) {
      Index index(i);
      index[op->dim()] = index[op->dim()] + start;
      return load(op->in(), index);
    });
  } else if (const auto* op = dynamic_cast<const PermuteOp*>(expr)) {
    const std::vector<int64_t>& dims = op->dims();
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      classes_.unite(op->in(), dims[axis], op->out(), static_cast<int64_t>(axis));
    }
    define(op->out(), [&](const Index& i) {
      Index index(dims.size());
      for (size_t axis = 0; axis < dims.size(); ++axis) {
        index[dims[axis]] = i[axis];
      }
      return load(op->in(), index);
    });
  } else if (const auto* op = dynamic_cast<const ReshapeOp*>(expr)) {
    lowerReshape(op);
  } else if (const auto* op = dynamic_cast<const PadOp*>(expr)) {
    Expr fill = scalarAs(op->value(), op->out()->dtype());
    define(op->out(), [&](const Index& i) { return padValue(op, i, reads(), fill); });
  } else if (const auto* op = dynamic_cast<const CatOp*>(expr)) {
    define(op->out(), [&](const Index& i) { return catValue(op, i, reads()); });
  } else if (const auto* op = dynamic_cast<const GatherOp*>(expr)) {
    define(op->out(), [&](const Index& i) { return gatherValue(op, i, reads()); });
  } else if (const auto* op = dynamic_cast<const FullOp*>(expr)) {
    Expr value = scalar(op->fillValue());
    define(op->out(),
           [&](const Index&) { return convert(value, computeType(op->out()->dtype())); });
  } else {
    HOSTIR_ASSERT(false, "kernel lowering has no case for ", expr->opName());
  }
}

void Lowering::lowerReshape(const ReshapeOp* op) {
  const TensorView* in = op->in();
  const TensorView* out = op->out();
  define(out, [&](const Index& i) {
    Expr linear = 0;
    for (int64_t axis = 0; axis < out->rank(); ++axis) {
      linear = linear * extent(out, axis) + i[axis];
    }
    Index index(static_cast<size_t>(in->rank()));
    for (int64_t axis = in->rank() - 1; axis >= 0; --axis) {
      Expr n = extent(in, axis);
      index[axis] = linear % n;
      linear = linear / n;
    }
    return load(in, index);
  });
}

}  // namespace halide_lowering

HalideKernel lowerToHalide(const Fusion& fusion, const KernelSignature& signature,
                           const KernelTarget& target) {
  HOSTIR_ASSERT(!signature.unsupported.has_value(), "lowering an unsupported segment");
  return halide_lowering::Lowering(fusion, signature, target).run();
}

}  // namespace hostir
