#pragma once

// A generator of random single-device fusions for differential fuzzing
// (issue 11): each program is built twice from one seed, once as a hostir
// fusion (with random Stream axes, outer splits into chunks, 1-7 streams,
// preallocated outputs or not) and once as the same computation in plain
// ATen, the reference. The fuzz test lowers and runs the fusion through
// HostExecutor and compares.
//
// The op set is that of arith.h: unary ops, binary ops between tensors and
// with scalars, broadcasts, reductions (sum/max/min, any axis), matmul,
// linear with and without bias, slices (constant bounds, and with
// GeneratorOptions::runtime_slices bounds that are scalar inputs, in and out
// of range and negative, clamped as torch clamps), permutes, casts. Shapes
// include 0, 1 and extents that chunk counts do not divide.
//
// The fuzz test also gives input 0 as the buffer of an output of its shape
// and expects the aliasing error.
//
// The sharded fuzzer (tests/multidevice/sharded_fuzz_test.cpp) reuses the
// generator with GeneratorOptions: its own shapes and, instead of Stream
// axes, hooks that put every input and every value on a device mesh with a
// random DIDx sharding.

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/integer_ops.h"
#include "fuzz/rounding_bound.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir::fuzz {

struct FuzzProgram {
  uint64_t seed = 0;
  std::unique_ptr<Fusion> fusion;
  // The tensor inputs in fusion order; the scalar inputs (run-time slice
  // bounds) are scalar_inputs, in fusion order among them.
  std::vector<at::Tensor> inputs;
  std::vector<int64_t> scalar_inputs;
  std::vector<at::Tensor> expected;
  // Per output, a bound on the rounding of any float32 evaluation of it
  // (float64, expected's sizes; rounding_bound.h): compare with
  // roundingExcess(actual, expected, tolerance) <= 1.
  std::vector<at::Tensor> tolerance;
  int number_of_streams = 1;
  bool preallocate_outputs = false;
  // One line per op, in the reference's terms, to read a failure.
  std::string description;
};

struct GeneratorOptions {
  // The extents a program's [rows, cols] shape is drawn from.
  std::vector<int64_t> rows = {0, 1, 2, 3, 4, 5, 7, 8, 13};
  std::vector<int64_t> cols = {1, 2, 3, 4, 6};
  // Called on every fusion input, after it is added (default: nothing).
  std::function<void(TensorView*)> on_input;
  // Called on every value a step computes and on the copies of inputs made
  // as outputs (default: a random Stream axis, maybe through a split).
  std::function<void(TensorView*)> on_value;
  // Also draw slices whose bounds are Int64 scalar inputs (the single-device
  // fuzzer; the sharded one passes tensors only).
  bool runtime_slices = false;
  // Also draw the ops nvFuser's frontend brought (issue 41): pad, cat,
  // index_select, take_along_axis, scatter, scatter_add, index_add, cumsum,
  // where, a complex round trip, gcd, the bitwise ops and shifts, nextafter
  // and fmod (single-device only: index inputs are not sharded).
  bool frontend_ops = false;
  // The dtype of the reference: float (what hostir runs), or double for a
  // float64 evaluation of the same program (FuzzTolerance's truth). The
  // program and its draws are the same.
  at::ScalarType reference_dtype = at::kFloat;
};

class Generator {
 public:
  explicit Generator(uint64_t seed, GeneratorOptions options = {})
      : seed_(seed), rng_(seed), options_(std::move(options)) {}

