#include "hostir/multidevice/reduction_sharding.h"

#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

bool reducesShardedAxis(const ReductionOp* reduction, ParallelType parallel_type) {
  const int64_t producer_pos = shardingOf(reduction->in()).axisOf(parallel_type);
  if (producer_pos < 0) {
    return false;
  }
  const int64_t consumer_pos =
      mappedConsumerAxis(mapProducerToConsumer(reduction, reduction->in()), producer_pos);
  return consumer_pos >= 0 &&
         reduction->out()->getLogicalDomain()[static_cast<size_t>(consumer_pos)]->isReduction();
}

}  // namespace hostir
