#include "hostir/runtime/multidevice_executor.h"

#include <numeric>
#include <unordered_set>

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/presegmentation_passes.h"
#include "hostir/runtime/collectives.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

MultiDeviceExecutor::MultiDeviceExecutor(const Fusion& fusion, Communicator& communicator,
                                         MultiDeviceExecutorParams params)
    : communicator_(communicator), prepared_(std::make_unique<Fusion>()) {
  copyFusion(fusion, *prepared_);
  runPresegmentationPasses(prepared_.get());
  int64_t my_device = communicator.deviceId();
  evaluator_ = std::make_unique<HostIrEvaluator>(
      lowerToHostIr(*prepared_, multiDeviceHostIrPasses(my_device)),
      HostIrEvaluatorParams{.number_of_streams = params.number_of_streams,
                            .communicator = &communicator,
                            .my_device = my_device});

  // Only when some rank misses an input do the ranks need to share shapes;
  // every rank decides the same from the same fusion.
  const std::vector<Val*>& inputs = evaluator_->container().inputs();
  bool some_rank_lacks_an_input = false;
  for (const Val* input : inputs) {
    const auto* tv = dynamic_cast<const TensorView*>(input);
    for (int64_t device = 0; tv != nullptr && device < communicator.size(); ++device) {
      some_rank_lacks_an_input |= tv->hasDeviceMesh() && !tv->getDeviceMesh().has(device);
    }
  }
  if (!some_rank_lacks_an_input) {
    return;
  }
  std::unordered_set<const Val*> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* tv = dynamic_cast<const TensorView*>(inputs[i]);
    if (tv == nullptr) {
      continue;
    }
    std::vector<IterDomain*> shape = tv->shapeDomain();
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      const auto* extent = shape[axis]->extent()->as<Scalar>();
      if (!extent->isConst() && extent->definition() == nullptr && seen.insert(extent).second) {
        input_extents_.push_back({extent, i, static_cast<int64_t>(axis)});
      }
    }
  }
}

std::vector<std::pair<const Val*, PolymorphicValue>> MultiDeviceExecutor::exchangeInputExtents(
    const std::vector<at::Tensor>& inputs) {
  HOSTIR_CHECK(inputs.size() == evaluator_->container().inputs().size(), "the program expects ",
               evaluator_->container().inputs().size(), " inputs but got ", inputs.size());
  const auto known = static_cast<int64_t>(input_extents_.size());
  at::Tensor mine = at::full({known}, -1, at::kLong);
  for (int64_t j = 0; j < known; ++j) {
    const InputExtent& extent = input_extents_[static_cast<size_t>(j)];
    const at::Tensor& tensor = inputs[extent.input];
    if (tensor.defined() && extent.axis < tensor.dim()) {
      const auto* tv = evaluator_->container().inputs()[extent.input]->as<TensorView>();
      mine[j] = tensor.size(extent.axis) * shardDivisors(tv)[static_cast<size_t>(extent.axis)];
    }
  }
  // Every rank takes part, in the same order on every run; a stream key of
  // its own keeps this off the program's process groups.
  constexpr int64_t kExtentExchangeStreamKey = -2;
  std::vector<int64_t> world(static_cast<size_t>(communicator_.size()));
  std::iota(world.begin(), world.end(), 0);
  c10d::ProcessGroup& group = communicator_.processGroup(world, kExtentExchangeStreamKey);
  at::Tensor gathered = at::empty({communicator_.size(), known}, at::kLong);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int64_t rank = 0; rank < communicator_.size(); ++rank) {
    outputs[0].push_back(gathered[rank]);
  }
  std::vector<at::Tensor> contribution{mine};
  c10d::AllgatherOptions options;
  options.timeout = communicator_.timeout();
  waitWork(group.allgather(outputs, contribution, options), communicator_.timeout(),
           "the exchange of input extents among all ranks");
  at::Tensor values = std::get<0>(gathered.max(0));
  std::vector<std::pair<const Val*, PolymorphicValue>> symbols;
  for (int64_t j = 0; j < known; ++j) {
    int64_t value = values[j].item<int64_t>();
    const InputExtent& extent = input_extents_[static_cast<size_t>(j)];
    HOSTIR_CHECK(value >= 0, "no rank was given input ",
                 evaluator_->container().inputs()[extent.input]->toInlineString(),
                 ", so its extent ", extent.symbol->toInlineString(), " is unknown");
    symbols.emplace_back(extent.symbol, value);
  }
  return symbols;
}

std::vector<at::Tensor> MultiDeviceExecutor::run(const std::vector<at::Tensor>& inputs,
                                                 const std::vector<at::Tensor>& outputs) {
  std::vector<std::pair<const Val*, PolymorphicValue>> symbols;
  if (!input_extents_.empty()) {
    symbols = exchangeInputExtents(inputs);
  }
  return evaluator_->run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs,
                         symbols);
}

}  // namespace hostir