  FuzzProgram generate() {
    FuzzProgram program;
    program.seed = seed_;
    program.fusion = std::make_unique<Fusion>();
    FusionGuard guard(program.fusion.get());
    fusion_ = program.fusion.get();

    rows_ = pick(options_.rows);
    cols_ = pick(options_.cols);
    log("shape [" + std::to_string(rows_) + ", " + std::to_string(cols_) + "]");

    addInput({rows_, cols_});
    if (chance(0.6)) {
      addInput({rows_, cols_});
    }
    const int ops = uniform(1, 6);
    for (int i = 0; i < ops; ++i) {
      step();
    }

    // Outputs: the last value and maybe others that ops computed.
    std::vector<size_t> outputs{values_.size() - 1};
    for (size_t i = 0; i + 1 < values_.size(); ++i) {
      if (!values_[i].is_input && chance(0.25)) {
        outputs.push_back(i);
      }
    }
    for (size_t index : outputs) {
      Value& value = values_[index];
      if (value.is_input) {
        // An input as an output: copy it, as a program would.
        Value copy{set(value.tv), value.ref.clone(), value.err, false};
        values_.push_back(copy);
        annotateValue(values_.back().tv);
        log("set (input as output)");
        program.fusion->addOutput(values_.back().tv);
        program.expected.push_back(values_.back().ref);
        program.tolerance.push_back(values_.back().err);
        continue;
      }
      program.fusion->addOutput(value.tv);
      program.expected.push_back(value.ref);
      program.tolerance.push_back(value.err);
    }
    program.inputs = inputs_;
    program.scalar_inputs = scalar_inputs_;
    program.number_of_streams = uniform(1, 7);
    program.preallocate_outputs = chance(0.5);
    program.description = description_.str() + "streams " +
                          std::to_string(program.number_of_streams) +
                          (program.preallocate_outputs ? ", preallocated outputs" : "");
    return program;
  }

 private:
  struct Value {
    TensorView* tv;
    at::Tensor ref;
    at::Tensor err;  // the bound on ref's rounding (rounding_bound.h)
    bool is_input;
  };

  static at::Tensor noError(const at::Tensor& ref) {
    return at::zeros(ref.sizes(), at::TensorOptions().dtype(at::kDouble));
  }
  static at::Tensor magnitude(const Value& v) {
    return magnitudeOf(v.ref, v.err);
  }
  // The error bound of a * b, both values, computed as `out`.
  static at::Tensor productError(const Value& a, const Value& b, const at::Tensor& out) {
    return magnitude(a) * b.err + b.ref.to(at::kDouble).abs() * a.err + roundingOf(out);
  }

  template <typename T>
  T pick(std::initializer_list<T> options) {
    return pick(std::vector<T>(options));
  }
  template <typename T>
  T pick(const std::vector<T>& list) {
    return list[static_cast<size_t>(uniform(0, static_cast<int>(list.size()) - 1))];
  }
  int uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool chance(double p) {
    return std::bernoulli_distribution(p)(rng_);
  }
  void log(const std::string& line) {
    description_ << line << "\n";
  }

  at::Tensor randomTensor(const std::vector<int64_t>& sizes) {
    at::Generator generator = at::detail::createCPUGenerator(rng_());
    return at::randn(sizes, generator, at::TensorOptions().dtype(at::kFloat))
        .to(options_.reference_dtype);
  }

  // A new fusion input of `rank` axes (its data is pushed by the caller).
  TensorView* newInput(int64_t rank, DataType dtype = DataType::Float) {
    TensorView* tv = makeContigTensor(rank, dtype);
    fusion_->addInput(tv);
    if (options_.on_input) {
      options_.on_input(tv);
    }
    return tv;
  }

  void annotateValue(TensorView* tv) {
    if (options_.on_value) {
      options_.on_value(tv);
    } else {
      maybeStream(tv);
    }
  }

  TensorView* addInput(const std::vector<int64_t>& sizes) {
    TensorView* tv = newInput(static_cast<int64_t>(sizes.size()));
    inputs_.push_back(randomTensor(sizes));
    values_.push_back({tv, inputs_.back(), noError(inputs_.back()), true});
    log("input " + std::to_string(inputs_.size() - 1));
    return tv;
  }

  // Rows [start, stop) of t by torch's rule (negative from the end, then
  // clamped into [0, n]); ATen 1.13 refuses bounds below -2^62 itself.
  static at::Tensor torchRows(const at::Tensor& t, int64_t start, int64_t stop) {
    const int64_t n = t.size(0);
    auto bound = [n](int64_t b) { return std::clamp(b < 0 ? b + n : b, int64_t{0}, n); };
    return t.slice(0, bound(start), std::max(bound(start), bound(stop)));
  }

