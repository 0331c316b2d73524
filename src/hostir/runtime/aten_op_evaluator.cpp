#include "hostir/runtime/aten_op_evaluator.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/ScalarOps.h>
#include <ATen/TensorUtils.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "hostir/ir/dispatch.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/contiguous_blocks.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/reduced_precision_gemm.h"

namespace hostir {

namespace {

// One visitor for both modes: `out_` is either given (write into it) or
// allocated here from the output's evaluated shape; view ops skip that and
// return their view (copied into `out_` when one was given).
class AtenOpEvaluator final : public OptInDispatch {
 public:
  AtenOpEvaluator(ExpressionEvaluator& ee, const at::Tensor* given_out)
      : ee_(ee), given_out_(given_out) {}

  at::Tensor result;

  void handle(const LoadStoreOp* op) override {
    at::Tensor in = tensor(op->in());
    if (given_out_ != nullptr) {
      result = given_out_->copy_(in);
    } else {
      result = in.clone(at::MemoryFormat::Contiguous);
    }
  }

  void handle(const UnaryOp* op) override {
    at::Tensor in = tensor(op->in());
    at::Tensor out = outputBuffer(op->out());
    if (op->type() == UnaryOpType::Cast) {
      result = out.copy_(in);
      return;
    }
    if (op->type() == UnaryOpType::Signbit) {
      // Widening keeps the sign bit (ATen's signbit lacks the 16-bit floats).
      bool narrow = in.scalar_type() == at::kHalf || in.scalar_type() == at::kBFloat16;
      result = out.copy_(at::signbit(narrow ? in.to(at::kFloat) : in));
      return;
    }
    if (in.is_complex() && !out.is_complex()) {  // real, imag, abs: a real result
      const UnaryOpType type = op->type();
      result = out.copy_(type == UnaryOpType::Real   ? at::real(in)
                         : type == UnaryOpType::Imag ? at::imag(in)
                                                     : at::abs(in));
      return;
    }
    if (in.scalar_type() != out.scalar_type()) {
      in = in.to(out.scalar_type());  // integer inputs of exp, log, ... compute in float
    }
    const bool is_gelu =
        op->type() == UnaryOpType::Gelu || op->type() == UnaryOpType::GeluDerivative;
    if (is_gelu && in.scalar_type() != at::kHalf) {
      auto blocks = contiguousBlocks(out, in);
      for (auto& [out_block, in_block] : blocks) {
        computeUnary(op->type(), out_block, in_block);
      }
      if (!blocks.empty()) {
        result = out;
        return;
      }
    }
    // ATen's CPU kernels lack Half for most math ops (exp, relu, gelu, ...),
    // and gelu_out writes wrong values into a non-contiguous buffer: compute
    // those in a fresh (float for Half) tensor and copy into the output.
    bool half_math = in.scalar_type() == at::kHalf && op->type() != UnaryOpType::Neg &&
                     op->type() != UnaryOpType::Abs;
    bool strided_gelu = is_gelu && !out.is_contiguous();
    if (half_math || strided_gelu) {
      at::Tensor tmp_in = half_math ? in.to(at::kFloat) : in;
      at::Tensor tmp_out = at::empty(tmp_in.sizes(), tmp_in.options());
      computeUnary(op->type(), tmp_out, tmp_in);
      result = out.copy_(tmp_out);
      return;
    }
    computeUnary(op->type(), out, in);
    result = out;
  }

