#include "hostir/host_ir/passes/pipeline_tail.h"

#include <algorithm>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

bool isProgramOutput(const HostIrContainer& container, const Val* val) {
  const std::vector<Val*>& outputs = container.outputs();
  return std::find(outputs.begin(), outputs.end(), val) != outputs.end();
}

// The unary ops of a segment that is one chain of them from its single
// input to its single output, in order; empty otherwise.
std::vector<const Expr*> unaryChainOf(const PostOnStream* post) {
  const Fusion* segment = post->hostUnit()->fusion();
  if (post->inputs().size() != 1 || post->outputs().size() != 1 || segment->inputs().size() != 1 ||
      segment->outputs().size() != 1) {
    return {};
  }
  std::vector<const Expr*> chain;
  const Val* current = segment->inputs().front();
  while (current != segment->outputs().front()) {
    if (current->uses().size() != 1 || !current->uses().front()->isA<UnaryOp>()) {
      return {};
    }
    chain.push_back(current->uses().front());
    current = chain.back()->output(0);
  }
  return chain;
}

// Whether `operand`, another operand of a tail's pointwise op, can be read
// whole by the loop at the GEMM's place: a program input, computed before
// `gemm`, or computed after it by a top-level expr that reads only program
// inputs (then hoisted; added to `hoisted`).
bool operandReadyBefore(const HostIrContainer& container, const Expr* gemm, const Val* operand,
                        std::vector<Expr*>& hoisted) {
  const std::vector<Val*>& inputs = container.inputs();
  auto is_input = [&](const Val* val) {
    return val->isA<Scalar>() || std::find(inputs.begin(), inputs.end(), val) != inputs.end();
  };
  if (is_input(operand)) {
    return true;
  }
  const Scope& top = container.topLevel();
  for (Expr* expr : top) {
    if (expr == gemm) {
      break;
    }
    if (std::find(expr->outputs().begin(), expr->outputs().end(), operand) !=
        expr->outputs().end()) {
      return true;
    }
  }
  Expr* definition = operand->definition();
  if (definition == nullptr || std::find(top.begin(), top.end(), definition) == top.end() ||
      (hasTrait(definition, OpTrait::AtenEvaluable) && isResharding(definition)) ||
      definition->outputs().size() != 1 ||
      !std::all_of(definition->inputs().begin(), definition->inputs().end(), is_input)) {
    return false;
  }
  if (std::find(hoisted.begin(), hoisted.end(), definition) == hoisted.end()) {
    hoisted.push_back(definition);
  }
  return true;
}

// A pointwise op reading `current` once, whose other tensor operands are
// whole tensors of the same shape, ready before the loop.
bool isTailPointwise(const HostIrContainer& container, const Expr* gemm, const Expr* use,
                     const Val* current, PipelineTail& tail) {
  if (!(use->isA<UnaryOp>() || use->isA<BinaryOp>()) || isResharding(use) ||
      std::count(use->inputs().begin(), use->inputs().end(), current) != 1) {
    return false;
  }
  const auto* chunked = current->as<TensorView>();
  std::vector<Expr*> hoisted = tail.hoisted;
  std::vector<TensorView*> operands;
  for (Val* input : use->inputs()) {
    if (input == current || input->isA<Scalar>()) {
      continue;
    }
    auto* operand = dynamic_cast<TensorView*>(input);
    if (operand == nullptr || operand->rank() != chunked->rank() ||
        findStreamAxis(operand).has_value() ||
        !operandReadyBefore(container, gemm, operand, hoisted)) {
      return false;
    }
    operands.push_back(operand);
  }
  tail.hoisted = std::move(hoisted);
  tail.operands.insert(tail.operands.end(), operands.begin(), operands.end());
  return true;
}

}  // namespace