  // A new Int64 scalar input given `value` at run time.
  Scalar* newScalarInput(int64_t value) {
    auto* scalar = IrBuilder::create<Scalar>(DataType::Int64);
    fusion_->addInput(scalar);
    scalar_inputs_.push_back(value);
    log("scalar input " + std::to_string(scalar_inputs_.size() - 1) + " = " +
        std::to_string(value));
    return scalar;
  }

  // A [rows, cols] value, preferring recent ones.
  size_t pickValue() {
    const int n = static_cast<int>(values_.size());
    return static_cast<size_t>(chance(0.6) ? n - 1 : uniform(0, n - 1));
  }

  // With some probability, a Stream axis on axis 0 of `tv`: directly, or
  // through an outer split into 1-5 chunks.
  void maybeStream(TensorView* tv) {
    if (tv->nDims() == 0 || !chance(0.45)) {
      return;
    }
    if (chance(0.4)) {
      const int64_t chunks = uniform(1, 5);
      tv->split(0, chunks, /*inner_split=*/false);
      log("  stream: axis 0 split into " + std::to_string(chunks) + " chunks");
    } else {
      log("  stream: axis 0");
    }
    tv->axis(0)->parallelize(ParallelType::Stream);
  }

  void push(TensorView* tv, at::Tensor ref, at::Tensor err, const std::string& what) {
    log(what);
    annotateValue(tv);
    values_.push_back({tv, std::move(ref), std::move(err), false});
  }

  // push, annotated only where the stream lowering can chunk the op (the
  // others' refusal is tested elsewhere; here they are to run).
  void pushFrontendValue(TensorView* tv, at::Tensor ref, at::Tensor err, const std::string& what) {
    if (hasTrait(tv->definition(), OpTrait::StreamParallelizable)) {
      push(tv, std::move(ref), std::move(err), what);
      return;
    }
    log(what);
    values_.push_back({tv, std::move(ref), std::move(err), false});
  }

  // A new Int64 input of `sizes` with values in [0, bound).
  TensorView* newIndexInput(const std::vector<int64_t>& sizes, int64_t bound) {
    TensorView* tv = newInput(static_cast<int64_t>(sizes.size()), DataType::Int64);
    at::Generator generator = at::detail::createCPUGenerator(rng_());
    const auto options = at::TensorOptions().dtype(at::kLong);
    inputs_.push_back(bound > 0 ? at::randint(bound, sizes, generator, options)
                                : at::zeros(sizes, options));
    log("input " + std::to_string(inputs_.size() - 1) + " (indices below " + std::to_string(bound) +
        ")");
    return tv;
  }

  // A new Int64 input of `sizes` with values in [lo, hi).
  TensorView* newIntegerInput(const std::vector<int64_t>& sizes, int64_t lo, int64_t hi) {
    TensorView* tv = newInput(static_cast<int64_t>(sizes.size()), DataType::Int64);
    at::Generator generator = at::detail::createCPUGenerator(rng_());
    inputs_.push_back(at::randint(lo, hi, sizes, generator, at::TensorOptions().dtype(at::kLong)));
    log("input " + std::to_string(inputs_.size() - 1) + " (integers in [" + std::to_string(lo) +
        ", " + std::to_string(hi) + "))");
    return tv;
  }

  // An integer op of nvFuser's frontend (gcd, bitwise, shifts by a count in
  // [0, 64)) on two new Int64 inputs, folded to a byte (foldToByte), cast
  // to float, scaled into [0, 1) and added to a: exact but for the add.
  void integerStep(const Value& a) {
    const IntegerOp& op = pick(std::vector<IntegerOp>(integerOps().begin(), integerOps().end()));
    TensorView* i = newIntegerInput({rows_, cols_}, -1000, 1000);
    const at::Tensor x = inputs_.back();
    TensorView* j = op.is_shift ? newIntegerInput({rows_, cols_}, 0, 64)
                                : newIntegerInput({rows_, cols_}, -1000, 1000);
    const at::Tensor folded = foldToByteReference(op.reference(x, inputs_.back()));
    const at::Tensor sum = a.ref + folded.to(a.ref.scalar_type()) / 256;
    TensorView* fraction = mul(castOp(DataType::Float, foldToByte(op.build(i, j))), 1.0 / 256);
    pushFrontendValue(add(a.tv, fraction), sum, a.err + roundingOf(sum),
                      std::string(op.name) + " of two integer inputs, a byte of it / 256 added");
  }