  static void computeUnary(UnaryOpType type, at::Tensor& out, const at::Tensor& in) {
    switch (type) {
      case UnaryOpType::Neg: at::neg_out(out, in); break;
      case UnaryOpType::Abs: at::abs_out(out, in); break;
      case UnaryOpType::Exp: at::exp_out(out, in); break;
      case UnaryOpType::Log: at::log_out(out, in); break;
      case UnaryOpType::Sqrt: at::sqrt_out(out, in); break;
      case UnaryOpType::Relu: at::clamp_min_out(out, in, 0); break;
      case UnaryOpType::Sigmoid: at::sigmoid_out(out, in); break;
      case UnaryOpType::Tanh: at::tanh_out(out, in); break;
      case UnaryOpType::Gelu: at::gelu_out(out, in); break;
      case UnaryOpType::GeluDerivative:
        // A grad of ones (a stride-0 expanded one takes ATen's slow
        // broadcast loop: 42 ms against 14.5 on 4096 x 2048 floats,
        // benchmarks/bench_gelu_backward.py).
        at::gelu_backward_out(out, at::ones_like(in), in);
        break;
      case UnaryOpType::Cast: out.copy_(in); break;
      case UnaryOpType::Rsqrt: at::rsqrt_out(out, in); break;
      case UnaryOpType::Erf: at::erf_out(out, in); break;
      case UnaryOpType::Sin: at::sin_out(out, in); break;
      case UnaryOpType::Cos: at::cos_out(out, in); break;
      case UnaryOpType::Signbit: at::signbit_out(out, in); break;
      case UnaryOpType::Real:  // complex operands: handled above
      case UnaryOpType::Imag: HOSTIR_THROW(toString(type), " needs a complex operand");
    }
  }

  void handle(const BinaryOp* op) override {
    auto [lhs, rhs] = binaryOperands(op->lhs(), op->rhs());
    at::Tensor out = outputBuffer(op->out());
    switch (op->type()) {
      case BinaryOpType::Add: at::add_out(out, lhs, rhs); break;
      case BinaryOpType::Sub: at::sub_out(out, lhs, rhs); break;
      case BinaryOpType::Mul: at::mul_out(out, lhs, rhs); break;
      case BinaryOpType::Div: at::div_out(out, lhs, rhs); break;
      case BinaryOpType::Maximum: at::maximum_out(out, lhs, rhs); break;
      case BinaryOpType::Minimum: at::minimum_out(out, lhs, rhs); break;
      case BinaryOpType::Pow: at::pow_out(out, lhs, rhs); break;
      case BinaryOpType::Eq: at::eq_out(out, lhs, rhs); break;
      case BinaryOpType::Ne: at::ne_out(out, lhs, rhs); break;
      case BinaryOpType::Lt: at::lt_out(out, lhs, rhs); break;
      case BinaryOpType::Le: at::le_out(out, lhs, rhs); break;
      case BinaryOpType::Gt: at::gt_out(out, lhs, rhs); break;
      case BinaryOpType::Ge: at::ge_out(out, lhs, rhs); break;
      case BinaryOpType::Gcd: at::gcd_out(out, lhs, rhs); break;
      case BinaryOpType::NextAfter:
        out.copy_(nextafter(lhs.to(out.scalar_type()), rhs.to(out.scalar_type())));
        break;
      case BinaryOpType::BitwiseAnd: at::bitwise_and_out(out, lhs, rhs); break;
      case BinaryOpType::BitwiseOr: at::bitwise_or_out(out, lhs, rhs); break;
      case BinaryOpType::BitwiseXor: at::bitwise_xor_out(out, lhs, rhs); break;
      case BinaryOpType::BitwiseLeftShift:
      case BinaryOpType::BitwiseRightShift:
      case BinaryOpType::LogicalRightShift: out.copy_(shift(op->type(), lhs, rhs)); break;
      case BinaryOpType::Fmod: at::fmod_out(out, lhs, rhs); break;
      default: HOSTIR_THROW(op->displayName(), " is not a tensor op");
    }
    result = out;
  }

