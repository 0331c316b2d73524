#include "hostir/runtime/host_ir_evaluator.h"

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/deferred_memory.h"
#include "hostir/runtime/finite_check.h"
#include "hostir/runtime/input_validation.h"
#include "hostir/runtime/op_error.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/target_detection.h"

#include <algorithm>

namespace hostir {

namespace {
// The program, refused when null before any member reads it.
std::unique_ptr<HostIrContainer> checkedProgram(std::unique_ptr<HostIrContainer> container) {
  HOSTIR_CHECK(container != nullptr, "HostIrEvaluator needs a host program");
  return container;
}
}  // namespace

HostIrEvaluator::HostIrEvaluator(std::unique_ptr<HostIrContainer> container,
                                 HostIrEvaluatorParams params)
    : container_(checkedProgram(std::move(container))),
      params_(params),
      segments_(*container_, params.communicator != nullptr ? params.my_device : -1),
      buffers_(*container_),
      collectives_(pool_, params.communicator, params.my_device),
      pool_(params.number_of_streams) {  // checks the number
  communicates_ = collectives_.communicates(*container_);
  scheduler_.prepare(scheduleOf(params_.number_of_streams, false));
}

StreamSchedule HostIrEvaluator::scheduleOf(int number_of_streams, bool skip_compute) const {
  StreamSchedule schedule{.number_of_streams = number_of_streams,
                          .communicates = communicates_,
                          .skip_compute = skip_compute};
  if (communicates_) {
    schedule.ranks_sharing_cores =
        static_cast<int>(params_.communicator->environment().local_world_size);
    schedule.communication_timeout = collectives_.timeout();
  }
  return schedule;
}

std::vector<at::Tensor> HostIrEvaluator::run(const std::vector<at::Tensor>& inputs,
                                             const std::vector<at::Tensor>& outputs) {
  return run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs);
}

void HostIrEvaluator::validate(const std::vector<PolymorphicValue>& inputs,
                               const std::vector<at::Tensor>& outputs) const {
  int64_t my_device = params_.communicator != nullptr ? params_.my_device : -1;
  validateInputs(container_->inputs(), inputs, "the host program", my_device);
  const std::vector<Val*>& program_outputs = container_->outputs();
  HOSTIR_CHECK(outputs.empty() || outputs.size() == program_outputs.size(), "the host program has ",
               program_outputs.size(), " outputs but ", outputs.size(),
               " preallocated buffers were given; give all or none");
  validateOutputsDoNotAliasInputs(container_->inputs(), inputs, program_outputs, outputs,
                                  "the host program");
}

std::vector<at::Tensor> HostIrEvaluator::run(const std::vector<PolymorphicValue>& inputs,
                                             const std::vector<at::Tensor>& outputs,
                                             const HostIrRunOptions& options) {
  // Runs are serialized: the per-run state (bindings, current stream,
  // pending works) and the streams themselves belong to one run at a time.
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  return runSerialized(inputs, outputs, options);
}

std::vector<at::Tensor> HostIrEvaluator::runSerialized(const std::vector<PolymorphicValue>& inputs,
                                                       const std::vector<at::Tensor>& outputs,
                                                       const HostIrRunOptions& options) {
  const int number_of_streams = options.number_of_streams.value_or(params_.number_of_streams);
  scheduler_.startRun(
      scheduleOf(number_of_streams, options.skip_compute));  // checks the number of streams
  if (!options.inputs_validated) {
    validate(inputs, outputs);
  }
  // Nothing writes the inputs until the run returns (outputs may not alias
  // them): a packed weight is compared with its plain bits once per run.
  std::vector<at::Tensor> input_tensors;
  for (const PolymorphicValue& input : inputs) {
    if (isTensor(input)) {
      input_tensors.push_back(std::get<at::Tensor>(input));
    }
  }
  const ReadOnlyRunInputs read_only_inputs(input_tensors);
  collectives_.startRun(options.local_collectives);
  check_finite_ = runtime::checkFiniteEnabled();
  buffers_.startRun();
  bindRun(inputs, outputs, options, number_of_streams);
  try {
    runScope(container_->topLevel());
  } catch (...) {
    // Work already queued may still use our buffers: let it finish first.
    scheduler_.drainAfterFailure();
    throw;
  }
  scheduler_.finishRun();
  return takeOutputs(outputs, params_.communicator != nullptr ? params_.my_device : -1);
}

