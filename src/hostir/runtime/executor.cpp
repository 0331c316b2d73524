#include "hostir/runtime/executor.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "hostir/compiler/compile.h"
#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/options.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/comm/stream_split_planning.h"
#include "hostir/runtime/segment_engines.h"
#include "hostir/runtime/streams/number_of_streams.h"
#include "hostir/runtime/streams/wait_exposure.h"

namespace hostir {

namespace {

std::unique_ptr<Fusion> copyOf(const Fusion& fusion) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  return copy;
}

// Whether insert_stream_splits could pipeline anything in `fusion` (a
// collective whose rows a GEMM's chunks can follow): only then is preparing
// worth deferring to the first run, when the planner knows the sizes. The
// answer depends on the definition alone, so every rank agrees. It
// propagates the shardings of the executor's own copy in place: the
// compilation runs those passes again, and they change nothing then.
bool hasPipelinableCollective(Fusion& fusion) {
  if (!isPassDisabled("validate_shardings")) {
    validateShardings(&fusion);
  }
  if (!isPassDisabled("propagate_shardings")) {
    propagateShardings(&fusion);
  }
  const std::vector<StreamSplitCandidate> candidates = findStreamSplitCandidates(fusion);
  return std::any_of(candidates.begin(), candidates.end(), [](const StreamSplitCandidate& c) {
    return c.gathered != nullptr && c.not_chunkable.empty();
  });
}

// What a wait's trace name ("Wait Communication 39", the Wait's label)
// stands for: "allgather of T0 into T6 (Communication 39)", for every
// collective of the program, loop bodies included.
void nameCollectives(const Scope& scope, std::map<std::string, std::string>& names) {
  for (const Expr* expr : scope) {
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      nameCollectives(loop->body(), names);
    } else if (const auto* communication = dynamic_cast<const Communication*>(expr)) {
      names["Wait " + communication->toInlineString()] =
          toString(communication->type()) + " of T" + std::to_string(communication->in()->name()) +
          " into T" + std::to_string(communication->out()->name()) + " (" +
          communication->toInlineString() + ")";
    }
  }
}

std::string describeExposure(const runtime::RunExposure& run, const HostIrContainer& program) {
  std::map<std::string, std::string> names;
  nameCollectives(program.topLevel(), names);
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(2)
     << "measured on one traced run of this rank: " << run.span_ms << " ms, compute "
     << run.compute_ms << " ms; waits for collectives exposed (no compute running) "
     << run.exposed_ms << " ms\n";
  for (const runtime::WaitExposure& wait : run.waits) {
    auto name = names.find(wait.name);
    ss << "  " << (name != names.end() ? name->second : wait.name) << ": " << wait.waits
       << (wait.waits == 1 ? " wait, " : " waits, ") << wait.waited_ms << " ms waited, "
       << wait.exposed_ms << " ms exposed\n";
  }
  return ss.str();
}

}  // namespace

Executor::Executor(const Fusion& fusion, ExecutorParams params)
    : number_of_streams_(runtime::checkedNumberOfStreams(params.number_of_streams)) {
  // Checked before anything is compiled, whichever entry point built it (a
  // sharded program prepared at its first run builds its evaluator then).
  Communicator* communicator = params.communicator;
  if (communicator == nullptr) {
    CompiledProgram compiled = compile(fusion);
    decideSegmentEngines(*compiled.program);  // kernels compiled ahead of the first run
    prepared_ = std::move(compiled.fusion);
    evaluator_ = std::make_unique<HostIrEvaluator>(
        std::move(compiled.program),
        HostIrEvaluatorParams{.number_of_streams = number_of_streams_});
    checks_ = std::make_unique<FusionChecks>(*prepared_);
    return;
  }
  // Until prepareSharded compiles it, prepared_ is the user's fusion as given.
  prepared_ = copyOf(fusion);
  if (params.automatic_stream_splits && communicator->size() > 1 &&
      !isPassDisabled("insert_stream_splits") && !hasStreamAxis(*prepared_) &&
      hasPipelinableCollective(*prepared_)) {
    deferred_communicator_ = communicator;
    return;
  }
  prepareSharded(*communicator, nullptr);
}