  // torch.nextafter(a, b): a moved one float32 step toward b (b where they
  // are equal): within a's error and two steps of a; or an exact value's
  // fmod by a constant (fmod is exact, but jumps by the divisor where a
  // crosses a multiple of it, so its operand is a new input).
  void nextafterOrFmodStep(const Value& a, const Value& b) {
    if (chance(0.5)) {
      const at::Tensor ref = at::nextafter(a.ref, b.ref);
      pushFrontendValue(nextafter(a.tv, b.tv), ref, a.err + roundingOf(magnitude(a)) * 2,
                        "nextafter(a, b)");
      return;
    }
    const double divisor = pick<double>({1.5, -0.75, 2.0});
    TensorView* x = newInput(2);
    inputs_.push_back(randomTensor({rows_, cols_}) * 4);
    log("input " + std::to_string(inputs_.size() - 1) + " (fmod's operand)");
    const at::Tensor remainder = at::fmod(inputs_.back(), divisor);
    const at::Tensor ref = a.ref + remainder;
    pushFrontendValue(add(a.tv, fmod(x, divisor)), ref, a.err + roundingOf(ref),
                      "fmod of an input by " + std::to_string(divisor) + ", added");
  }

  // One op of nvFuser's frontend on [rows, cols] values, kept [rows, cols].
  void frontendStep(const Value& a, const Value& b) {
    switch (uniform(0, 12)) {
      case 10:
      case 11: integerStep(a); break;  // seven ops share these
      case 12: nextafterOrFmodStep(a, b); break;
      case 0: {
        // Columns padded by (left, right) with 1.5, then cut back to cols.
        const int64_t left = uniform(0, 2);
        const int64_t right = uniform(0, 2);
        const int64_t start = uniform(0, static_cast<int>(left + right));
        TensorView* padded = pad(a.tv, {left, right}, IrBuilder::create<Scalar>(1.5));
        pushFrontendValue(
            slice(padded, 1, start, start + cols_),
            at::constant_pad_nd(a.ref, {left, right}, 1.5).slice(1, start, start + cols_),
            at::constant_pad_nd(a.err, {left, right}, 0.0).slice(1, start, start + cols_),
            "pad columns (" + std::to_string(left) + ", " + std::to_string(right) +
                ") with 1.5, columns from " + std::to_string(start));
        break;
      }
      case 1: {
        const int64_t dim = uniform(0, 1);
        const int64_t extent = dim == 0 ? rows_ : cols_;
        const int64_t start = uniform(0, static_cast<int>(extent));
        pushFrontendValue(slice(cat({a.tv, b.tv}, dim), dim, start, start + extent),
                          at::cat({a.ref, b.ref}, dim).slice(dim, start, start + extent),
                          at::cat({a.err, b.err}, dim).slice(dim, start, start + extent),
                          "cat on axis " + std::to_string(dim) + ", from " + std::to_string(start));
        break;
      }
      case 2: {
        TensorView* index = newIndexInput({cols_}, cols_);
        pushFrontendValue(indexSelect(a.tv, index, 1), at::index_select(a.ref, 1, inputs_.back()),
                          at::index_select(a.err, 1, inputs_.back()), "index_select columns");
        break;
      }
      case 3: {
        const int64_t dim = uniform(0, 1);
        TensorView* index = newIndexInput({rows_, cols_}, dim == 0 ? rows_ : cols_);
        pushFrontendValue(takeAlongAxis(a.tv, index, dim), at::gather(a.ref, dim, inputs_.back()),
                          at::gather(a.err, dim, inputs_.back()),
                          "take_along_axis " + std::to_string(dim));
        break;
      }
      case 4: {
        const int64_t written = uniform(0, static_cast<int>(cols_));
        TensorView* index = newIndexInput({rows_, written}, cols_);
        pushFrontendValue(scatter(a.tv, index, IrBuilder::create<Scalar>(-0.25), 1),
                          a.ref.scatter(1, inputs_.back(), -0.25),
                          a.err.scatter(1, inputs_.back(), 0.0),
                          "scatter -0.25 into " + std::to_string(written) + " columns per row");
        break;
      }
      case 5: {
        const int64_t dim = uniform(0, 1);
        // Element j of the scan adds j + 1 terms: j roundings.
        const int64_t extent = dim == 0 ? rows_ : cols_;
        const at::Tensor adds =
            at::arange(extent, at::TensorOptions().dtype(at::kDouble))
                .view(dim == 0 ? at::IntArrayRef{extent, 1} : at::IntArrayRef{1, extent});
        pushFrontendValue(cumsum(a.tv, dim), at::cumsum(a.ref, dim),
                          at::cumsum(a.err, dim) +
                              at::cumsum(magnitude(a), dim) * adds * (kOpUlps * kUnitRoundoff),
                          "cumsum " + std::to_string(dim));
        break;
      }
      case 6: {
        // Where a and b (two values) are closer than their errors, either
        // side may be taken: the bound covers the gap between the two. A
        // value against itself is never closer than its error: it is equal.
        const at::Tensor other = b.ref * 2;
        const at::Tensor taken = at::where(a.ref > b.ref, a.err, b.err * 2);
        const at::Tensor both_err = a.err + b.err;
        const at::Tensor near =
            at::logical_and((a.ref - b.ref).abs().to(at::kDouble) <= both_err * 2, both_err > 0);
        const at::Tensor gap = (a.ref - other).abs().to(at::kDouble) + a.err + b.err * 2;
        pushFrontendValue(where(gt(a.tv, b.tv), a.tv, mul(b.tv, 2.0)),
                          at::where(a.ref > b.ref, a.ref, other),
                          a.tv == b.tv ? taken : at::where(near, at::maximum(taken, gap), taken),
                          "where(a > b, a, 2b)");
        break;
      }
      case 7: {
        const int64_t written = uniform(0, static_cast<int>(cols_));
        TensorView* index = newIndexInput({rows_, written}, cols_);
        const at::Tensor& i = inputs_.back();
        const at::Tensor b_part = b.err.slice(1, 0, written);
        const at::Tensor b_mag = magnitude(b).slice(1, 0, written);
        pushFrontendValue(scatterAdd(a.tv, index, b.tv, 1), a.ref.scatter_add(1, i, b.ref),
                          sumError(a.err.scatter_add(1, i, b_part),
                                   magnitude(a).scatter_add(1, i, b_mag), written + 1),
                          "scatter_add b into " + std::to_string(written) + " columns per row");
        break;
      }
      case 8: {
        TensorView* index = newIndexInput({cols_}, cols_);
        const at::Tensor& i = inputs_.back();
        pushFrontendValue(indexAdd(a.tv, index, b.tv, 1), at::index_add(a.ref, 1, i, b.ref),
                          sumError(at::index_add(a.err, 1, i, b.err),
                                   at::index_add(magnitude(a), 1, i, magnitude(b)), cols_ + 1),
                          "index_add b's columns");
        break;
      }
      default: {
        const at::ScalarType complex = c10::toComplexType(a.ref.scalar_type());
        TensorView* product =
            mul(castOp(DataType::ComplexFloat, a.tv), castOp(DataType::ComplexFloat, b.tv));
        const at::Tensor ref = at::real(a.ref.to(complex) * b.ref.to(complex));
        pushFrontendValue(real(product), ref, productError(a, b, ref), "real of a complex product");
        break;
      }
    }
  }

