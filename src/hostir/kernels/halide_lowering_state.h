#pragma once

// The segment lowering's state (halide_lowering.h): one Lowering per kernel,
// its members defined by concern: halide_lowering.cpp (arguments, the
// dispatch over ops, views), halide_pointwise.cpp (unary, binary, where,
// iota), halide_reduction.cpp (reductions) and halide_schedule.cpp
// (vectorizing, parallel rows, where reductions and shared values are
// computed).

#include <Halide.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/halide_lowering.h"
#include "hostir/kernels/resize_gather_lowering.h"

namespace hostir::halide_lowering {

using Halide::Expr;
using Halide::Func;
using Halide::Var;
using Index = std::vector<Expr>;  // one coordinate per axis of a shape, outermost first

// prefix + number (without operator+ on a literal, which GCC 12 flags with
// a false -Wrestrict).
std::string numbered(const char* prefix, int64_t number);
Halide::Type storageType(DataType dtype);
// What arithmetic on a dtype computes in: ATen's CPU kernels compute half
// and bfloat16 in float and round the result.
Halide::Type computeType(DataType dtype);
// `value` as `type`, NaN kept (Halide 14 makes a float NaN half infinity).
Expr convert(Expr value, Halide::Type type);

// Per axis of every tensor, a class of axes that iterate together (a
// pointwise op's aligned axes, a reduction's kept axes, a broadcast's
// original axes). A reduction whose outer axis is in the class of its
// consumer's outer axis can be computed one outer index at a time.
class AxisClasses {
 public:
  int classOf(const TensorView* tv, int64_t axis) {
    return find(id(tv, axis));
  }
  void unite(const TensorView* a, int64_t axis_a, const TensorView* b, int64_t axis_b) {
    parent_[find(id(a, axis_a))] = find(id(b, axis_b));
  }

 private:
  int id(const TensorView* tv, int64_t axis) {
    auto key = std::make_pair(tv, axis);
    auto it = ids_.find(key);
    if (it != ids_.end()) {
      return it->second;
    }
    int next = static_cast<int>(parent_.size());
    parent_.push_back(next);
    ids_.emplace(key, next);
    return next;
  }
  int find(int x) {
    while (parent_[x] != x) {
      x = parent_[x] = parent_[parent_[x]];
    }
    return x;
  }
  struct PairHash {
    size_t operator()(const std::pair<const TensorView*, int64_t>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<int64_t>()(key.second);
    }
  };
  std::unordered_map<std::pair<const TensorView*, int64_t>, int, PairHash> ids_;
  std::vector<int> parent_;
};

struct ReductionFunc {
  Func accumulator;
  const ReductionOp* op;
  // The input's innermost axis is reduced: `domain` then covers its whole
  // vectors (a multiple of reductionStep) and the accumulator's second
  // update the rest, so there is no predicated tail.
  bool innermost_reduced;
  Halide::RDom domain;
};

class Lowering {
 public:
  Lowering(const Fusion& fusion, const KernelSignature& signature, const KernelTarget& target)
      : fusion_(fusion), signature_(signature), target_(target) {}

  HalideKernel run();

