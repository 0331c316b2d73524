#include "hostir/kernels/kernel_signature.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "hostir/ir/gather_ops.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

size_t KernelSignature::valueArgument(const Val* value) {
  for (size_t i = 0; i < scalars.size(); ++i) {
    if (scalars[i].kind == KernelScalarArgument::Kind::Value && scalars[i].value == value) {
      return i;
    }
  }
  KernelScalarArgument argument;
  argument.kind = KernelScalarArgument::Kind::Value;
  argument.value = value;
  argument.floating = isFloatingType(value->dtype());
  scalars.push_back(argument);
  return scalars.size() - 1;
}

bool mayRefuseData(const Fusion& fusion) {
  const std::vector<Expr*> exprs = fusion.exprs();
  return std::any_of(exprs.begin(), exprs.end(), [](const Expr* expr) {
    const auto* unary = dynamic_cast<const UnaryOp*>(expr);
    return unary != nullptr &&
           (unary->type() == UnaryOpType::Sin || unary->type() == UnaryOpType::Cos);
  });
}

size_t KernelSignature::extentArgument(const TensorView* tensor, int64_t axis) {
  for (size_t i = 0; i < scalars.size(); ++i) {
    if (scalars[i].kind == KernelScalarArgument::Kind::Extent && scalars[i].tensor == tensor &&
        scalars[i].axis == axis) {
      return i;
    }
  }
  KernelScalarArgument argument;
  argument.kind = KernelScalarArgument::Kind::Extent;
  argument.tensor = tensor;
  argument.axis = axis;
  scalars.push_back(argument);
  return scalars.size() - 1;
}

namespace {

// The ops the kernel lowering takes (halide_lowering.cpp has a case for
// each); anything else runs through ATen.
bool isCompilableOp(const Expr* expr) {
  if (expr->isA<MatmulOp>() || expr->isA<LinearOp>()) {
    return false;  // BLAS, through ATen (docs/kernels.md)
  }
  if (const auto* unary = dynamic_cast<const UnaryOp*>(expr)) {
    // The kernels' erf (erf, and gelu's and its derivative's), sin and cos
    // (vector_trig.h) are accurate to float32, not float64: a float64 one
    // runs through ATen.
    switch (unary->type()) {
      case UnaryOpType::Gelu:
      case UnaryOpType::GeluDerivative:
      case UnaryOpType::Erf:
      case UnaryOpType::Sin:
      case UnaryOpType::Cos: return unary->out()->dtype() != DataType::Double;
      default: return true;
    }
  }
  if (const auto* binary = dynamic_cast<const BinaryOp*>(expr)) {
    if (binary->type() == BinaryOpType::Pow) {
      // An integer power needs exponentiation by squaring with torch's
      // rules for negative exponents: through ATen.
      return isFloatingType(binary->out()->dtype());
    }
    if (binary->type() == BinaryOpType::Fmod) {
      // An integer fmod by zero raises ATen's ZeroDivisionError: ATen.
      return isFloatingType(binary->out()->dtype());
    }
    // CeilDiv and Mod (integer floor semantics) run through ATen.
    return binary->type() != BinaryOpType::CeilDiv && binary->type() != BinaryOpType::Mod;
  }
  return expr->isA<LoadStoreOp>() || expr->isA<UnaryOp>() || expr->isA<ReductionOp>() ||
         expr->isA<BroadcastOp>() || expr->isA<SelectOp>() || expr->isA<SliceOp>() ||
         expr->isA<PermuteOp>() || expr->isA<ReshapeOp>() || expr->isA<FullOp>() ||
         expr->isA<WhereOp>() || expr->isA<IotaOp>() || expr->isA<PadOp>() || expr->isA<CatOp>() ||
         expr->isA<GatherOp>();
}

std::string exactDouble(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%a", value);
  return text;
}

std::string canonicalAttribute(const Attribute& attribute) {
  if (const auto* d = std::get_if<double>(&attribute)) {
    return exactDouble(*d);
  }
  return toString(attribute);
}

// Names Vals by first appearance, so the canonical form does not depend on
// the IR's name numbers.
class CanonicalWriter {
 public:
  std::string name(const Val* val) {
    auto [it, inserted] = names_.emplace(val, names_.size());
    std::string text = "v";
    text += std::to_string(it->second);
    if (!inserted) {
      return text;
    }
    text += ":";
    text += toString(val->dtype());
    if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
      text += "[";
      for (const IterDomain* id : tv->getLogicalDomain()) {
        text += id->isReduction() ? 'r' : id->isBroadcast() ? 'b' : 'i';
      }
      text += "]";
    } else if (const auto* scalar = dynamic_cast<const Scalar*>(val);
               scalar != nullptr && scalar->isConst()) {
      const ScalarValue& value = *scalar->value();
      text += "=";
      if (const auto* d = std::get_if<double>(&value)) {
        text += exactDouble(*d);
      } else {
        text += toString(value);
      }
    } else {
      text += "=sym";
    }
    return text;
  }

