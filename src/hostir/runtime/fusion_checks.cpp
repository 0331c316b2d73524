#include "hostir/runtime/fusion_checks.h"

#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "hostir/ir/iter_domain.h"
#include "hostir/ir/one_line.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {

// Every tensor of the fusion: its inputs and every expr's tensor outputs.
std::vector<const TensorView*> allTensors(const Fusion& fusion) {
  std::vector<const TensorView*> tensors;
  std::unordered_set<const Val*> seen;
  auto add = [&](const Val* val) {
    if (const auto* tv = dynamic_cast<const TensorView*>(val);
        tv != nullptr && seen.insert(tv).second) {
      tensors.push_back(tv);
    }
  };
  for (const Val* input : fusion.inputs()) {
    add(input);
  }
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* input : expr->inputs()) {
      add(input);
    }
    for (const Val* output : expr->outputs()) {
      add(output);
    }
  }
  return tensors;
}

std::string firstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string sizesOf(const std::vector<int64_t>& sizes) {
  std::ostringstream ss;
  ss << "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    ss << (i == 0 ? "" : ", ") << sizes[i];
  }
  ss << "]";
  return ss.str();
}

// "T0_g_float[iS0{i0}, iS1{i1}] of sizes [4, 4], T1_g_float[...] of sizes [8, 4]"
std::string operandSizes(const Expr* expr, ExpressionEvaluator& ee) {
  std::string text;
  for (const Val* input : expr->inputs()) {
    const auto* tv = dynamic_cast<const TensorView*>(input);
    if (tv == nullptr) {
      continue;
    }
    text += text.empty() ? "" : ", ";
    text += tv->toInlineString();
    if (ee.isBound(tv)) {
      text += " of sizes " + sizesOf(ee.evaluateTensor(tv).sizes().vec());
    }
  }
  return text;
}

// The op in one line: `T2_g_float[...] = add(T0_g_float[...], T1_g_float[...])`.
std::string opLine(const Expr* expr) {
  return oneLine(expr->toString());
}

void checkExtents(const TensorView* tv, const std::vector<int64_t>& sizes, const Expr* producer) {
  int64_t bytes = static_cast<int64_t>(dataTypeSize(tv->dtype()));
  for (size_t axis = 0; axis < sizes.size(); ++axis) {
    HOSTIR_CHECK(sizes[axis] >= 0, "negative extent: ", tv->toInlineString(), " axis ", axis,
                 " evaluates to ", sizes[axis],
                 producer != nullptr ? " as the output of " + opLine(producer) : std::string(),
                 "; extents must be >= 0 (e.g. a slice needs start <= stop)");
  }
  for (int64_t size : sizes) {
    HOSTIR_CHECK(!__builtin_mul_overflow(bytes, size, &bytes),
                 "tensor too large: ", tv->toInlineString(), " of sizes ", sizesOf(sizes),
                 " has more than 2^63 bytes",
                 producer != nullptr ? " (the output of " + opLine(producer) + ")" : std::string());
  }
}

}  // namespace

std::vector<int64_t> inputSignature(const std::vector<PolymorphicValue>& inputs) {
  std::vector<int64_t> signature;
  for (const PolymorphicValue& input : inputs) {
    signature.push_back(static_cast<int64_t>(input.index()));
    if (const auto* tensor = std::get_if<at::Tensor>(&input)) {
      if (!tensor->defined()) {
        signature.push_back(-1);
        continue;
      }
      signature.push_back(static_cast<int64_t>(tensor->scalar_type()));
      signature.push_back(tensor->dim());
      for (int64_t size : tensor->sizes()) {
        signature.push_back(size);
      }
    } else if (const auto* integer = std::get_if<int64_t>(&input)) {
      signature.push_back(*integer);
    } else if (const auto* real = std::get_if<double>(&input)) {
      int64_t bits = 0;
      std::memcpy(&bits, real, sizeof(bits));
      signature.push_back(bits);
    } else if (const auto* flag = std::get_if<bool>(&input)) {
      signature.push_back(*flag ? 1 : 0);
    }
  }
  return signature;
}