  // A unary op on a.
  void unaryStep(const Value& a) {
    // A transcendental f with slope at most `slope`.
    auto function = [&](TensorView* tv, const at::Tensor& ref, double slope, const char* what) {
      push(tv, ref, functionError(a.ref, a.err, ref, slope), what);
    };
    switch (uniform(0, 8)) {
      case 0: push(neg(a.tv), -a.ref, a.err, "neg"); break;
      case 1: push(abs(a.tv), at::abs(a.ref), a.err, "abs"); break;
      case 2: push(relu(a.tv), at::relu(a.ref), a.err, "relu"); break;
      case 3: function(sigmoid(a.tv), at::sigmoid(a.ref), 0.25, "sigmoid"); break;
      case 4: function(tanh(a.tv), at::tanh(a.ref), 1.0, "tanh"); break;
      case 5: function(gelu(a.tv), at::gelu(a.ref), 1.13, "gelu"); break;
      case 6: function(sin(a.tv), at::sin(a.ref), 1.0, "sin"); break;
      case 7: function(cos(a.tv), at::cos(a.ref), 1.0, "cos"); break;
      default: {
        // exp's slope on tanh's range [-1, 1] is at most e; two functions.
        const at::Tensor inner = at::tanh(a.ref);
        const at::Tensor ref = at::exp(inner);
        push(exp(tanh(a.tv)), ref,
             functionError(inner, functionError(a.ref, a.err, inner, 1.0), ref, std::exp(1.0)),
             "exp(tanh)");
        break;
      }
    }
  }