void HostIrEvaluator::bindRun(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs,
                              const HostIrRunOptions& options, int number_of_streams) {
  ee_ = ExpressionEvaluator();
  ee_.setDevice(params_.communicator != nullptr ? params_.my_device : -1);
  ee_.bindNamed(kNumberOfStreams, int64_t{number_of_streams});
  for (const auto& [symbol, value] : options.symbols) {
    ee_.bind(symbol, value);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    ee_.bind(container_->inputs()[i], inputs[i]);
  }
  const std::vector<Val*>& program_outputs = container_->outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto* tv = program_outputs[i]->as<TensorView>();
    // An output whose mesh does not hold this device has no buffer here.
    const bool held_elsewhere = tv->hasDeviceMesh() && !tv->getDeviceMesh().has(params_.my_device);
    if (!(held_elsewhere && !outputs[i].defined())) {
      validateOutputBuffer(tv, outputs[i], ee_.evaluateShape(tv));
    }
    ee_.bind(tv, outputs[i]);
  }
}

std::vector<at::Tensor> HostIrEvaluator::takeOutputs(const std::vector<at::Tensor>& outputs,
                                                     int64_t my_device) {
  const std::vector<Val*>& program_outputs = container_->outputs();
  std::vector<at::Tensor> results;
  for (size_t i = 0; i < program_outputs.size(); ++i) {
    const auto* tv = dynamic_cast<const TensorView*>(program_outputs[i]);
    if (my_device >= 0 && tv != nullptr && tv->hasDeviceMesh() &&
        !tv->getDeviceMesh().has(my_device)) {
      results.emplace_back();  // lives on other devices only
      continue;
    }
    HOSTIR_CHECK(ee_.isBound(program_outputs[i]), "output ", program_outputs[i]->toInlineString(),
                 " was never computed or allocated by the host program");
    at::Tensor value = ee_.evaluateTensor(program_outputs[i]);
    // Memory for one no work item touched (skip_compute), and the caller's
    // from now on: it may write it.
    materialize(value);
    markEscaped(value);
    if (!outputs.empty() && !value.is_same(outputs[i])) {
      outputs[i].copy_(value);
      value = outputs[i];
    }
    results.push_back(value);
  }
  // Nothing of the run outlives it: an output's grad_fn holds the program, a
  // cycle through C++ that Python's collector cannot see (test_autograd_lifetime).
  ee_ = ExpressionEvaluator();
  return results;
}

void HostIrEvaluator::runScope(const Scope& scope) {
  size_t index = 0;
  for (const Expr* expr : scope) {
    try {
      dispatch(expr);
    } catch (const Error& error) {
      if (std::string(error.what()).rfind("ATen failed to evaluate\n", 0) != 0) {
        throw;
      }
      rethrowNamingTheOp(error, label(expr));
    } catch (const std::exception& error) {
      // ATen raised on the host (an allocation, a view, a slice's bounds).
      rethrowNamingTheOp(error, label(expr));
    }
    unbindDeadAfter(scope, index++);
  }
}

void HostIrEvaluator::unbindDeadAfter(const Scope& scope, size_t index) {
  if (&scope != &container_->topLevel()) {
    return;
  }
  for (const Val* dead : buffers_.deadAfter(index)) {
    ee_.unbind(dead);
  }
}