void checkSplitFactors(const Fusion& fusion, ExpressionEvaluator& ee) {
  std::unordered_set<const Expr*> seen;
  for (const TensorView* tv : allTensors(fusion)) {
    std::vector<const IterDomain*> pending(tv->getLoopDomain().begin(), tv->getLoopDomain().end());
    while (!pending.empty()) {
      const IterDomain* id = pending.back();
      pending.pop_back();
      const Expr* definition = id->definition();
      if (definition == nullptr || !seen.insert(definition).second) {
        continue;
      }
      for (const Val* input : definition->inputs()) {
        if (const auto* input_id = dynamic_cast<const IterDomain*>(input)) {
          pending.push_back(input_id);
        }
      }
      const auto* split = dynamic_cast<const Split*>(definition);
      if (split == nullptr) {
        continue;
      }
      const auto* factor = dynamic_cast<const Scalar*>(split->factor());
      if (factor == nullptr || factor->isConst()) {
        continue;  // constant factors are checked when the split is made
      }
      const int64_t value = ee.evaluateInt(factor);
      HOSTIR_CHECK(value > 0, "split factor ", factor->toInlineString(), " evaluates to ", value,
                   " in the split of ", split->in()->toInlineString(), " of ", tv->toInlineString(),
                   "; a split factor must be positive (",
                   split->innerSplit() ? "the size of each part" : "the number of parts", ")");
    }
  }
}

FusionChecks::FusionChecks(const Fusion& fusion) : fusion_(fusion) {}

size_t FusionChecks::checkedSignatures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return checked_.size();
}

void FusionChecks::check(const std::vector<PolymorphicValue>& inputs,
                         const std::vector<int64_t>& signature) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (checked_.count(signature) != 0) {
      return;
    }
  }
  checkOnce(inputs);
  std::lock_guard<std::mutex> lock(mutex_);
  // Bounded: a program fed ever-new shapes re-checks rather than grows.
  constexpr size_t kMaxSignatures = 4096;
  if (checked_.size() >= kMaxSignatures) {
    checked_.clear();
  }
  checked_.insert(signature);
}

void FusionChecks::checkOnce(const std::vector<PolymorphicValue>& inputs) {
  const Fusion& fusion = fusion_;
  HOSTIR_ASSERT(inputs.size() == fusion.inputs().size(), "inputs were not validated");
  ExpressionEvaluator ee;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (const auto* tensor = std::get_if<at::Tensor>(&inputs[i]); tensor != nullptr) {
      if (!tensor->defined()) {
        ee.bind(fusion.inputs()[i], *tensor);
        continue;
      }
      ee.bind(fusion.inputs()[i], at::empty_strided(tensor->sizes(), tensor->strides(),
                                                    tensor->options().device(at::kMeta)));
    } else {
      ee.bind(fusion.inputs()[i], inputs[i]);
    }
  }
  checkSplitFactors(fusion, ee);

  for (const Expr* expr : fusion.exprs()) {
    if (!isAtenEvaluable(expr)) {
      continue;  // scalar arithmetic: evaluated on demand
    }
    bool operands_here = true;
    for (const Val* input : expr->inputs()) {
      if (input->vtype() == ValType::TensorView &&
          !(ee.isBound(input) && ee.evaluateTensor(input).defined())) {
        operands_here = false;
      }
    }
    if (!operands_here) {
      continue;  // not computed on this device
    }
    auto* out_tv = expr->output(0)->as<TensorView>();
    std::vector<int64_t> expected = ee.evaluateShape(out_tv);
    checkExtents(out_tv, expected, expr);
    at::Tensor out = at::empty(
        expected, at::TensorOptions().dtype(toAtenType(out_tv->dtype())).device(at::kMeta));
    try {
      evaluateFusionOpInto(expr, ee, out);
    } catch (const std::exception& error) {
      // evaluateFusionOpInto says "ATen failed to evaluate\n<expr>  <cause>":
      // keep the cause.
      std::string cause = c10ErrorMessage(error);
      if (cause.find("from the 'Meta' backend") != std::string::npos) {
        // This ATen has no meta kernel for the op (e.g. abs.out in 1.13):
        // it cannot be checked without data; its output keeps the extents
        // the fusion gives it.
        ee.bind(out_tv, out);
        continue;
      }
      const size_t last_line = cause.rfind('\n');
      if (last_line != std::string::npos) {
        cause = cause.substr(last_line + 1);
      }
      while (!cause.empty() && cause.front() == ' ') {
        cause.erase(cause.begin());
      }
      HOSTIR_THROW(firstLine(cause), " (in ", opLine(expr), ", with ", operandSizes(expr, ee), ")");
    }
    HOSTIR_CHECK(out.sizes().vec() == expected, "size mismatch: ", opLine(expr), " computes sizes ",
                 sizesOf(out.sizes().vec()), " from ", operandSizes(expr, ee),
                 ", but the fusion gives ", out_tv->toInlineString(), " the sizes ",
                 sizesOf(expected), "; operands whose extents the fusion ties together must agree");
    ee.bind(out_tv, out);
  }
}

}  // namespace hostir