  // An elementwise op between a and b.
  // (A value against itself is one float: a - a is exactly 0, a + a
  // exactly 2a, so only its own error counts.)
  void binaryStep(const Value& a, const Value& b) {
    const bool same = a.tv == b.tv;
    const at::Tensor sum_err = a.err + b.err;
    switch (uniform(0, 4)) {
      case 0: {
        const at::Tensor ref = a.ref + b.ref;
        push(add(a.tv, b.tv), ref, same ? sum_err : sum_err + roundingOf(ref), "add");
        break;
      }
      case 1: {
        const at::Tensor ref = a.ref - b.ref;
        push(sub(a.tv, b.tv), ref, same ? at::zeros_like(sum_err) : sum_err + roundingOf(ref),
             "sub");
        break;
      }
      case 2: {
        const at::Tensor ref = a.ref * b.ref;
        push(mul(a.tv, b.tv), ref, productError(a, b, ref), "mul");
        break;
      }
      case 3:
        push(maximum(a.tv, b.tv), at::maximum(a.ref, b.ref), at::maximum(a.err, b.err), "maximum");
        break;
      default:
        push(minimum(a.tv, b.tv), at::minimum(a.ref, b.ref), at::maximum(a.err, b.err), "minimum");
        break;
    }
  }

  // b combined (added or subtracted) with a broadcast row whose error bound
  // is `row_err`, computed as `ref`.
  void pushRowCombination(TensorView* tv, const Value& b, const at::Tensor& ref,
                          const at::Tensor& row_err, const std::string& what) {
    push(tv, ref, b.err + row_err.unsqueeze(0) + roundingOf(ref), what);
  }

  // A reduction over the columns, broadcast back and multiplied by b.
  void rowReductionStep(const Value& a, const Value& b) {
    const int kind = uniform(0, 2);
    TensorView* reduced = kind == 0 ? sum(a.tv, {1}) : kind == 1 ? max(a.tv, {1}) : min(a.tv, {1});
    at::Tensor ref = kind == 0 ? a.ref.sum({1}) : kind == 1 ? a.ref.amax({1}) : a.ref.amin({1});
    at::Tensor err =
        kind == 0 ? sumError(a.err.sum({1}), magnitude(a).sum({1}), cols_) : a.err.amax({1});
    const Value factor{nullptr, ref.unsqueeze(1), err.unsqueeze(1), false};
    const at::Tensor product = b.ref * factor.ref;
    push(mul(b.tv, broadcast(reduced, {false, true})), product, productError(b, factor, product),
         std::string(kind == 0   ? "sum"
                     : kind == 1 ? "max"
                                 : "min") +
             " over axis 1, broadcast, mul");
  }

