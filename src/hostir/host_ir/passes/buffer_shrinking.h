#pragma once

namespace hostir {

class HostIrContainer;

// Buffer shrinking: a stream-parallel intermediate that is produced and
// consumed only inside one stream loop (not a program output, not read
// anywhere else) is allocated as a ring of slots = minimum(numberOfStreams,
// the loop's stop) slices indexed by StreamIdx % slots instead of in full (a
// loop of 2 iterations holds 2 slots, whatever the number of streams). Slots
// are reused only by iterations on the same stream, which run in order, so an
// iteration never overwrites a slot that an earlier iteration still reads.
void shrinkStreamBuffers(HostIrContainer& container);

}  // namespace hostir