  // A max or min over a sharded axis of which this device holds no rows
  // (torch.chunk gives the last devices none: 1 column on 2 devices): its
  // part before the allreduce is the op's identity, which ATen's amax/amin
  // refuse to give for an empty axis. An unsharded empty axis stays an
  // error, as in torch.
  static bool isExtremumOfAnEmptyShard(const ReductionOp* op, const at::Tensor& in) {
    if ((op->type() != ReductionOpType::Max && op->type() != ReductionOpType::Min) ||
        in.numel() != 0) {
      return false;
    }
    const auto* tv = dynamic_cast<const TensorView*>(op->in());
    if (tv == nullptr) {
      return false;
    }
    const std::vector<int64_t> divisors = shardDivisors(tv);
    return std::any_of(op->axes().begin(), op->axes().end(), [&](int64_t axis) {
      return axis < static_cast<int64_t>(divisors.size()) && in.size(axis) == 0 &&
             divisors[static_cast<size_t>(axis)] > 1;
    });
  }

  // The identity of max (`of_max`) or min in `dtype`.
  static at::Scalar extremumIdentity(at::ScalarType dtype, bool of_max) {
    if (at::isFloatingType(dtype)) {
      const double infinity = std::numeric_limits<double>::infinity();
      return of_max ? -infinity : infinity;
    }
    if (dtype == at::kBool) {
      return !of_max;
    }
    int64_t value = 0;
    AT_DISPATCH_INTEGRAL_TYPES(dtype, "extremumIdentity", [&] {
      value = of_max ? static_cast<int64_t>(std::numeric_limits<scalar_t>::lowest())
                     : static_cast<int64_t>(std::numeric_limits<scalar_t>::max());
    });
    return value;
  }

  // A shift by a count outside [0, width) shifts every bit out (0, or -1
  // for a negative arithmetic right shift), as nvFuser's; ATen's left shift
  // leaves that undefined. The logical right shift is the arithmetic one
  // with the sign bits masked off.
  static at::Tensor shift(BinaryOpType type, const at::Tensor& lhs, const at::Tensor& rhs) {
    const at::ScalarType dtype = at::promote_types(lhs.scalar_type(), rhs.scalar_type());
    const at::Tensor a = lhs.to(dtype);
    const at::Tensor count = rhs.to(dtype);
    const int64_t width = static_cast<int64_t>(c10::elementSize(dtype)) * 8;
    const at::Tensor outside = at::logical_or(count < 0, count >= width);
    const at::Tensor in_range = at::where(outside, at::full_like(count, width - 1), count);
    if (type == BinaryOpType::BitwiseRightShift) {
      return at::bitwise_right_shift(a, in_range);
    }
    if (type == BinaryOpType::BitwiseLeftShift) {
      return at::where(outside, at::zeros_like(a), at::bitwise_left_shift(a, in_range));
    }
    // (a >> s) & (2^(width - s) - 1) for s in [1, width), a itself for s = 0.
    const at::Tensor s = at::clamp(count, 1, width - 1);
    const at::Tensor mask = at::bitwise_left_shift(at::ones_like(s), at::rsub(s, width)) - 1;
    const at::Tensor shifted = at::bitwise_and(at::bitwise_right_shift(a, s), mask);
    return at::where(outside, at::zeros_like(shifted), at::where(count == 0, a, shifted));
  }

  // torch.nextafter; for half and bfloat16 (ATen 1.13's CPU kernel has
  // neither) one step in their 16 bits, the comparisons in float (exact).
  static at::Tensor nextafter(const at::Tensor& lhs, const at::Tensor& rhs) {
    const at::ScalarType dtype = lhs.scalar_type();
    if (dtype != at::kHalf && dtype != at::kBFloat16) {
      return at::nextafter(lhs, rhs);
    }
    // (A scalar operand is a CPU tensor beside a meta one in shape inference.)
    const std::vector<at::Tensor> both = at::broadcast_tensors({lhs, rhs.to(lhs.device())});
    const at::Tensor a = both[0].to(at::kFloat);
    const at::Tensor b = both[1].to(at::kFloat);
    const at::Tensor step = at::where((a < b) == (a > 0), 1, -1).to(at::kShort);
    const at::Tensor bits = both[0].contiguous().view(at::kShort);
    const at::Tensor away = (bits + step).view(dtype).to(at::kFloat);
    const double tiny = at::scalar_tensor(1, at::kShort).view(dtype).item<double>();
    const at::Tensor from_zero = at::where(b > 0, tiny, -tiny);
    const at::Tensor result = at::where(a == b, b, at::where(a == 0, from_zero, away));
    return at::where(at::logical_or(a.isnan(), b.isnan()), a + b, result).to(dtype);
  }