bool ExecutorParams::automaticStreamSplitsFromEnvironment() {
  const char* value = std::getenv("HOSTIR_OVERLAP");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "auto") {
    return true;
  }
  if (std::string(value) == "off") {
    return false;
  }
  HOSTIR_THROW("HOSTIR_OVERLAP=", value,
               " is not a mode; valid: auto (automatic stream splits, the default) or off");
}

void Executor::prepareSharded(Communicator& communicator, StreamSplitPlanner* planner) {
  const int64_t my_device = communicator.deviceId();
  std::unique_ptr<HostIrContainer> program;
  {
    StreamSplitPlannerScope scope(planner);  // insert_stream_splits asks it
    program =
        compileInPlace(*prepared_, CompileOptions{.multidevice = MultiDeviceLowering{
                                                      my_device, communicator.deviceTargets()}});
  }
  decideSegmentEngines(*program);
  evaluator_ = std::make_unique<HostIrEvaluator>(
      std::move(program), HostIrEvaluatorParams{.number_of_streams = number_of_streams_,
                                                .communicator = &communicator,
                                                .my_device = my_device});
  agreement_ = std::make_unique<RankAgreement>(*prepared_, evaluator_->container(), communicator);
}

void Executor::prepareIfDeferred(const std::vector<at::Tensor>& inputs) {
  if (deferred_communicator_ == nullptr) {
    return;
  }
  Communicator& communicator = *deferred_communicator_;
  CalibratedStreamSplitPlanner planner(communicator, *prepared_, inputs);
  prepareSharded(communicator, &planner);
  overlap_report_ = planner.report();
  automatic_chunks_ = planner.largestChunks();
  deferred_communicator_ = nullptr;
}

void Executor::checkPrepared(const char* what) const {
  HOSTIR_CHECK(deferred_communicator_ == nullptr, "the program is not prepared yet: ", what,
               "() of a sharded fusion without Stream annotations that has a collective to "
               "pipeline is known after its first run, which chooses the automatic stream splits "
               "from the sizes; run it once first, annotate the Stream splits yourself, or turn "
               "the automatic splits off (HOSTIR_OVERLAP=off, "
               "ExecutorParams::automatic_stream_splits = false, "
               "fd.sched.automatic_stream_splits(False))");
}

Executor::~Executor() = default;

int Executor::streamsOfRun(std::optional<int> number_of_streams) const {
  // Checked here, before a sharded run's first collective.
  return runtime::checkedNumberOfStreams(number_of_streams.value_or(number_of_streams_));
}

const FusionChecks& Executor::checks() const {
  HOSTIR_ASSERT(checks_ != nullptr, "a sharded run has no single-process fusion checks");
  return *checks_;
}

std::vector<at::Tensor> Executor::run(const std::vector<at::Tensor>& inputs,
                                      const std::vector<at::Tensor>& outputs) {
  return run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs);
}

