#include "program_segments.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <unordered_map>
#include <utility>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir::python {
namespace {

// A host program step that is not a compute segment (a loop, a stream
// switch, a collective, an encoding): a program holding one is not a
// sequence of segments Python can run one by one.
bool isHostOnlyStep(const Expr* expr) {
#define HOSTIR_IS_HOST_EXPR(T) \
  if (expr->isA<T>()) {        \
    return true;               \
  }
  HOSTIR_FOR_ALL_HOST_EXPRS(HOSTIR_IS_HOST_EXPR)
#undef HOSTIR_IS_HOST_EXPR
  return false;
}

bool isConstant(const Val* val) {
  const auto* scalar = dynamic_cast<const Scalar*>(val);
  return scalar != nullptr && scalar->isConst();
}

// The scalar exprs computing `val` from symbols, operands first.
void scalarExprsOf(const Val* val, std::vector<const Expr*>& exprs) {
  const Expr* definition = val->definition();
  if (val->isA<TensorView>() || definition == nullptr ||
      std::find(exprs.begin(), exprs.end(), definition) != exprs.end()) {
    return;
  }
  for (const Val* input : definition->inputs()) {
    scalarExprsOf(input, exprs);
  }
  exprs.push_back(definition);
}

// What `op` reads: its tensors and symbols, a scalar it reads computed (an
// extent a reshape or a shape product makes) replaced by the symbols it is
// computed from; constants are none.
std::vector<Val*> symbolsRead(const Expr* op) {
  std::vector<Val*> read;
  std::vector<Val*> pending(op->inputs().rbegin(), op->inputs().rend());
  while (!pending.empty()) {
    Val* val = pending.back();
    pending.pop_back();
    if (isConstant(val) || std::find(read.begin(), read.end(), val) != read.end()) {
      continue;
    }
    if (val->isA<TensorView>() || val->definition() == nullptr) {
      read.push_back(val);
      continue;
    }
    const std::vector<Val*>& operands = val->definition()->inputs();
    pending.insert(pending.end(), operands.rbegin(), operands.rend());
  }
  return read;
}

// A fusion of `op` alone, reading `inputs` (symbolsRead): cloned first, so
// they arrive definition-free, as inputs must; the scalars computed from
// them are computed in it.
std::unique_ptr<Fusion> fusionOfOp(const Expr* op, const std::vector<Val*>& inputs) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  IrCloner cloner(fusion.get());
  for (Val* input : inputs) {
    fusion->addInput(cloner.clone(input));
  }
  std::vector<const Expr*> scalar_exprs;
  for (const Val* operand : op->inputs()) {
    scalarExprsOf(operand, scalar_exprs);
  }
  for (const Expr* scalar_expr : scalar_exprs) {
    cloner.clone(scalar_expr);
  }
  Expr* clone = cloner.clone(op);
  for (Val* output : clone->outputs()) {
    fusion->addOutput(output);
  }
  return fusion;
}

std::unique_ptr<Fusion> copyOfFusion(const Fusion& fusion) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  return copy;
}

// The program's values the definition names: its inputs, their extents and
// its outputs, by position.
class DefinitionValues {
 public:
  DefinitionValues(const HostIrContainer& program, const DefinitionFids& fids) {
    HOSTIR_ASSERT(program.inputs().size() == fids.inputs.size() &&
                      program.outputs().size() == fids.outputs.size(),
                  "the compiled program has ", program.inputs().size(), " inputs and ",
                  program.outputs().size(), " outputs, its definition ", fids.inputs.size(),
                  " and ", fids.outputs.size());
    for (size_t position = 0; position < fids.inputs.size(); ++position) {
      known_.emplace(program.inputs()[position], fids.inputs[position]);
    }
    for (const auto& [extent_fid, tensor_fid, axis] : fids.extents) {
      auto position = std::find(fids.inputs.begin(), fids.inputs.end(), tensor_fid);
      const auto* tensor = dynamic_cast<const TensorView*>(
          program.inputs()[static_cast<size_t>(position - fids.inputs.begin())]);
      std::vector<IterDomain*> shape = tensor->shapeDomain();
      known_.emplace(shape[static_cast<size_t>(axis)]->extent(), extent_fid);
    }
    for (size_t position = 0; position < fids.outputs.size(); ++position) {
      output_fids_.emplace(program.outputs()[position], fids.outputs[position]);
    }
  }