  void handle(const ReductionOp* op) override {
    at::Tensor in = tensor(op->in());
    at::Tensor out = outputBuffer(op->out());
    const std::vector<int64_t>& axes = op->axes();
    if (isExtremumOfAnEmptyShard(op, in)) {
      out.fill_(extremumIdentity(out.scalar_type(), op->type() == ReductionOpType::Max));
      result = out;
      return;
    }
    switch (op->type()) {
      case ReductionOpType::Sum:
        at::sum_out(out, in, axes, /*keepdim=*/false, out.scalar_type());
        break;
      case ReductionOpType::Max: at::amax_out(out, in, axes, /*keepdim=*/false); break;
      case ReductionOpType::Min: at::amin_out(out, in, axes, /*keepdim=*/false); break;
      case ReductionOpType::Product: {
        // at::prod reduces one axis at a time; the highest first keeps the
        // remaining axis numbers valid.
        at::Tensor product = in.to(out.scalar_type());
        std::vector<int64_t> descending(axes.rbegin(), axes.rend());
        std::sort(descending.begin(), descending.end(), std::greater<>());
        for (int64_t axis : descending) {
          product = at::prod(product, axis);
        }
        out.copy_(product);
        break;
      }
    }
    result = out;
  }

  void handle(const BroadcastOp* op) override {
    at::Tensor view = tensor(op->in());
    const std::vector<int64_t>& flags = op->isBroadcastDims();
    for (size_t i = 0; i < flags.size(); ++i) {
      if (flags[i] != 0) {
        view = view.unsqueeze(static_cast<int64_t>(i));
      }
    }
    setView(view);
  }

  // ATen 1.13's matmul_out/linear_out with a 1-D left operand compute into
  // `out` unsqueezed (resizing it, with a warning, which would also break a
  // narrow-view buffer): compute those into a fresh tensor and copy.
  void handle(const MatmulOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor a = tensor(op->a());
    at::Tensor b = tensor(op->b());
    if (isPacked(op->b(), b)) {  // B in oneDNN's blocked layout (docs/targets.md)
      packedMatmulOut(out, a, b, Layout::dnnlBlocked(b.size(2), /*n_axis=*/1));
      result = out;
      return;
    }
    if (matmulInFloatOut(out, a, b)) {  // bfloat16/half where ATen has no fast GEMM
      result = out;
      return;
    }
    if (a.dim() == 1 && b.dim() >= 2) {
      result = out.copy_(at::matmul(a, b));
      return;
    }
    if ((b.dim() == 2 && matmulThroughDnnlOut(out, a, b)) ||
        (b.dim() == 3 && batchedMatmulThroughDnnlOut(out, a, b))) {
      result = out;
      return;
    }
    at::matmul_out(out, a, b);
    result = out;
  }

  void handle(const LinearOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor in = tensor(op->in());
    c10::optional<at::Tensor> bias;
    if (op->hasBias()) {
      bias = tensor(op->bias());
    }
    if (at::Tensor weight = tensor(op->weight()); isPacked(op->weight(), weight)) {
      // W^T in oneDNN's blocked layout (docs/targets.md).
      packedMatmulOut(out, in, weight, Layout::dnnlBlocked(weight.size(2), /*n_axis=*/0),
                      bias.has_value() ? std::optional<at::Tensor>(*bias) : std::nullopt);
      result = out;
      return;
    }
    if (linearInFloatOut(out, in, tensor(op->weight()), bias)) {  // bfloat16/half, as above
      result = out;
      return;
    }
    if (in.dim() == 1) {
      result = out.copy_(at::linear(in, tensor(op->weight()), bias));
      return;
    }
    if (!linearThroughDnnlOut(out, in, tensor(op->weight()), bias)) {
      at::linear_out(out, in, tensor(op->weight()), bias);
    }
    result = out;
  }