const std::shared_ptr<const std::string>& HostIrEvaluator::sharedLabel(const Expr* expr) {
  auto it = labels_.find(expr);
  if (it == labels_.end()) {
    std::string text = expr->toString();
    while (!text.empty() && text.back() == '\n') {
      text.pop_back();
    }
    it = labels_.emplace(expr, std::make_shared<const std::string>(std::move(text))).first;
  }
  return it->second;
}

at::Tensor HostIrEvaluator::boundOrAllocated(const Val* tensor, bool zero_init) {
  if (ee_.isBound(tensor)) {
    return ee_.evaluateTensor(tensor);
  }
  auto* tv = tensor->as<TensorView>();
  at::Tensor buffer = buffers_.allocate(tv, ee_.evaluateShape(tv), std::nullopt, zero_init);
  ee_.bind(tv, buffer);
  return buffer;
}

at::Tensor HostIrEvaluator::boundInput(const Val* tensor, const Expr* user) {
  HOSTIR_CHECK(ee_.isBound(tensor), tensor->toInlineString(), " is used by\n", user->toString(1),
               "before the host program computes or allocates it");
  return ee_.evaluateTensor(tensor);
}

namespace {
// Up to this many elements in each tensor it touches, an op that is not a
// GEMM costs about what handing it to a sleeping worker costs (a few
// microseconds of both threads; docs/streams.md, "Cheap work runs where it
// is issued").
constexpr int64_t kCheapOpElements = 4096;

bool isCheapOp(const Expr* expr, const at::Tensor& out,
               const std::vector<std::pair<const Val*, PolymorphicValue>>& operands) {
  if (expr->isA<MatmulOp>() || expr->isA<LinearOp>() || out.numel() > kCheapOpElements) {
    return false;
  }
  return std::all_of(operands.begin(), operands.end(), [](const auto& operand) {
    const PolymorphicValue& value = operand.second;
    return !isTensor(value) || std::get<at::Tensor>(value).numel() <= kCheapOpElements;
  });
}

// A work item's operands get their memory (deferred_memory.h) as it runs.
void materializeOperands(const std::vector<std::pair<const Val*, PolymorphicValue>>& operands) {
  for (const auto& operand : operands) {
    if (isTensor(operand.second)) {
      materialize(std::get<at::Tensor>(operand.second));
    }
  }
}

void materializeInputs(const std::vector<PolymorphicValue>& inputs) {
  for (const PolymorphicValue& input : inputs) {
    if (isTensor(input)) {
      materialize(std::get<at::Tensor>(input));
    }
  }
}

// The tensors among an op's operands, named, for the NaN/Inf check.
runtime::NamedTensors tensorsOf(
    const std::vector<std::pair<const Val*, PolymorphicValue>>& operands) {
  runtime::NamedTensors tensors;
  for (const auto& [val, value] : operands) {
    if (isTensor(value)) {
      tensors.emplace_back(val->toInlineString(), std::get<at::Tensor>(value));
    }
  }
  return tensors;
}
}  // namespace

void HostIrEvaluator::enqueueFusionOp(const Expr* expr) {
  at::Tensor out = boundOrAllocated(expr->output(0));
  std::vector<std::pair<const Val*, PolymorphicValue>> operands;
  for (const Val* input : expr->inputs()) {
    operands.emplace_back(input, input->vtype() == ValType::TensorView
                                     ? PolymorphicValue(boundInput(input, expr))
                                     : ee_.evaluate(input));
  }
  const bool cheap = isCheapOp(expr, out, operands);
  scheduler_.enqueueCompute(
      sharedLabel(expr),
      [expr, operands = std::move(operands), out, check_finite = check_finite_] {
        materializeOperands(operands);
        materialize(out, /*written=*/true);
        ExpressionEvaluator local;
        for (const auto& [val, value] : operands) {
          local.bind(val, value);
        }
        evaluateFusionOpInto(expr, local, out);
        if (check_finite) {
          runtime::checkOutputsFinite({{expr->output(0)->toInlineString(), out}},
                                      tensorsOf(operands), [expr] { return expr->toString(1); });
        }
      },
      cheap);
}