std::vector<at::Tensor> Executor::run(const std::vector<PolymorphicValue>& inputs,
                                      const std::vector<at::Tensor>& outputs,
                                      std::optional<int> number_of_streams) {
  const int streams = streamsOfRun(number_of_streams);
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (deferred_communicator_ != nullptr) {
    std::vector<at::Tensor> tensors;
    for (const PolymorphicValue& input : inputs) {
      HOSTIR_CHECK(isTensor(input), "a fusion with a device mesh takes tensor inputs only; got ",
                   describeValue(input));
      tensors.push_back(std::get<at::Tensor>(input));
    }
    prepareIfDeferred(tensors);
  }
  // Key once: the one signature of these inputs.
  const std::vector<int64_t> signature = inputSignature(inputs);
  HostIrRunOptions options;
  options.number_of_streams = streams;
  if (agreement_ != nullptr) {
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size());
    for (const PolymorphicValue& input : inputs) {
      HOSTIR_CHECK(isTensor(input), "a fusion with a device mesh takes tensor inputs only; got ",
                   describeValue(input));
      tensors.push_back(std::get<at::Tensor>(input));
    }
    // Before anything that one rank alone could reject: a rank that raised
    // here while the others went on would leave them waiting in a collective.
    if (agreement_->communicator().size() > 1) {
      options.symbols = agreement_->check(tensors, signature, streams);
    }
    for (auto& symbol : agreement_->exchangeInputExtents(tensors)) {
      options.symbols.push_back(std::move(symbol));
    }
  } else {
    // Validate once, then (for a signature not seen before) the fusion
    // checks, which need validated inputs.
    evaluator_->validate(inputs, outputs);
    checks_->check(inputs, signature);
    options.inputs_validated = true;
  }
  // HOSTIR_DUMP=overlap: a sharded program's second run (the first warm
  // one) says what its collectives cost, unless a trace already records.
  if (agreement_ != nullptr && ++runs_ == 2 && isDumpEnabled("overlap") &&
      !runtime::Tracer::global().isEnabled()) {
    std::vector<at::Tensor> result =
        measuringExposure([&] { return evaluator_->runSerialized(inputs, outputs, options); });
    std::cout << "=== exposed communication:\n" << exposure_report_ << std::flush;
    return result;
  }
  return evaluator_->runSerialized(inputs, outputs, options);
}

std::vector<at::Tensor> Executor::runMeasuringExposure(const std::vector<at::Tensor>& inputs) {
  return measuringExposure([&] { return run(inputs); });
}

std::vector<at::Tensor> Executor::measuringExposure(
    const std::function<std::vector<at::Tensor>()>& run) {
  runtime::Tracer& tracer = runtime::Tracer::global();
  const runtime::Tracer::Stretch stretch = tracer.beginStretch();
  std::vector<at::Tensor> outputs;
  try {
    outputs = run();
  } catch (...) {
    tracer.endStretch(stretch);
    throw;
  }
  const std::vector<runtime::TraceEvent> events = tracer.endStretch(stretch);
  const runtime::RunExposure exposure = runtime::measureWaitExposure(
      events, static_cast<int>(runtime::StreamPool::kFirstChannelId),
      [](const std::string& name) { return name.rfind("Wait ", 0) == 0; });
  exposure_report_ = describeExposure(exposure, evaluator_->container());
  return outputs;
}

std::vector<at::Tensor> Executor::runComputeOnly(const std::vector<at::Tensor>& tensors,
                                                 std::optional<int> number_of_streams) {
  HostIrRunOptions options;
  options.local_collectives = true;
  return runWithout(tensors, number_of_streams, options);
}

std::vector<at::Tensor> Executor::runCommunicationOnly(const std::vector<at::Tensor>& tensors,
                                                       std::optional<int> number_of_streams) {
  HostIrRunOptions options;
  options.skip_compute = true;
  return runWithout(tensors, number_of_streams, options);
}

std::vector<at::Tensor> Executor::runWithout(const std::vector<at::Tensor>& tensors,
                                             std::optional<int> number_of_streams,
                                             HostIrRunOptions options) {
  const int streams = streamsOfRun(number_of_streams);
  std::lock_guard<std::mutex> lock(run_mutex_);
  prepareIfDeferred(tensors);
  const std::vector<PolymorphicValue> inputs(tensors.begin(), tensors.end());
  options.number_of_streams = streams;
  if (agreement_ != nullptr) {
    if (agreement_->communicator().size() > 1) {
      options.symbols = agreement_->check(tensors, inputSignature(inputs), streams);
    }
    for (auto& symbol : agreement_->exchangeInputExtents(tensors)) {
      options.symbols.push_back(std::move(symbol));
    }
  } else {
    evaluator_->validate(inputs, {});
    checks_->check(inputs, inputSignature(inputs));
    options.inputs_validated = true;
  }
  return evaluator_->runSerialized(inputs, {}, options);
}

}  // namespace hostir