  void handle(const SelectOp* op) override {
    setView(tensor(op->in()).select(op->dim(), ee_.evaluateInt(op->index())));
  }

  void handle(const SliceOp* op) override {
    // Bounds past either end act as -n or n (torch's clamping); ATen 1.13
    // itself refuses values below -2^62, which it reserves for symbolic ints.
    const at::Tensor& in = tensor(op->in());
    const int64_t n = in.size(op->dim());
    auto bound = [&](const Val* val) { return std::clamp(ee_.evaluateInt(val), -n, n); };
    setView(in.slice(op->dim(), bound(op->start()), bound(op->stop())));
  }

  void handle(const PermuteOp* op) override {
    setView(tensor(op->in()).permute(op->dims()));
  }

  void handle(const ReshapeOp* op) override {
    // Into a given buffer, its sizes are the target shape (extents of `out`
    // need not be bound where the op runs).
    std::vector<int64_t> sizes =
        given_out_ != nullptr ? given_out_->sizes().vec() : ee_.evaluateShape(op->out());
    const at::Tensor& in = tensor(op->in());
    // (Sizes of another element count go to ATen's reshape, whose error
    // names them.)
    if (given_out_ != nullptr && given_out_->is_contiguous() && given_out_->numel() == in.numel() &&
        !at::detail::computeStride(in.sizes(), in.strides(), sizes).has_value()) {
      // No view of `in` has the new shape (merged heads): one copy into the
      // given buffer, read as `in`'s shape, instead of ATen's clone into
      // fresh memory and a second copy from it.
      given_out_->view(in.sizes()).copy_(in);
      result = *given_out_;
      return;
    }
    setView(in.reshape(sizes));
  }

  // The selected operands in out's dtype (hostir has promoted them, as
  // torch.where does; ATen 1.13's where_out wants them to match) and on
  // out's device: ATen 1.13 copies a CPU number in the `a` position onto a
  // meta output (the shape checks) and refuses the cross-device copy.
  void handle(const WhereOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor a = operand(op->a()).to(out.device(), out.scalar_type());
    at::Tensor b = operand(op->b()).to(out.device(), out.scalar_type());
    at::where_out(out, tensor(op->condition()), a, b);
    result = out;
  }

  // start + i * step: in int64 for an integer dtype, else in double (as
  // torch.arange), then rounded into out's dtype.
  void handle(const IotaOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    int64_t length = ee_.evaluateInt(op->length());
    bool integral = at::isIntegralType(out.scalar_type(), /*includeBool=*/false);
    at::Tensor values =
        at::arange(length, at::TensorOptions().dtype(integral ? at::kLong : at::kDouble));
    values.mul_(toAtenScalar(ee_.evaluate(op->step())))
        .add_(toAtenScalar(ee_.evaluate(op->start())));
    result = out.copy_(values);
  }

  // torch.nn.functional.pad's constant mode, written as a fill and a copy of
  // the part of `in` that stays (a negative run-time width crops, as torch's
  // does): ATen 1.13's constant_pad_nd refuses an empty axis even under
  // widths (0, 0), which every axis has here.
  void handle(const PadOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor kept_in = tensor(op->in());
    at::Tensor kept_out = out;
    for (int64_t axis = 0; axis < op->in()->rank(); ++axis) {
      const int64_t left = ee_.evaluateInt(op->left(axis));
      const int64_t right = ee_.evaluateInt(op->right(axis));
      const int64_t from = std::max<int64_t>(0, -left);
      const int64_t kept = kept_in.size(axis) - from - std::max<int64_t>(0, -right);
      HOSTIR_CHECK(kept >= 0, "pad: widths (", left, ", ", right, ") of axis ", axis,
                   " crop more than its ", kept_in.size(axis),
                   " elements; valid: widths whose sum is at least minus the extent");
      kept_in = kept_in.narrow(axis, from, kept);
      kept_out = kept_out.narrow(axis, std::max<int64_t>(0, left), kept);
    }
    out.fill_(toAtenScalar(ee_.evaluate(op->value())));
    kept_out.copy_(kept_in);
    result = out;
  }

