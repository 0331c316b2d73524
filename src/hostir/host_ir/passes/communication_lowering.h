#pragma once

#include <cstdint>

namespace hostir {

class HostIrContainer;

// Converts every top-level resharding expr into what moves the data, for
// device `my_device` (each rank lowers its own program):
//   set                       -> Allocate(out) + Communication + Wait (per
//                                collective of the plan this device joins)
//   reduction / contraction   -> the local op into an unsharded partial, then
//     over a sharded axis        Allreduce / ReduceScatter / Reduce + Wait
//   matmul/linear with A row- -> a host loop over the output's Stream chunks:
//     sharded, Stream output     slice this device's rows of A, Allgather
//                                them, Wait, GEMM into the output rows the
//                                chunk covers (on rotating streams, so chunk
//                                i+1's allgather overlaps chunk i's GEMM)
// The collective for each pattern comes from classifyResharding
// (multidevice/communication_plan.h); anything else that reshards is
// rejected there with an error naming the expr and its shardings.
void lowerReshardingToCommunication(HostIrContainer& container, int64_t my_device);

// Drops the top-level exprs and allocations whose tensors live only on
// other devices: a rank skips what is not on its mesh.
void removeOtherDevicesWork(HostIrContainer& container, int64_t my_device);

}  // namespace hostir