 private:
  std::unordered_map<const Val*, size_t> names_;
};

// The extents an op's lowering reads (halide_lowering.cpp asks for exactly
// these): a reduction's reduced axes, a reshape's every axis, the sliced or
// selected axis (to normalize a negative or out-of-range bound).
void addExtentArguments(const Expr* expr, KernelSignature& signature) {
  if (const auto* reduction = dynamic_cast<const ReductionOp*>(expr)) {
    for (int64_t axis : reduction->axes()) {
      signature.extentArgument(reduction->in(), axis);
    }
  } else if (const auto* reshape = dynamic_cast<const ReshapeOp*>(expr)) {
    for (int64_t axis = 0; axis < reshape->in()->rank(); ++axis) {
      signature.extentArgument(reshape->in(), axis);
    }
    for (int64_t axis = 0; axis < reshape->out()->rank(); ++axis) {
      signature.extentArgument(reshape->out(), axis);
    }
  } else if (const auto* slice = dynamic_cast<const SliceOp*>(expr)) {
    signature.extentArgument(slice->in(), slice->dim());
  } else if (const auto* select = dynamic_cast<const SelectOp*>(expr)) {
    signature.extentArgument(select->in(), select->dim());
  } else if (const auto* pad = dynamic_cast<const PadOp*>(expr)) {
    for (int64_t axis = 0; axis < pad->in()->rank(); ++axis) {
      signature.extentArgument(pad->in(), axis);
    }
  } else if (const auto* cat = dynamic_cast<const CatOp*>(expr)) {
    for (const Val* input : cat->inputs()) {
      signature.extentArgument(input->as<TensorView>(), cat->dim());
    }
  } else if (const auto* gather = dynamic_cast<const GatherOp*>(expr)) {
    signature.extentArgument(gather->in(), gather->dim());
  }
}

}  // namespace

namespace {

// A segment whose only op is a transcendental (a chunk's GELU between two
// GEMMs) saves no pass over memory by compiling, and ATen's vectorized
// kernel evaluates it with FMAs, which a strict-float kernel may not: GELU
// on [1024, 4096] floats took 54 ms compiled vs 23 ms in ATen (1 thread,
// docs/kernels.md). Such a segment runs through ATen.
std::optional<std::string> loneTranscendental(const Fusion& fusion) {
  const UnaryOp* lone = nullptr;
  for (const Expr* expr : fusion.exprs()) {
    if (expr->outputs().empty() || expr->output(0)->vtype() != ValType::TensorView) {
      continue;
    }
    const auto* unary = dynamic_cast<const UnaryOp*>(expr);
    if (lone != nullptr || unary == nullptr) {
      return std::nullopt;
    }
    lone = unary;
  }
  if (lone == nullptr) {
    return std::nullopt;
  }
  switch (lone->type()) {
    case UnaryOpType::Exp:
    case UnaryOpType::Log:
    case UnaryOpType::Sigmoid:
    case UnaryOpType::Tanh:
    case UnaryOpType::Gelu:
    case UnaryOpType::Erf:
    case UnaryOpType::Sin:  // compiled alone 1.3x (sin) and 1.04x (cos) ATen's
    case UnaryOpType::Cos:
      return "a lone " + lone->displayName() +
             " saves no pass over memory by compiling, and ATen's vectorized kernel is faster";
    default: return std::nullopt;
  }
}

// Halide has no complex type: a segment holding a complex tensor or a
// complex constant runs through ATen, whose kernels have complex ones.
std::optional<std::string> complexValue(const Fusion& fusion) {
  for (const Expr* expr : fusion.exprs()) {
    for (const auto* vals : {&expr->inputs(), &expr->outputs()}) {
      for (const Val* val : *vals) {
        if (isComplexType(val->dtype())) {
          return expr->displayName() + " reads or writes the complex " + val->toInlineString() +
                 " (" + toString(val->dtype()) + "); Halide has no complex type";
        }
      }
    }
  }
  return std::nullopt;
}

// A gather's indices are checked against the extent before the kernel runs
// (runtime/resize_gather_checks.h: an index out of range is ATen's error),
// which needs them before the kernel computes anything: a gather whose index
// the segment computes runs through ATen.
std::optional<std::string> computedGatherIndex(const Fusion& fusion, const Expr* expr) {
  const auto* gather = dynamic_cast<const GatherOp*>(expr);
  if (gather == nullptr || std::find(fusion.inputs().begin(), fusion.inputs().end(),
                                     gather->index()) != fusion.inputs().end()) {
    return std::nullopt;
  }
  return gather->displayName() + " reads the index " + gather->index()->toInlineString() +
         " computed in its segment; the kernel checks indices against the extent before it "
         "runs, so it takes them from the segment's inputs only";
}

}  // namespace