  void handle(const CatOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    std::vector<at::Tensor> inputs;
    for (const Val* input : op->inputs()) {
      inputs.push_back(tensor(input));
    }
    result = at::cat_out(out, inputs, op->dim());
  }

  // Not the out= variants: ATen 1.13's meta index_select_out (the shape
  // checks run on meta tensors) resizes `out` to the input's shape.
  void handle(const GatherOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor in = tensor(op->in());
    at::Tensor index = tensor(op->index()).to(at::kLong);
    result =
        out.copy_(op->kind() == GatherKind::IndexSelect ? at::index_select(in, op->dim(), index)
                                                        : at::gather(in, op->dim(), index));
  }

  // Half sums in float, rounded once at the end (ATen's CPU cumsum lacks it).
  void handle(const ScanOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor in = tensor(op->in());
    at::ScalarType dtype = out.scalar_type() == at::kHalf ? at::kFloat : out.scalar_type();
    result = out.copy_(at::cumsum(in, op->dim(), dtype));
  }

  void handle(const ScatterOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor in = tensor(op->in());
    at::Tensor index = tensor(op->index()).to(at::kLong);
    if (op->src()->vtype() == ValType::TensorView) {
      result = out.copy_(at::scatter(in, op->dim(), index, tensor(op->src())));
    } else {
      result = out.copy_(at::scatter(in, op->dim(), index, toAtenScalar(ee_.evaluate(op->src()))));
    }
  }

  // Positions that repeat add up (ATen's CPU kernels add in index order).
  void handle(const ScatterAddOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    at::Tensor in = tensor(op->in());
    at::Tensor index = tensor(op->index()).to(at::kLong);
    at::Tensor src = tensor(op->src());
    result = out.copy_(op->kind() == ScatterAddKind::IndexAdd
                           ? at::index_add(in, op->dim(), index, src)
                           : at::scatter_add(in, op->dim(), index, src));
  }

  // Drawn in float for Half and BFloat16 (ATen's CPU normal_ lacks them).
  // A seeded op's generator starts from seed and offset mixed (splitmix64's
  // constant), so neighbouring offsets give unrelated streams. A meta
  // output (the shape checks) needs no values.
  void handle(const RandomOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    if (out.is_meta()) {
      result = out;
      return;
    }
    c10::optional<at::Generator> generator;
    if (op->hasSeed()) {
      auto seed = static_cast<uint64_t>(ee_.evaluateInt(op->seed()));
      auto offset = static_cast<uint64_t>(ee_.evaluateInt(op->offset()));
      generator = at::detail::createCPUGenerator(seed ^ (offset * 0x9E3779B97F4A7C15ULL));
    }
    bool narrow = out.scalar_type() == at::kHalf || out.scalar_type() == at::kBFloat16;
    at::Tensor values = narrow ? at::empty(out.sizes(), out.options().dtype(at::kFloat)) : out;
    const double a = toAtenScalar(ee_.evaluate(op->a())).toDouble();
    const double b = toAtenScalar(ee_.evaluate(op->b())).toDouble();
    if (op->kind() == RandomKind::Normal) {
      values.normal_(a, b, generator);
    } else {
      values.uniform_(a, b, generator);
    }
    result = narrow ? out.copy_(values) : out;
  }

  void handle(const FullOp* op) override {
    at::Tensor out = outputBuffer(op->out());
    out.fill_(toAtenScalar(ee_.evaluate(op->fillValue())));
    result = out;
  }