void HostIrEvaluator::bindViewOrCopy(const Expr* expr) {
  // A view is metadata: the host makes it now, even if the data is not
  // computed yet. When the output is already bound (a buffer to fill), the
  // view's data is copied into it on the stream instead, except for a
  // program output: the program may write the view's base after this point
  // (a padded block sliced to the output, filled by a loop after), so a
  // caller's buffer for it gets the view's data when the run returns
  // (takeOutputs), not a copy of what the base held here.
  const std::vector<Val*>& program_outputs = container_->outputs();
  const bool program_output = std::find(program_outputs.begin(), program_outputs.end(),
                                        expr->output(0)) != program_outputs.end();
  if (ee_.isBound(expr->output(0)) && !program_output) {
    enqueueFusionOp(expr);
    return;
  }
  for (const Val* input : expr->inputs()) {
    if (input->vtype() == ValType::TensorView) {
      boundInput(input, expr);
    }
  }
  ee_.bind(expr->output(0), evaluateFusionOp(expr, ee_).at(0));
}

void HostIrEvaluator::enqueueSegment(const Expr* expr, FusionExecutor& executor,
                                     const HostUnit* unit) {
  std::vector<PolymorphicValue> inputs;
  for (const Val* input : expr->inputs()) {
    inputs.push_back(input->vtype() == ValType::TensorView
                         ? PolymorphicValue(boundInput(input, expr))
                         : ee_.evaluate(input));
  }
  std::vector<at::Tensor> outputs;
  for (const Val* output : expr->outputs()) {
    outputs.push_back(boundOrAllocated(output));
  }
  if (!check_finite_) {
    scheduler_.enqueueCompute(sharedLabel(expr), [&executor, inputs = std::move(inputs), outputs] {
      materializeInputs(inputs);
      materializeWritten(outputs);
      executor.run(inputs, outputs);
    });
    return;
  }
  scheduler_.enqueueCompute(sharedLabel(expr),
                            [expr, unit, &executor, inputs = std::move(inputs), outputs] {
                              materializeInputs(inputs);
                              materializeWritten(outputs);
                              runSegmentCheckingFinite(expr, unit, executor, inputs, outputs);
                            });
}

void HostIrEvaluator::handle(const HostUnit* /*expr*/) {
  // A HostUnit only holds a segment; PostOnStream runs it.
}

void HostIrEvaluator::handle(const PostOnStream* expr) {
  // The executable variant for this rank's device (specialize_encodings).
  const HostUnit* unit = expr->hostUnitFor(params_.my_device);
  FusionExecutor& executor = segments_.forUnit(unit);
  // A result the variant writes in panels gets a buffer laid out so.
  for (size_t i = 0; i < expr->outputs().size(); ++i) {
    const auto* writer = dynamic_cast<const TensorView*>(unit->fusion()->outputs().at(i));
    if (writer != nullptr && writer->hasEncoding() && writer->encoding()->isResolved() &&
        !writer->encoding()->resolved->isIdentity() && !ee_.isBound(expr->outputs()[i])) {
      auto* tv = expr->outputs()[i]->as<TensorView>();
      ee_.bind(tv, buffers_.allocate(tv, ee_.evaluateShape(tv), writer->encoding()->resolved));
    }
  }
  enqueueSegment(expr, executor, unit);
}

namespace {
// The layout this device holds an encoded tensor in: the pass's choice for
// the device, else this process's target's resolution.
Layout layoutOnThisDevice(std::optional<Layout> chosen, const TensorView* encoded) {
  return chosen.has_value() ? *chosen : resolveLayout(encoded, localTarget());
}
}  // namespace