KernelSignature analyzeSegment(const Fusion& fusion) {
  KernelSignature signature;
  CanonicalWriter writer;
  std::ostringstream canonical;
  canonical << "in(";
  for (const Val* input : fusion.inputs()) {
    canonical << writer.name(input) << " ";
    if (const auto* tv = dynamic_cast<const TensorView*>(input)) {
      signature.tensor_inputs.push_back(tv);
    } else {
      signature.valueArgument(input);
    }
  }
  canonical << ")\n";
  for (const Expr* expr : fusion.exprs()) {
    if (expr->outputs().empty() || expr->output(0)->vtype() != ValType::TensorView) {
      continue;  // scalar arithmetic: evaluated by the caller where an op reads it
    }
    if (std::optional<std::string> why = computedGatherIndex(fusion, expr)) {
      if (!signature.unsupported.has_value()) {
        signature.unsupported = *why;
      }
      continue;
    }
    if (!isCompilableOp(expr)) {
      if (!signature.unsupported.has_value()) {
        signature.unsupported = expr->displayName() + " has no kernel lowering (" +
                                expr->output(0)->toInlineString() + ")";
      }
      continue;
    }
    canonical << expr->opName() << "{";
    for (const Attribute& attribute : expr->attributes()) {
      canonical << canonicalAttribute(attribute) << ";";
    }
    canonical << "}(";
    for (const Val* input : expr->inputs()) {
      canonical << writer.name(input) << " ";
      // Scalar operands that are not constants become run-time arguments.
      const auto* scalar = dynamic_cast<const Scalar*>(input);
      if (input->vtype() != ValType::TensorView && (scalar == nullptr || !scalar->isConst())) {
        signature.valueArgument(input);
      }
    }
    addExtentArguments(expr, signature);
    canonical << ")->(";
    for (const Val* output : expr->outputs()) {
      canonical << writer.name(output) << " ";
    }
    canonical << ")\n";
  }
  canonical << "out(";
  for (const Val* output : fusion.outputs()) {
    canonical << writer.name(output) << " ";
    const auto* tv = dynamic_cast<const TensorView*>(output);
    if (tv == nullptr) {
      signature.unsupported = "scalar output " + output->toInlineString();
      continue;
    }
    if (tv->hasEncoding() && tv->encoding()->isResolved() &&
        !tv->encoding()->resolved->isIdentity()) {
      signature.unsupported = "output " + tv->toInlineString() + " is written in panels";
    }
    signature.outputs.push_back(tv);
  }
  canonical << ")\n";
  for (const TensorView* tv : signature.tensor_inputs) {
    if (tv->hasEncoding() && tv->encoding()->isResolved() &&
        !tv->encoding()->resolved->isIdentity()) {
      signature.unsupported = "input " + tv->toInlineString() + " is read in panels";
    }
  }
  if (fusion.exprs().empty()) {
    signature.unsupported = "the segment computes nothing";
  }
  if (!signature.unsupported.has_value()) {
    signature.unsupported = complexValue(fusion);
  }
  if (!signature.unsupported.has_value()) {
    signature.unsupported = loneTranscendental(fusion);
  }
  signature.canonical = canonical.str();
  return signature;
}

}  // namespace hostir