std::optional<PipelineTail> findPipelineTail(const HostIrContainer& container, const Expr* gemm) {
  PipelineTail tail;
  Val* current = gemm->output(0);
  for (;;) {
    std::vector<Expr*> uses = current->uses();
    if (uses.empty()) {
      return std::nullopt;
    }
    if (isProgramOutput(container, current) || uses.size() > 1) {
      tail.kept.insert(current);
    }
    // The one reader that continues the tail; the others read `current`
    // whole after the loop.
    std::optional<PipelineTail> next;
    Expr* use = nullptr;
    for (Expr* candidate : uses) {
      PipelineTail attempt = tail;
      bool continues = false;
      if (isTailPointwise(container, gemm, candidate, current, attempt)) {
        attempt.pointwise.push_back(candidate);
        attempt.chunk_inputs.push_back(current);
        attempt.absorbed.push_back(candidate);
        continues = true;
      } else if (const auto* post = dynamic_cast<const PostOnStream*>(candidate)) {
        std::vector<const Expr*> chain = unaryChainOf(post);
        if (!chain.empty() && post->input(0) == current &&
            !findStreamAxis(post->output(0)->as<TensorView>()).has_value()) {
          for (const Expr* op : chain) {
            attempt.pointwise.push_back(op);
            attempt.chunk_inputs.push_back(op->input(0));
          }
          attempt.absorbed.push_back(candidate);
          continues = true;
        }
      } else if ((candidate->isA<LinearOp>() || candidate->isA<MatmulOp>()) &&
                 candidate->input(0) == current && isResharding(candidate) &&
                 !findStreamAxis(tensorOutput(candidate)).has_value()) {
        CommunicationPlan plan = classifyResharding(candidate);
        if (plan.pattern == ReshardingPattern::ShardedContraction &&
            plan.type == CollectiveType::ReduceScatter && plan.scattered_axis == 0 &&
            plan.collectives.size() == 1 && current->as<TensorView>()->rank() == 2) {
          attempt.contraction = candidate;
          attempt.absorbed.push_back(candidate);
          attempt.plan = std::move(plan);
          continues = true;
        }
      }
      if (continues) {
        if (next) {
          return std::nullopt;  // two readers could continue it
        }
        next = std::move(attempt);
        use = candidate;
      }
    }
    if (!next) {
      return std::nullopt;
    }
    tail = std::move(*next);
    if (tail.contraction != nullptr) {
      return tail;
    }
    current = use->output(0);
  }
}

TailChunk appendTailChunk(HostIrContainer& container, const PipelineTail& tail,
                          TensorView* gemm_chunk, const std::vector<Val*>& chunk_extents,
                          Val* devices, const ChunkRows& chunk_rows,
                          const std::unordered_map<const Val*, TensorView*>& blocks,
                          TensorView* output_rows, std::vector<Expr*>& body_exprs) {
  auto [start, stop, rows] = chunk_rows;
  // This chunk's rows of a whole tensor, through its [devices, local rows,
  // ...] view.
  auto rows_of = [&](const Val* whole, DataType dtype) {
    TensorView* chunk_view = makeTensorOfExtents(&container, chunk_extents, dtype);
    body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
        &container, std::vector<Val*>{blocks.at(whole), start, stop}, std::vector<Val*>{chunk_view},
        std::vector<Attribute>{int64_t{1}}));
    return chunk_view;
  };
  TensorView* chunk = gemm_chunk;
  for (size_t i = 0; i < tail.pointwise.size(); ++i) {
    const Expr* op = tail.pointwise[i];
    const Val* out = op->output(0);
    TensorView* next = tail.kept.count(out) != 0 ? rows_of(out, tensorOutput(op)->dtype())
                                                 : makeTensorOfExtents(&container, chunk_extents,
                                                                       tensorOutput(op)->dtype());
    std::vector<Val*> inputs = op->inputs();
    for (Val*& input : inputs) {
      if (input == tail.chunk_inputs[i]) {
        input = chunk;
      } else if (blocks.count(input) != 0) {
        input = rows_of(input, input->as<TensorView>()->dtype());
      }
    }
    body_exprs.push_back(
        op->newObject(&container, inputs, {next}, op->attributes(), op->attributeVals()));
    chunk = next;
  }
  Expr* contraction = tail.contraction;
  TensorView* y = tensorOutput(contraction);
  std::vector<IterDomain*> y_shape = y->shapeDomain();
  std::vector<Val*> partial_extents{devices, rows};
  for (size_t i = 1; i < y_shape.size(); ++i) {
    partial_extents.push_back(localExtent(y, y_shape[i]));
  }
  TensorView* partial = makeTensorOfExtents(&container, partial_extents, y->dtype());
  std::vector<Val*> contraction_inputs = contraction->inputs();
  contraction_inputs[0] = chunk;
  body_exprs.push_back(contraction->newObject(&container, contraction_inputs, {partial},
                                              contraction->attributes(),
                                              contraction->attributeVals()));
  std::vector<Val*> y_chunk_extents{rows};
  for (size_t i = 1; i < y_shape.size(); ++i) {
    y_chunk_extents.push_back(localExtent(y, y_shape[i]));
  }
  TensorView* y_chunk = makeTensorOfExtents(&container, y_chunk_extents, y->dtype());
  body_exprs.push_back(IrBuilder::createInContainer<SliceOp>(
      &container, std::vector<Val*>{output_rows, start, stop}, std::vector<Val*>{y_chunk},
      std::vector<Attribute>{int64_t{0}}));
  return {partial, y_chunk};
}

void dropStreamSplitsOfTail(const PipelineTail& tail) {
  for (const Expr* op : tail.pointwise) {
    if (std::optional<StreamAxis> axis = findStreamAxis(tensorOutput(op))) {
      axis->loop_id->parallelize(ParallelType::Serial);
    }
  }
}

}  // namespace hostir