void HostIrEvaluator::handle(const SetEncoding* expr) {
  at::Tensor plain = boundInput(expr->in(), expr);
  Layout layout = layoutOnThisDevice(expr->layoutFor(params_.my_device), expr->out());
  if (!plain.defined() || layout.isIdentity()) {
    ee_.bind(expr->out(), plain);
    return;
  }
  if (expr->in()->isFusionInput()) {
    // A weight passed to every run: packed once, on the host thread (the
    // caller's data is ready), reused while the tensor is unchanged.
    ee_.bind(expr->out(), packMatmulRhsCached(plain, layout));
    return;
  }
  const int64_t n = plain.size(layout.n_axis);
  const int64_t k = plain.size(1 - layout.n_axis);
  at::Tensor packed =
      deferredEmpty(layout.blockedShape(n, k), plain.scalar_type(), &BufferPool::shared());
  rememberPlainSizes(packed, plain.sizes().vec());
  ee_.bind(expr->out(), packed);
  scheduler_.enqueueCompute(sharedLabel(expr), [plain, packed, layout] {
    materialize(plain);
    materialize(packed, /*written=*/true);
    packed.copy_(packMatmulRhs(plain, layout));
  });
}

void HostIrEvaluator::handle(const UnsetEncoding* expr) {
  at::Tensor encoded = boundInput(expr->in(), expr);
  at::Tensor out = boundOrAllocated(expr->out());
  Layout layout = layoutOnThisDevice(expr->layoutFor(params_.my_device), expr->in());
  scheduler_.enqueueCompute(sharedLabel(expr), [encoded, out, layout] {
    materialize(encoded);
    materialize(out, /*written=*/true);
    out.copy_(layout.isIdentity() || encoded.dim() == out.dim()
                  ? encoded
                  : unpackMatmulRhs(encoded, layout, out.sizes().vec()));
  });
}

void HostIrEvaluator::handle(const LaunchKernel* expr) {
  enqueueSegment(expr, segments_.forKernel(expr->kernelId()));
}

void HostIrEvaluator::handle(const Allocate* expr) {
  boundOrAllocated(expr->buffer(), expr->zeroInit());
}

void HostIrEvaluator::handle(const Deallocate* expr) {
  // Queued closures hold their own references: memory is freed after the
  // last queued use finishes.
  ee_.unbind(expr->buffer());
}

void HostIrEvaluator::handle(const ForLoop* expr) {
  int64_t start = ee_.evaluateInt(expr->start());
  int64_t stop = ee_.evaluateInt(expr->stop());
  int64_t step = ee_.evaluateInt(expr->step());
  HOSTIR_CHECK(step > 0, "loop step of\n", label(expr), "\nmust be positive, got ", step);
  // Values the body binds (op outputs, views, allocations) belong to one
  // iteration: drop them before the next, unless they existed before the
  // loop (a buffer allocated outside that the body writes into). Nested
  // loops' bodies count too: their values are still bound from this loop's
  // previous iteration when the nested loop starts again.
  std::vector<const Val*> per_iteration;
  std::vector<const Scope*> scopes{&expr->body()};
  while (!scopes.empty()) {
    const Scope* scope = scopes.back();
    scopes.pop_back();
    for (const Expr* body_expr : *scope) {
      if (const auto* nested = dynamic_cast<const ForLoop*>(body_expr)) {
        scopes.push_back(&nested->body());
      }
      std::vector<Val*> bound = body_expr->outputs();
      if (const auto* alias = dynamic_cast<const HirAliasSelect*>(body_expr)) {
        bound.push_back(alias->out());
      }
      if (const auto* allocate = dynamic_cast<const Allocate*>(body_expr)) {
        bound.push_back(allocate->buffer());
      }
      for (const Val* val : bound) {
        if (!ee_.isBound(val)) {
          per_iteration.push_back(val);
        }
      }
    }
  }
  for (int64_t i = start; i < stop; i += step) {
    for (const Val* val : per_iteration) {
      ee_.unbind(val);
    }
    ee_.bind(expr->index(), i);
    runScope(expr->body());
  }
  ee_.unbind(expr->index());
}