 private:
  static std::vector<Var> varsFor(int64_t rank);
  // Tells Halide an output's extents are not negative (see the definition).
  static void declareNonNegativeExtents(Func& output);
  int lanes(const TensorView* tv) const;
  // The elements a vectorized innermost reduction of `tv` takes per step.
  int reductionStep(const TensorView* tv) const {
    return lanes(tv) * 4;
  }
  // The value of `tv` at `index` (outermost first), in its compute type.
  Expr load(const TensorView* tv, const Index& index);
  // A tensor operand of a pointwise op read at the op's output index:
  // right-aligned, broadcast axes read at 0.
  Expr loadBroadcast(const TensorView* tv, const Index& out_index);
  Expr scalar(const Val* val);
  Expr extent(const TensorView* tv, int64_t axis);
  Expr index32(const Val* val);
  // The reads of resize_gather_lowering.h through this lowering.
  KernelReads reads();
  // Defines `out`'s Func from its value at an output index.
  void define(const TensorView* out, const std::function<Expr(const Index&)>& body);
  void uniteAligned(const TensorView* out, const TensorView* in);
  void lower(const hostir::Expr* expr);
  void lowerUnary(const UnaryOp* op);
  // A scalar operand in `dtype`'s compute type, rounded to `dtype` first (as
  // ATen converts a wrapped scalar to the common dtype: half x == 0.1 compares
  // with 0.1 rounded to half).
  Expr scalarAs(const Val* operand, DataType dtype);
  void lowerBinary(const BinaryOp* op);
  // The selected operand converted to out's dtype (as ATen converts both
  // before selecting): a tensor operand broadcast, a scalar rounded to out's
  // dtype.
  void lowerWhere(const WhereOp* op);
  // start + i * step in int64 for an integer dtype, else in double and then
  // rounded to out's dtype (through float for half and bfloat16), as the
  // ATen interpreter computes it (torch.arange).
  void lowerIota(const IotaOp* op);
  void lowerReduction(const ReductionOp* op);
  // The RDoms of a reduction of `in` over `axes` (sorted) into `out`: with
  // `innermost_reduced`, the whole vectors of that axis and, apart, the rest.
  struct ReductionDomains {
    Halide::RDom whole;
    std::optional<Halide::RDom> remainder;
  };
  ReductionDomains reductionDomains(const TensorView* in, const TensorView* out,
                                    const std::vector<int64_t>& axes, bool innermost_reduced);
  void lowerReshape(const ReshapeOp* op);
  // Outputs: vectorized along the innermost axis (several registers per
  // step, so that a long dependent chain is throughput- not latency-bound)
  // and parallel over the outer axes.
  void scheduleOutput(Func& output, const TensorView* tv, std::vector<Var>& vars);
  // A reduction is computed inside its consumer's parallel row loop when
  // its outermost kept axis is that loop's axis (softmax's and layer norm's
  // row statistics: the row stays in cache), else once at the root,
  // parallel over its own outer axes.
  void scheduleReductions(std::vector<Func>& outputs);
  // An expensive value (one with a transcendental op) that both a reduction
  // computed in an output's row loop and that output read would otherwise be
  // inlined into each and computed twice (softmax's exp(x - max) is read by
  // the sum and by the division): it is computed once per row instead, into a
  // row buffer that stays in cache.
  void scheduleSharedRowValues(std::vector<Func>& outputs);
  bool sameAxes(const TensorView* a, const TensorView* b);
  // The kernel outputs and the reductions that read `tv` through inlined
  // Funcs (pointwise ops and views are inlined into their readers).
  void consumersOf(const TensorView* tv, std::set<size_t>& outputs,
                   std::set<const ReductionOp*>& reductions, std::set<const TensorView*>& visited);
  // Whether every axis of `reduced` is the same-numbered outer axis of
  // `output`, which keeps at least its innermost axis for itself: then one
  // iteration of the output's row loop needs one element of `reduced`.
  bool rowAligned(const TensorView* reduced, const TensorView* output);

  const Fusion& fusion_;
  const KernelSignature& signature_;
  const KernelTarget& target_;
  std::vector<Halide::Argument> arguments_;
  std::vector<Expr> scalar_exprs_;
  std::unordered_map<const Val*, Func> funcs_;
  std::vector<ReductionFunc> reductions_;
  std::unordered_map<std::string, Var> row_var_;
  // Reductions computed inside an output's row loop -> that output's index.
  std::unordered_map<const ReductionOp*, int> row_reductions_;
  std::unordered_map<std::string, const TensorView*> output_tvs_;
  AxisClasses classes_;
};

}  // namespace hostir::halide_lowering