  // a @ w (or a @ w^T for linear) plus `bias`: the bound of a GEMM over k.
  at::Tensor gemmError(const Value& a, const at::Tensor& w_abs, int64_t extra_terms) {
    const int64_t k = a.ref.size(1);
    return at::matmul(sumError(a.err, magnitude(a), k + extra_terms), w_abs);
  }

  // A matmul or a linear (with a bias or not) by a new weight input.
  void gemmStep(const Value& a, bool is_linear) {
    TensorView* w = newInput(2);
    inputs_.push_back(randomTensor({cols_, cols_}) * 0.5);
    const at::Tensor w_ref = inputs_.back();
    const at::Tensor w_abs = w_ref.to(at::kDouble).abs();
    if (!is_linear) {
      log("input " + std::to_string(inputs_.size() - 1) + " (matmul weight)");
      push(matmul(a.tv, w), at::matmul(a.ref, w_ref), gemmError(a, w_abs, 0), "matmul");
      return;
    }
    log("input " + std::to_string(inputs_.size() - 1) + " (linear weight)");
    if (chance(0.5)) {
      TensorView* bias = newInput(1);
      inputs_.push_back(randomTensor({cols_}));
      log("input " + std::to_string(inputs_.size() - 1) + " (bias)");
      const at::Tensor ref = at::linear(a.ref, w_ref, inputs_.back());
      push(linear(a.tv, w, bias), ref, gemmError(a, w_abs.t(), 1) + roundingOf(ref), "linear+bias");
    } else {
      push(linear(a.tv, w), at::linear(a.ref, w_ref), gemmError(a, w_abs.t(), 0), "linear");
    }
  }

  // The rows of a in [start, stop) times `scale`, summed over the rows,
  // subtracted from b (a value with these rows: `rows_ref`, `rows_err`).
  void pushRowsSumSub(TensorView* tv, const Value& b, const at::Tensor& rows_ref,
                      const at::Tensor& rows_err, double scale, const std::string& what) {
    const at::Tensor col_sum = (rows_ref * scale).sum({0});
    const at::Tensor col_err =
        sumError(rows_err.sum({0}) * std::abs(scale),
                 magnitudeOf(rows_ref, rows_err).sum({0}) * std::abs(scale), rows_ref.size(0));
    pushRowCombination(tv, b, b.ref - col_sum.unsqueeze(0), col_err, what);
  }

