// The schedule of a segment's kernel: outputs vectorized and parallel over
// rows, reductions computed in their consumer's row loop where they can be,
// expensive values shared by a row's reduction and output computed once.

#include "hostir/kernels/halide_lowering_state.h"

#include <algorithm>
#include <optional>
#include <set>

namespace hostir::halide_lowering {

namespace {

// Whether computing `tv` inline runs a transcendental op (stopping at
// inputs, reductions and values already computed once per row).
bool expensive(const TensorView* tv, const std::set<const TensorView*>& materialized) {
  const hostir::Expr* definition = tv->definition();
  if (definition == nullptr || dynamic_cast<const ReductionOp*>(definition) != nullptr) {
    return false;
  }
  if (const auto* unary = dynamic_cast<const UnaryOp*>(definition)) {
    switch (unary->type()) {
      case UnaryOpType::Exp:
      case UnaryOpType::Log:
      case UnaryOpType::Sigmoid:
      case UnaryOpType::Tanh:
      case UnaryOpType::Gelu:
      case UnaryOpType::GeluDerivative:
      case UnaryOpType::Sin:
      case UnaryOpType::Cos:
      case UnaryOpType::Erf: return true;
      default: break;
    }
  }
  return std::any_of(definition->inputs().begin(), definition->inputs().end(), [&](Val* in) {
    const auto* operand = dynamic_cast<const TensorView*>(in);
    return operand != nullptr && !materialized.count(operand) && expensive(operand, materialized);
  });
}

}  // namespace

// Outputs: vectorized along the innermost axis (several registers per
// step, so that a long dependent chain is throughput- not latency-bound)
// and parallel over the outer axes. A row's tail is a predicated copy of
// the vector body. ShiftInwards instead (tried) compiled no faster, since
// Halide gives the shifted last vector a copy of its own too, and it would
// read inputs an in-place output already overwrote.
void Lowering::scheduleOutput(Func& output, const TensorView* tv, std::vector<Var>& vars) {
  if (vars.empty()) {
    return;
  }
  int vector = lanes(tv) * 4;
  if (vars.size() == 1) {
    Var outer("d0o"), inner("d0i");
    output.split(vars[0], outer, inner, vector * 256, Halide::TailStrategy::GuardWithIf)
        .vectorize(inner, vector, Halide::TailStrategy::GuardWithIf)
        .parallel(outer);
    row_var_[output.name()] = outer;
    return;
  }
  output.vectorize(vars[0], vector, Halide::TailStrategy::GuardWithIf);
  Var rows = vars.back();
  for (size_t d = vars.size() - 2; d >= 1; --d) {
    Var fused(numbered("f", d));
    output.fuse(vars[d], rows, fused);
    rows = fused;
  }
  output.parallel(rows);
  row_var_[output.name()] = rows;
  output_tvs_[output.name()] = tv;
}

// A reduction is computed inside its consumer's parallel row loop when
// its outermost kept axis is that loop's axis (softmax's and layer norm's
// row statistics: the row stays in cache), else once at the root,
// parallel over its own outer axes.
void Lowering::scheduleReductions(std::vector<Func>& outputs) {
  // Consumers first: a reduction can go inside an output's row loop only
  // if every reduction reading it went there too.
  std::unordered_map<const ReductionOp*, int>& placed = row_reductions_;
  for (auto it = reductions_.rbegin(); it != reductions_.rend(); ++it) {
    ReductionFunc& reduction = *it;
    const TensorView* out = reduction.op->out();
    Func& acc = reduction.accumulator;
    int64_t rank = out->rank();
    std::set<size_t> reading_outputs;
    std::set<const ReductionOp*> reading_reductions;
    std::set<const TensorView*> visited;
    consumersOf(out, reading_outputs, reading_reductions, visited);
    std::optional<size_t> row_output;
    if (reading_outputs.size() == 1) {
      size_t index = *reading_outputs.begin();
      bool together = std::all_of(
          reading_reductions.begin(), reading_reductions.end(), [&](const ReductionOp* r) {
            auto where = placed.find(r);
            return where != placed.end() && where->second == static_cast<int>(index);
          });
      if (together && rank >= 1 && rowAligned(out, signature_.outputs[index])) {
        row_output = index;
      }
    }
    std::optional<Func> row_consumer;
    if (row_output.has_value()) {
      row_consumer = outputs[*row_output];
      placed[reduction.op] = static_cast<int>(*row_output);
    }
    int vector = lanes(out);
    if (reduction.innermost_reduced) {
      // Vector lanes over the whole vectors of the innermost reduced axis
      // (its extent a multiple of the step: no tail), combined at the end;
      // the rest is the second update's scalar loop.
      Halide::RVar outer_r("ro"), inner_r("ri");
      Var lane("lane");
      Func partial = acc.update()
                         .split(reduction.domain[0], outer_r, inner_r, reductionStep(out),
                                Halide::TailStrategy::GuardWithIf)
                         .rfactor(inner_r, lane);
      partial.compute_at(acc, rank >= 1 ? Var("d0") : Var::outermost());
      partial.vectorize(lane).update().vectorize(lane);
    } else if (rank >= 1) {
      acc.vectorize(Var("d0"), vector, Halide::TailStrategy::GuardWithIf);
      acc.update().vectorize(Var("d0"), vector, Halide::TailStrategy::GuardWithIf);
    }
    const bool parallel_root = !row_consumer.has_value() && rank >= 2;
    if (reduction.innermost_reduced && !parallel_root) {
      acc.update(1).unscheduled();  // the rest: a serial loop, where the accumulator is computed
    }
    if (row_consumer.has_value()) {
      acc.compute_at(*row_consumer, row_var_.at(row_consumer->name()));
      continue;
    }
    acc.compute_root();
    if (parallel_root) {
      Var outer(numbered("d", rank - 1));
      acc.parallel(outer);
      acc.update().parallel(outer);
      if (reduction.innermost_reduced) {
        acc.update(1).parallel(outer);
      }
    }
  }
}

// An expensive value (one with a transcendental op) that both a reduction
// computed in an output's row loop and that output read would otherwise be
// inlined into each and computed twice (softmax's exp(x - max) is read by
// the sum and by the division): it is computed once per row instead, into a
// row buffer that stays in cache.
void Lowering::scheduleSharedRowValues(std::vector<Func>& outputs) {
  std::set<const TensorView*> materialized;
  for (const hostir::Expr* expr : fusion_.exprs()) {
    if (expr->outputs().empty() || dynamic_cast<const ReductionOp*>(expr) != nullptr) {
      continue;
    }
    const auto* tv = dynamic_cast<const TensorView*>(expr->output(0));
    if (tv == nullptr || tv->rank() == 0 || !funcs_.count(tv) ||
        std::find(signature_.outputs.begin(), signature_.outputs.end(), tv) !=
            signature_.outputs.end()) {
      continue;
    }
    std::set<size_t> reading_outputs;
    std::set<const ReductionOp*> reading_reductions;
    std::set<const TensorView*> visited;
    consumersOf(tv, reading_outputs, reading_reductions, visited);
    if (reading_outputs.size() != 1 || reading_reductions.empty()) {
      continue;
    }
    size_t index = *reading_outputs.begin();
    bool in_row = std::all_of(
        reading_reductions.begin(), reading_reductions.end(), [&](const ReductionOp* r) {
          auto where = row_reductions_.find(r);
          return where != row_reductions_.end() && where->second == static_cast<int>(index);
        });
    const TensorView* output = signature_.outputs[index];
    if (!in_row || tv->rank() != output->rank() || !sameAxes(tv, output) ||
        !expensive(tv, materialized)) {
      continue;
    }
    Func& func = funcs_.at(tv);
    func.compute_at(outputs[index], row_var_.at(outputs[index].name()))
        .vectorize(Var("d0"), lanes(tv), Halide::TailStrategy::GuardWithIf);
    materialized.insert(tv);
  }
}

bool Lowering::sameAxes(const TensorView* a, const TensorView* b) {
  for (int64_t axis = 0; axis < a->rank(); ++axis) {
    if (classes_.classOf(a, axis) != classes_.classOf(b, axis)) {
      return false;
    }
  }
  return true;
}

// The kernel outputs and the reductions that read `tv` through inlined
// Funcs (pointwise ops and views are inlined into their readers).
void Lowering::consumersOf(const TensorView* tv, std::set<size_t>& outputs,
                           std::set<const ReductionOp*>& reductions,
                           std::set<const TensorView*>& visited) {
  if (!visited.insert(tv).second) {
    return;
  }
  for (size_t i = 0; i < signature_.outputs.size(); ++i) {
    if (signature_.outputs[i] == tv) {
      outputs.insert(i);
    }
  }
  for (const hostir::Expr* use : tv->uses()) {
    if (const auto* reduction = dynamic_cast<const ReductionOp*>(use)) {
      reductions.insert(reduction);
      continue;
    }
    for (const Val* output : use->outputs()) {
      if (const auto* next = dynamic_cast<const TensorView*>(output)) {
        consumersOf(next, outputs, reductions, visited);
      }
    }
  }
}

// Whether every axis of `reduced` is the same-numbered outer axis of
// `output`, which keeps at least its innermost axis for itself: then one
// iteration of the output's row loop needs one element of `reduced`.
bool Lowering::rowAligned(const TensorView* reduced, const TensorView* output) {
  if (output->rank() < 2 || reduced->rank() > output->rank() - 1) {
    return false;
  }
  for (int64_t axis = 0; axis < reduced->rank(); ++axis) {
    if (classes_.classOf(reduced, axis) != classes_.classOf(output, axis)) {
      return false;
    }
  }
  return true;
}

}  // namespace hostir::halide_lowering
