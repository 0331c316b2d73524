#include "hostir/runtime/host_ir_evaluator.h"

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/one_line.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/finite_check.h"
#include "hostir/runtime/input_validation.h"
#include "hostir/runtime/op_error.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/streams/stream_failure.h"
#include "hostir/runtime/target_detection.h"
#include "hostir/runtime/thread_budget_aten.h"

#include <algorithm>
#include <atomic>

namespace hostir {

HostIrEvaluator::HostIrEvaluator(std::unique_ptr<HostIrContainer> container,
                                 HostIrEvaluatorParams params)
    : container_(std::move(container)), params_(params), pool_(params.number_of_streams) {
  HOSTIR_CHECK(container_ != nullptr, "HostIrEvaluator needs a host program");
  // params_.number_of_streams below 1 was rejected by the pool (pool_).
  // The program owns the segments' fusions and outlives their executors
  // (container_ is declared before them), so the executors borrow them.
  for (HostUnit* unit : container_->hostUnits()) {
    unit_executors_[unit] = FusionExecutor::borrowing(*unit->fusion());
  }
  for (int64_t id = 0; id < container_->numKernels(); ++id) {
    kernel_executors_.push_back(FusionExecutor::borrowing(*container_->kernel(id)));
  }
  communicates_ = params_.communicator != nullptr && postsCommunication(container_->topLevel());
}

std::string HostIrEvaluator::segmentExecution() const {
  std::string report;
  for (HostUnit* unit : container_->postedHostUnits()) {
    report += "  " + unit->toInlineString() + ": " + unit_executors_.at(unit)->execution() + "\n";
  }
  for (size_t id = 0; id < kernel_executors_.size(); ++id) {
    report += "  kernel " + std::to_string(id) + ": " + kernel_executors_[id]->execution() + "\n";
  }
  return report;
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
  const int number_of_streams = options.number_of_streams.value_or(params_.number_of_streams);
  // Runs are serialized: the per-run state below (bindings, current stream,
  // pending works) and the streams themselves belong to one run at a time.
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  pool_.setNumberOfStreams(number_of_streams);  // rejects a number below 1
  int64_t my_device = params_.communicator != nullptr ? params_.my_device : -1;
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
  const std::vector<Val*>& program_outputs = container_->outputs();
  ee_ = ExpressionEvaluator();
  ee_.setDevice(my_device);
  ee_.bindNamed(kNumberOfStreams, int64_t{number_of_streams});
  bound_streams_.clear();
  channels_.startRun();
  local_collectives_ = options.local_collectives;
  skip_compute_ = options.skip_compute;
  check_finite_ = runtime::checkFiniteEnabled();
  // The last run's bindings are gone: its buffers that nobody holds any more
  // can serve this run.
  buffers_.recycle();
  for (const auto& [symbol, value] : options.symbols) {
    ee_.bind(symbol, value);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    ee_.bind(container_->inputs()[i], inputs[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto* tv = program_outputs[i]->as<TensorView>();
    // An output whose mesh does not hold this device has no buffer here.
    const bool held_elsewhere = tv->hasDeviceMesh() && !tv->getDeviceMesh().has(params_.my_device);
    if (!(held_elsewhere && !outputs[i].defined())) {
      validateOutputBuffer(tv, outputs[i], ee_.evaluateShape(tv));
    }
    ee_.bind(tv, outputs[i]);
  }

  const int ranks_sharing_cores =
      communicates_ ? static_cast<int>(params_.communicator->environment().local_world_size) : 1;
  const runtime::ThreadBudget budget =
      runtime::applyThreadBudget(pool_, communicates_, ranks_sharing_cores);
  if (budget.compute_slots >= budget.concurrent_streams) {
    gate_.reset();
  } else if (gate_ == nullptr || gate_->slots() != budget.compute_slots) {
    gate_ = std::make_unique<runtime::ComputeGate>(budget.compute_slots);
  }
  // One rule for every wait of the run (docs/reliability.md): a program that
  // communicates may wait for a collective, which is bounded by the
  // communication timeout, so its stream-side waits get the stream timeout
  // plus that; the collective's own timeout ends a dead peer's wait first,
  // with the message that names it.
  wait_timeout_ = runtime::defaultWaitTimeout();
  if (communicates_) {
    wait_timeout_ +=
        std::chrono::duration_cast<runtime::WaitTimeout>(params_.communicator->timeout());
  }
  current_ = &pool_.callerStream();
  inline_on_caller_ = !communicates_;
  try {
    runScope(container_->topLevel());
  } catch (...) {
    // Work already queued may still use our buffers: let it finish first.
    try {
      pool_.synchronizeAll(wait_timeout_);
    } catch (const std::exception&) {  // the host-side error is the one to report
    }
    throw;
  }
  pool_.synchronizeAll(wait_timeout_);
  return takeOutputs(outputs, my_device);
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

runtime::Stream& HostIrEvaluator::resolveStream(const Stream* stream) {
  auto bound = bound_streams_.find(stream);
  if (bound != bound_streams_.end()) {
    return *bound->second;
  }
  HOSTIR_CHECK(stream->hasIndex(), stream->toInlineString(),
               " is not bound: get it with GetCurrentStream or give it an index");
  int64_t index = ee_.evaluateInt(stream->index());
  HOSTIR_CHECK(index >= 0, stream->toInlineString(), " evaluates to index ", index,
               "; stream indices must be non-negative");
  return pool_.stream(index + 1);
}

at::Tensor HostIrEvaluator::boundOrAllocated(const Val* tensor, bool zero_init) {
  if (ee_.isBound(tensor)) {
    return ee_.evaluateTensor(tensor);
  }
  auto* tv = tensor->as<TensorView>();
  std::optional<Layout> layout;
  if (tv->hasEncoding() && tv->encoding()->isResolved()) {
    layout = tv->encoding()->resolved;  // e.g. what a collective delivers
  }
  return allocate(tv, layout.value_or(Layout::identity()), zero_init);
}

at::Tensor HostIrEvaluator::allocate(const TensorView* tv, const Layout& layout, bool zero_init) {
  auto options = at::TensorOptions().dtype(toAtenType(tv->dtype()));
  std::vector<int64_t> shape = ee_.evaluateShape(tv);
  if (!layout.isIdentity()) {
    // An encoded tensor held in oneDNN's blocked layout (docs/targets.md).
    HOSTIR_CHECK(shape.size() == 2, tv->toInlineString(), " is laid out as ", layout.toString(),
                 " but has ", shape.size(), " axes; a blocked layout holds a 2-D tensor");
    std::vector<int64_t> blocked = layout.blockedShape(
        shape[static_cast<size_t>(layout.n_axis)], shape[static_cast<size_t>(1 - layout.n_axis)]);
    at::Tensor buffer = zero_init ? at::zeros(blocked, options) : at::empty(blocked, options);
    rememberPlainSizes(buffer, shape);
    ee_.bind(tv, buffer);
    return buffer;
  }
  at::Tensor buffer =
      zero_init ? at::zeros(shape, options) : buffers_.take(shape, toAtenType(tv->dtype()));
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
  enqueueCompute(
      expr,
      [expr, operands = std::move(operands), out, check_finite = check_finite_] {
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

template <typename Work>
void HostIrEvaluator::enqueueCompute(const Expr* expr, Work work, bool cheap) {
  if (skip_compute_) {
    return;  // the buffers exist; nothing is computed into them
  }
  // An ATen error on a stream without its backtrace: the cause, then the
  // stream and the op (StreamFailure::describe).
  auto named = [work = std::move(work)] {
    try {
      work();
    } catch (const Error& error) {
      if (std::string(error.what()).rfind("ATen failed to evaluate\n", 0) != 0) {
        throw;
      }
      throw Error(causeOf(error));
    } catch (const std::exception& error) {
      throw Error(causeOf(error));
    }
  };
  if (inline_on_caller_ && current_ == &pool_.callerStream()) {
    runInline(expr, named);
    return;
  }
  if (gate_ == nullptr) {
    if (cheap) {
      current_->enqueueCheap(sharedLabel(expr), std::move(named));
    } else {
      current_->enqueue(sharedLabel(expr), std::move(named));
    }
    return;
  }
  // Two items, so a trace shows the wait for the turn apart from the work.
  auto ticket = gate_->take(label(expr));
  current_->enqueue(
      "wait for the compute turn of " + label(expr),
      [ticket, timeout = wait_timeout_] { ticket->enter(timeout); }, "wait");
  current_->enqueue(sharedLabel(expr), std::move(named), "compute", [ticket] { ticket->leave(); });
}

template <typename Work>
void HostIrEvaluator::runInline(const Expr* expr, const Work& work) {
  runtime::Tracer& tracer = pool_.tracer();
  const int64_t start_us = tracer.isEnabled() ? tracer.nowUs() : 0;
  try {
    work();
  } catch (const std::exception& error) {
    // The message the caller's stream would have given.
    HOSTIR_THROW(runtime::makeStreamFailure(current_->id(), label(expr), error.what()).describe());
  }
  if (tracer.isEnabled()) {
    tracer.record(runtime::TraceEvent{label(expr), current_->id(), start_us, tracer.nowUs()});
  }
}

void HostIrEvaluator::postOnChannel(const Expr* expr, const std::vector<int64_t>& team,
                                    CollectiveChannels::Post post) {
  leaveInline();
  channels_.post(expr, sharedLabel(expr), team, *current_, wait_timeout_, std::move(post));
}

void HostIrEvaluator::bindViewOrCopy(const Expr* expr) {
  // A view is metadata: the host makes it now, even if the data is not
  // computed yet. When the output is already bound (a buffer to fill), the
  // view's data is copied into it on the stream instead.
  if (ee_.isBound(expr->output(0))) {
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
    enqueueCompute(
        expr, [&executor, inputs = std::move(inputs), outputs] { executor.run(inputs, outputs); });
    return;
  }
  enqueueCompute(expr, [expr, unit, &executor, inputs = std::move(inputs), outputs] {
    executor.run(inputs, outputs);
    runtime::NamedTensors read;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (isTensor(inputs[i])) {
        read.emplace_back(expr->inputs()[i]->toInlineString(), std::get<at::Tensor>(inputs[i]));
      }
    }
    runtime::NamedTensors written;
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string name = expr->outputs()[i]->toInlineString();
      if (unit != nullptr) {
        name += " (the segment's output " + unit->fusion()->outputs().at(i)->toInlineString() + ")";
      }
      written.emplace_back(std::move(name), outputs[i]);
    }
    // The segment's ops name it: the HostUnit's fusion, or the launch itself
    // for a kernel.
    runtime::checkOutputsFinite(written, read, [expr, unit] {
      return unit != nullptr ? unit->toString(1) : expr->toString(1);
    });
  });
}

Communicator& HostIrEvaluator::communicator(const Expr* expr) {
  HOSTIR_CHECK(params_.communicator != nullptr, "the host program posts\n", expr->toString(1),
               "but the evaluator has no Communicator; pass one in HostIrEvaluatorParams");
  return *params_.communicator;
}

void HostIrEvaluator::handle(const HostUnit* /*expr*/) {
  // A HostUnit only holds a segment; PostOnStream runs it.
}

void HostIrEvaluator::handle(const PostOnStream* expr) {
  // The executable variant for this rank's device (specialize_encodings).
  const HostUnit* unit = expr->hostUnitFor(params_.my_device);
  auto it = unit_executors_.find(unit);
  HOSTIR_ASSERT(it != unit_executors_.end(), "HostUnit of PostOnStream is not registered");
  // A result the variant writes in panels gets a buffer laid out so.
  for (size_t i = 0; i < expr->outputs().size(); ++i) {
    const auto* writer = dynamic_cast<const TensorView*>(unit->fusion()->outputs().at(i));
    if (writer != nullptr && writer->hasEncoding() && writer->encoding()->isResolved() &&
        !writer->encoding()->resolved->isIdentity() && !ee_.isBound(expr->outputs()[i])) {
      allocate(expr->outputs()[i]->as<TensorView>(), *writer->encoding()->resolved);
    }
  }
  enqueueSegment(expr, *it->second, unit);
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
  at::Tensor packed = at::empty(layout.blockedShape(n, k), plain.options());
  rememberPlainSizes(packed, plain.sizes().vec());
  ee_.bind(expr->out(), packed);
  enqueueCompute(expr, [plain, packed, layout] { packed.copy_(packMatmulRhs(plain, layout)); });
}

void HostIrEvaluator::handle(const UnsetEncoding* expr) {
  at::Tensor encoded = boundInput(expr->in(), expr);
  at::Tensor out = boundOrAllocated(expr->out());
  Layout layout = layoutOnThisDevice(expr->layoutFor(params_.my_device), expr->in());
  enqueueCompute(expr, [encoded, out, layout] {
    out.copy_(layout.isIdentity() || encoded.dim() == out.dim()
                  ? encoded
                  : unpackMatmulRhs(encoded, layout, out.sizes().vec()));
  });
}

void HostIrEvaluator::handle(const LaunchKernel* expr) {
  HOSTIR_CHECK(
      expr->kernelId() >= 0 && expr->kernelId() < static_cast<int64_t>(kernel_executors_.size()),
      "LaunchKernel refers to kernel ", expr->kernelId(), " but the program has ",
      kernel_executors_.size(), " kernels");
  enqueueSegment(expr, *kernel_executors_[static_cast<size_t>(expr->kernelId())]);
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
  bound_streams_[expr->output(0)] = current_;
}

void HostIrEvaluator::handle(const SetCurrentStream* expr) {
  current_ = &resolveStream(expr->stream());
  if (current_ != &pool_.callerStream()) {
    leaveInline();
  }
}

void HostIrEvaluator::handle(const Synchronize* expr) {
  runtime::Stream& other = resolveStream(expr->stream());
  if (&other != current_) {
    leaveInline();
    current_->waitStream(other, wait_timeout_);
  }
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
  Communicator& comm = communicator(expr);
  at::Tensor in = ee_.isBound(expr->in()) ? ee_.evaluateTensor(expr->in()) : at::Tensor();
  at::Tensor out = ee_.isBound(expr->out()) ? ee_.evaluateTensor(expr->out()) : at::Tensor();
  int64_t my_device = params_.my_device;
  if (local_collectives_) {
    postOnChannel(expr, expr->team(), [expr, in, out, my_device] {
      localStandIn(*expr, my_device, in, out);
      return c10::intrusive_ptr<c10d::Work>();
    });
    return;
  }
  postOnChannel(expr, expr->team(), [expr, &comm, in, out, my_device] {
    return postCollective(*expr, my_device, in, out, comm);
  });
}

void HostIrEvaluator::handle(const P2PCommunication* expr) {
  Communicator& comm = communicator(expr);
  at::Tensor buffer = boundOrAllocated(expr->buffer());
  int64_t peer = ee_.evaluateInt(expr->peer());
  int64_t my_device = params_.my_device;
  auto type = expr->type();
  if (local_collectives_) {
    // The stand-in of a receive: defined values, nothing received.
    postOnChannel(expr, {my_device, peer}, [type, buffer] {
      if (type == P2PCommunicationType::Recv) {
        buffer.zero_();
      }
      return c10::intrusive_ptr<c10d::Work>();
    });
    return;
  }
  postOnChannel(expr, {my_device, peer}, [type, peer, buffer, &comm, my_device] {
    return postP2P(type, peer, my_device, buffer, comm);
  });
}

void HostIrEvaluator::handle(const Wait* expr) {
  Communicator& comm = communicator(expr);
  // Only this stream waits: first for the channel to post, then for the data.
  leaveInline();
  channels_.wait(expr->communication(), sharedLabel(expr), *current_, wait_timeout_,
                 comm.timeout());
}

void HostIrEvaluator::handle(const StartCoalescing* expr) {
  channels_.startCoalescing(label(expr));
}

void HostIrEvaluator::handle(const EndCoalescing* expr) {
  channels_.endCoalescing(expr, label(expr));
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