void HostIrEvaluator::handle(const GetCurrentStream* expr) {
  scheduler_.bindCurrent(expr->output(0));
}

void HostIrEvaluator::handle(const SetCurrentStream* expr) {
  scheduler_.switchTo(expr->stream(), ee_);
}

void HostIrEvaluator::handle(const Synchronize* expr) {
  scheduler_.synchronizeWith(expr->stream(), ee_);
}

void HostIrEvaluator::handle(const HirAliasSelect* expr) {
  at::Tensor in = boundInput(expr->in(), expr);
  int64_t index = ee_.evaluateInt(expr->index());
  HOSTIR_CHECK(
      expr->axis() >= 0 && expr->axis() < in.dim() && index >= 0 && index < in.size(expr->axis()),
      "HirAliasSelect index ", index, " is out of range for ", expr->in()->toInlineString(),
      " of sizes ", in.sizes(), " along axis ", expr->axis());
  ee_.bind(expr->out(), in.select(expr->axis(), index));
}

void HostIrEvaluator::handle(const Communication* expr) {
  at::Tensor in = ee_.isBound(expr->in()) ? ee_.evaluateTensor(expr->in()) : at::Tensor();
  at::Tensor out = ee_.isBound(expr->out()) ? ee_.evaluateTensor(expr->out()) : at::Tensor();
  runtime::Stream& current = scheduler_.leaveInline();
  collectives_.post(expr, sharedLabel(expr), in, out, current, scheduler_.waitTimeout());
}

void HostIrEvaluator::handle(const P2PCommunication* expr) {
  collectives_.communicator(expr);  // refused before anything is allocated
  at::Tensor buffer = boundOrAllocated(expr->buffer());
  int64_t peer = ee_.evaluateInt(expr->peer());
  runtime::Stream& current = scheduler_.leaveInline();
  collectives_.post(expr, sharedLabel(expr), buffer, peer, current, scheduler_.waitTimeout());
}

void HostIrEvaluator::handle(const Wait* expr) {
  // Only this stream waits: first for the channel to post, then for the data.
  runtime::Stream& current = scheduler_.leaveInline();
  collectives_.wait(expr, expr->communication(), sharedLabel(expr), current,
                    scheduler_.waitTimeout());
}

void HostIrEvaluator::handle(const StartCoalescing* expr) {
  collectives_.startCoalescing(label(expr));
}

void HostIrEvaluator::handle(const EndCoalescing* expr) {
  collectives_.endCoalescing(expr, label(expr));
}

void HostIrEvaluator::handle(const LoadStoreOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const UnaryOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const BinaryOp* expr) {
  HOSTIR_CHECK(expr->out()->vtype() == ValType::TensorView, "scalar arithmetic ",
               expr->toInlineString(), " is evaluated on demand, not as a statement");
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const ReductionOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const MatmulOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const LinearOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const ReshapeOp* expr) {
  // A reshape of contiguous memory is a view the host can make now; one that
  // must copy is computed on the stream like any op.
  if (!ee_.isBound(expr->output(0))) {
    at::Tensor in = boundInput(expr->input(0), expr);
    std::vector<int64_t> sizes = ee_.evaluateShape(expr->output(0)->as<TensorView>());
    if (in.defined() && in.is_contiguous()) {
      ee_.bind(expr->output(0), in.view(sizes));
      return;
    }
  }
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const FullOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const WhereOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const IotaOp* expr) {
  enqueueFusionOp(expr);
}
void HostIrEvaluator::handle(const BroadcastOp* expr) {
  bindViewOrCopy(expr);
}
void HostIrEvaluator::handle(const SelectOp* expr) {
  bindViewOrCopy(expr);
}
void HostIrEvaluator::handle(const SliceOp* expr) {
  bindViewOrCopy(expr);
}
void HostIrEvaluator::handle(const PermuteOp* expr) {
  bindViewOrCopy(expr);
}

}  // namespace hostir