  // What a segment reading `val` binds it to, if anything gives it yet.
  const SegmentValue* find(const Val* val) const {
    auto it = known_.find(val);
    return it == known_.end() ? nullptr : &it->second;
  }

  // `val` is given from now on, by the segment writing it.
  SegmentValue write(const Val* val) {
    auto output = output_fids_.find(val);
    SegmentValue key =
        output != output_fids_.end() ? SegmentValue(output->second) : SegmentValue(irKey(val));
    known_.emplace(val, key);
    return key;
  }

 private:
  std::unordered_map<const Val*, SegmentValue> known_;
  std::unordered_map<const Val*, int64_t> output_fids_;
};

// The segment of one top-level expr but an allocation or a release.
ProgramSegment segmentOf(const Expr* expr, const std::vector<Val*>& inputs) {
  ProgramSegment segment;
  if (const auto* post = dynamic_cast<const PostOnStream*>(expr)) {
    const HostUnit* unit = post->hostUnit();
    segment.fusion = copyOfFusion(*unit->fusion());
    if (unit->engine().has_value()) {
      segment.engine = engineWord(unit->engine()->kind);
      segment.detail = unit->engine()->detail;
    }
    return segment;
  }
  segment.fusion = fusionOfOp(expr, inputs);
  segment.engine = "host_op";
  segment.detail =
      expr->displayName() + " run by the host program itself (a host-lowered op, no HostUnit)";
  return segment;
}

// The program's values `expr` reads and writes, in its segment's order.
std::pair<std::vector<Val*>, std::vector<Val*>> operandsOf(const Expr* expr) {
  if (expr->isA<PostOnStream>()) {
    return {expr->inputs(), expr->outputs()};
  }
  return {symbolsRead(expr), expr->outputs()};
}

}  // namespace

std::string irKey(const Val* val) {
  // Appended, not `"T" + std::to_string(...)`: GCC 12 warns (-Wrestrict) on
  // that form, falsely (GCC PR 105329).
  std::string key(1, val->isA<TensorView>() ? 'T' : 'S');
  key += std::to_string(val->name());
  return key;
}

std::vector<ProgramSegment> programSegments(const HostIrContainer& program,
                                            const DefinitionFids& fids) {
  DefinitionValues values(program, fids);
  std::vector<ProgramSegment> segments;
  std::vector<Expr*> steps = program.topLevel().toVector();
  for (size_t step = 0; step < steps.size(); ++step) {
    const Expr* expr = steps[step];
    // A segment run alone allocates its outputs: buffers are no segment.
    if (expr->isA<Allocate>() || expr->isA<Deallocate>()) {
      continue;
    }
    HOSTIR_CHECK(expr->isA<PostOnStream>() || !isHostOnlyStep(expr), "segment: step ", step,
                 " of the compiled program is ", expr->opName(),
                 ", not a compute segment (the program has loops, streams or collectives); "
                 "segmenting it from Python is not supported: run it whole with fd.execute and "
                 "read it with fd.host_ir()");
    auto [inputs, outputs] = operandsOf(expr);
    std::vector<SegmentValue> input_values;
    for (const Val* input : inputs) {
      const SegmentValue* value = values.find(input);
      HOSTIR_CHECK(value != nullptr, "segment: segment ", segments.size(), " reads ",
                   input->toInlineString(),
                   ", which neither an input of the definition (or its extent) nor an earlier "
                   "segment gives; segmenting this fusion from Python is not supported, run it "
                   "whole with fd.execute");
      input_values.push_back(*value);
    }
    ProgramSegment segment = segmentOf(expr, inputs);
    segment.inputs = std::move(input_values);
    for (const Val* output : outputs) {
      segment.outputs.push_back(values.write(output));
    }
    segments.push_back(std::move(segment));
  }
  return segments;
}

}  // namespace hostir::python