  void step() {
    const Value a = values_[pickValue()];
    const Value b = values_[pickValue()];
    const int last = options_.runtime_slices ? 12 : 11;
    const int drawn = uniform(0, options_.frontend_ops ? last + 3 : last);
    if (drawn > last) {
      frontendStep(a, b);
      return;
    }
    switch (drawn) {
      case 0: unaryStep(a); break;
      case 1:
      case 2: binaryStep(a, b); break;
      case 3: {
        const double s = pick<double>({0.5, -2.0, 3.0});
        if (chance(0.5)) {
          const at::Tensor ref = a.ref * s;
          push(mul(a.tv, s), ref, a.err * std::abs(s) + roundingOf(ref),
               "mul scalar " + std::to_string(s));
        } else {
          const at::Tensor ref = a.ref + s;
          push(add(a.tv, s), ref, a.err + roundingOf(ref), "add scalar " + std::to_string(s));
        }
        break;
      }
      case 4: {
        // div by a value kept away from zero: d >= 1, so
        // |a/d - a'/d'| <= (err(a) + |a| err(d)) / d'.
        TensorView* denominator = add(abs(b.tv), 1.0);
        const at::Tensor d = at::abs(b.ref) + 1.0;
        const at::Tensor d_err = b.err + roundingOf(d);
        const at::Tensor ref = a.ref / d;
        push(div(a.tv, denominator), ref,
             (a.err + magnitude(a) * d_err) / d.to(at::kDouble) + roundingOf(ref), "div by |b|+1");
        break;
      }
      case 5: {
        // A row vector input broadcast over the rows.
        TensorView* row = newInput(1);
        inputs_.push_back(randomTensor({cols_}));
        log("input " + std::to_string(inputs_.size() - 1) + " (row)");
        const at::Tensor ref = a.ref + inputs_.back().unsqueeze(0);
        push(add(a.tv, broadcast(row, {true, false})), ref, a.err + roundingOf(ref),
             "add broadcast row");
        break;
      }
      case 6: rowReductionStep(a, b); break;
      case 7: {
        // Reduce over the rows (possibly empty: sum only), broadcast back.
        TensorView* reduced = sum(a.tv, {0});
        const at::Tensor row_err = sumError(a.err.sum({0}), magnitude(a).sum({0}), rows_);
        pushRowCombination(add(b.tv, broadcast(reduced, {true, false})), b,
                           b.ref + a.ref.sum({0}).unsqueeze(0), row_err,
                           "sum over axis 0, broadcast, add");
        break;
      }
      case 8: gemmStep(a, /*is_linear=*/false); break;
      case 9: gemmStep(a, /*is_linear=*/true); break;
      case 10: {
        // A slice of rows padded back: rows [0, r) of a, then the rest of b.
        const int64_t cut = rows_ == 0 ? 0 : uniform(0, static_cast<int>(rows_));
        TensorView* top = slice(a.tv, 0, 0, cut);
        TensorView* doubled = mul(top, 2.0);
        // Combine with b's matching rows to stay [rows, cols]: b * 1 + 0 on
        // the rest is b itself; only the slice enters through a reduction.
        TensorView* col_sum = sum(doubled, {0});
        pushRowsSumSub(sub(b.tv, broadcast(col_sum, {true, false})), b, a.ref.slice(0, 0, cut),
                       a.err.slice(0, 0, cut), 2.0,
                       "slice rows [0, " + std::to_string(cut) + "), *2, sum, broadcast, sub");
        break;
      }
      case 12: runtimeSliceStep(a, b); break;
      default: {
        // A permute there and back (a transpose of a transpose), or a cast
        // round trip through double.
        if (chance(0.5)) {
          push(permute(permute(a.tv, {1, 0}), {1, 0}), a.ref.clone(), a.err, "permute twice");
        } else {
          push(castOp(DataType::Float, castOp(DataType::Double, a.tv)), a.ref.clone(), a.err,
               "cast to double and back");
        }
        break;
      }
    }
  }

  // Rows [start, stop) with both bounds given at run time, anywhere:
  // inside, past either end, negative, start after stop, the int64
  // extremes. The extent is torch's, which the sum then sees.
  void runtimeSliceStep(const Value& a, const Value& b) {
    const auto n = rows_;
    const std::vector<int64_t> bounds = {0,
                                         1,
                                         n / 2,
                                         n,
                                         n + 5,
                                         -1,
                                         -2,
                                         -n,
                                         -n - 3,
                                         std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
    const int64_t start = pick(bounds);
    const int64_t stop = pick(bounds);
    Scalar* start_input = newScalarInput(start);
    Scalar* stop_input = newScalarInput(stop);
    TensorView* rows = slice(a.tv, 0, start_input, stop_input);
    TensorView* halved = mul(rows, 0.5);
    annotateValue(halved);  // a Stream axis over the run-time extent
    pushRowsSumSub(sub(b.tv, broadcast(sum(halved, {0}), {true, false})), b,
                   torchRows(a.ref, start, stop), torchRows(a.err, start, stop), 0.5,
                   "slice rows [" + std::to_string(start) + ", " + std::to_string(stop) +
                       ") given at run time, *0.5, sum, broadcast, sub");
  }

  uint64_t seed_;
  std::mt19937_64 rng_;
  GeneratorOptions options_;
  Fusion* fusion_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::vector<at::Tensor> inputs_;
  std::vector<int64_t> scalar_inputs_;
  std::vector<Value> values_;
  std::ostringstream description_;
};

}  // namespace hostir::fuzz