 private:
  at::Tensor tensor(const Val* val) {
    return ee_.evaluateTensor(val);
  }

  // A scalar operand becomes a wrapped-number tensor, so that ATen promotes
  // it as a Python scalar (it does not widen the tensor's dtype).
  at::Tensor operand(const Val* val) {
    if (val->vtype() == ValType::TensorView) {
      return tensor(val);
    }
    return wrappedNumber(toAtenScalar(ee_.evaluate(val)), std::nullopt);
  }

  // A binary op's operands. A number next to a tensor is made directly in
  // the dtype ATen would promote it to where the tensor is of a kind at
  // least as wide (a float or double tensor and any number, an integer
  // tensor and an integer): the values are the same, and ATen skips
  // converting the wrapped number on every call. Not for half and bfloat16,
  // whose kernels read the unconverted number.
  std::pair<at::Tensor, at::Tensor> binaryOperands(const Val* lhs, const Val* rhs) {
    const bool lhs_tensor = lhs->vtype() == ValType::TensorView;
    const bool rhs_tensor = rhs->vtype() == ValType::TensorView;
    if (lhs_tensor == rhs_tensor) {
      return {operand(lhs), operand(rhs)};
    }
    at::Tensor partner = tensor(lhs_tensor ? lhs : rhs);
    at::Tensor number =
        wrappedNumber(toAtenScalar(ee_.evaluate(lhs_tensor ? rhs : lhs)), partner.scalar_type());
    return lhs_tensor ? std::pair{partner, number} : std::pair{number, partner};
  }

  at::Tensor wrappedNumber(const at::Scalar& scalar, std::optional<at::ScalarType> partner) {
    // A complex number is wider than any real tensor (torch: float * 1j is
    // complex64).
    const bool partner_is_wider =
        partner.has_value() && !scalar.isComplex() &&
        (*partner == at::kFloat || *partner == at::kDouble ||
         (at::isIntegralType(*partner, /*includeBool=*/false) && !scalar.isFloatingPoint()));
    at::Tensor wrapped = partner_is_wider
                             ? at::detail::scalar_tensor_static(scalar, *partner, at::kCPU)
                             : c10::scalar_to_tensor(scalar);
    wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
    return wrapped;
  }

  at::Tensor outputBuffer(const Val* out) {
    if (given_out_ != nullptr) {
      return *given_out_;
    }
    return at::empty(ee_.evaluateShape(out->as<TensorView>()),
                     at::TensorOptions().dtype(toAtenType(out->dtype())));
  }

  void setView(const at::Tensor& view) {
    result = given_out_ != nullptr ? given_out_->copy_(view) : view;
  }

  ExpressionEvaluator& ee_;
  const at::Tensor* given_out_;
};

std::string firstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

at::Tensor evaluate(const Expr* expr, ExpressionEvaluator& ee, const at::Tensor* out) {
  AtenOpEvaluator evaluator(ee, out);
  try {
    evaluator.dispatch(expr);
  } catch (const c10::Error& error) {
    HOSTIR_THROW("ATen failed to evaluate\n", expr->toString(1), "  ",
                 firstLine(error.what_without_backtrace()));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& error) {
    // Some ATen checks (e.g. reshape's size inference) throw std::runtime_error.
    HOSTIR_THROW("ATen failed to evaluate\n", expr->toString(1), "  ", firstLine(error.what()));
  }
  return evaluator.result;
}

}  // namespace

std::vector<at::Tensor> evaluateFusionOp(const Expr* expr, ExpressionEvaluator& ee) {
  return {evaluate(expr, ee, nullptr)};
}

void evaluateFusionOpInto(const Expr* expr, ExpressionEvaluator& ee, const at::Tensor& out) {
  evaluate(expr, ee, &out);
}

bool isAtenEvaluable(const Expr* expr) {
  return hasTrait(expr, OpTrait::AtenEvaluable);
}

}  // namespace hostir
