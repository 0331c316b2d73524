#pragma once

#include <memory>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/passes/pass_manager.h"
#include "hostir/multidevice/target.h"

namespace hostir {

// The host IR passes of a lowering, in their fixed order:
//   1. stream_parallelization  (stream_parallelization.h)
//   2. buffer_shrinking        (buffer_shrinking.h)
HostIrPassManager defaultHostIrPasses();

// The passes of a multi-device program lowered for device `my_device`:
//   1. resharding_to_communication (communication_lowering.h)
//   2. specialize_encodings        (specialize_encodings.h; every device's
//                                   target in `targets`)
//   3. other_devices_work_removal  (communication_lowering.h)
//   4. stream_parallelization, 5. buffer_shrinking (as above)
HostIrPassManager multiDeviceHostIrPasses(int64_t my_device, const DeviceTargets& targets = {});

// Lowers a fusion to a host program: copies it, segments the copy with the
// host-lowering merge policy (segment/host_lowering_policy.h), emits one
// top-level expr per segment in run order — the op itself for a
// host-lowerable segment (after any forwarded chain it reads), its exprs one
// by one for a segment computing Stream-parallel tensors (the stream pass
// slices each of them), and PostOnStream(HostUnit(segment fusion)) for any
// other — then runs `passes`. HOSTIR_DUMP=host_ir prints the result.
std::unique_ptr<HostIrContainer> lowerToHostIr(const Fusion& fusion,
                                               HostIrPassManager passes = defaultHostIrPasses());

// The same without running any pass: the segments as top-level exprs.
std::unique_ptr<HostIrContainer> lowerSegmentsToHostIr(const Fusion& fusion);

}  // namespace hostir
