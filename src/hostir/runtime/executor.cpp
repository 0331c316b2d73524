#include "hostir/runtime/executor.h"

#include <cstdlib>
#include <string>

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/options.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/comm/stream_split_planning.h"

namespace hostir {

namespace {

std::unique_ptr<Fusion> copyOf(const Fusion& fusion) {
  auto copy = std::make_unique<Fusion>();
  copyFusion(fusion, *copy);
  return copy;
}

}  // namespace

Executor::Executor(const Fusion& fusion, ExecutorParams params)
    : number_of_streams_(params.number_of_streams), prepared_(copyOf(fusion)) {
  // The evaluator checks params.number_of_streams when it is built.
  Communicator* communicator = params.communicator;
  if (communicator == nullptr) {
    evaluator_ = std::make_unique<HostIrEvaluator>(
        presegmentAndLower(*prepared_),
        HostIrEvaluatorParams{.number_of_streams = number_of_streams_});
    checks_ = std::make_unique<FusionChecks>(*prepared_);
    return;
  }
  if (params.automatic_stream_splits && communicator->size() > 1 &&
      !isPassDisabled("insert_stream_splits") && !hasStreamAxis(*prepared_)) {
    deferred_communicator_ = communicator;
    return;
  }
  prepareSharded(*communicator, nullptr);
}

bool ExecutorParams::automaticStreamSplitsFromEnvironment() {
  const char* value = std::getenv("HOSTIR_OVERLAP");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "off") {
    return false;
  }
  HOSTIR_CHECK(std::string(value) == "auto", "HOSTIR_OVERLAP=", value,
               " is not a mode; valid: auto (automatic stream splits) or off");
  return true;
}

void Executor::prepareSharded(Communicator& communicator, StreamSplitPlanner* planner) {
  const int64_t my_device = communicator.deviceId();
  std::unique_ptr<HostIrContainer> program;
  {
    StreamSplitPlannerScope scope(planner);  // insert_stream_splits asks it
    program = presegmentAndLower(*prepared_,
                                 MultiDeviceLowering{my_device, communicator.deviceTargets()});
  }
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
               "() of a sharded fusion without Stream annotations is known after its first run, "
               "which chooses the automatic stream splits from the sizes (HOSTIR_OVERLAP=auto); "
               "run it once first, or annotate the Stream splits yourself");
}

Executor::~Executor() = default;

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
  const int streams = number_of_streams.value_or(number_of_streams_);
  // Checked here, before a sharded run's first collective.
  HOSTIR_CHECK(streams > 0, "number_of_streams must be positive, got ", streams,
               " (the default is ", runtime::StreamPool::kDefaultNumberOfStreams, ")");
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
      agreement_->check(tensors, signature, streams);
    }
    options.symbols = agreement_->exchangeInputExtents(tensors);
  } else {
    // Validate once, then (for a signature not seen before) the fusion
    // checks, which need validated inputs.
    evaluator_->validate(inputs, outputs);
    checks_->check(inputs, signature);
    options.inputs_validated = true;
  }
  return evaluator_->run(inputs, outputs, options);
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
  const int streams = number_of_streams.value_or(number_of_streams_);
  HOSTIR_CHECK(streams > 0, "number_of_streams must be positive, got ", streams,
               " (the default is ", runtime::StreamPool::kDefaultNumberOfStreams, ")");
  std::lock_guard<std::mutex> lock(run_mutex_);
  prepareIfDeferred(tensors);
  const std::vector<PolymorphicValue> inputs(tensors.begin(), tensors.end());
  options.number_of_streams = streams;
  if (agreement_ != nullptr) {
    options.symbols = agreement_->exchangeInputExtents(tensors);
  } else {
    evaluator_->validate(inputs, {});
    checks_->check(inputs, inputSignature(inputs));
    options.inputs_validated = true;
  }
  return evaluator_->run(inputs, {}, options);
}

}  // namespace hostir
