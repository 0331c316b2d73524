#include "hostir/runtime/multidevice_executor.h"

#include "hostir/host_ir/lowering.h"
#include "hostir/ir/cloner.h"
#include "hostir/multidevice/presegmentation_passes.h"

namespace hostir {

MultiDeviceExecutor::MultiDeviceExecutor(const Fusion& fusion, Communicator& communicator,
                                         MultiDeviceExecutorParams params)
    : prepared_(std::make_unique<Fusion>()) {
  copyFusion(fusion, *prepared_);
  runPresegmentationPasses(prepared_.get());
  int64_t my_device = communicator.deviceId();
  evaluator_ = std::make_unique<HostIrEvaluator>(
      lowerToHostIr(*prepared_, multiDeviceHostIrPasses(my_device)),
      HostIrEvaluatorParams{.number_of_streams = params.number_of_streams,
                            .communicator = &communicator,
                            .my_device = my_device});
}

}  // namespace hostir
