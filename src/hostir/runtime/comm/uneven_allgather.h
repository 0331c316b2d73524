#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cstdint>

#include "hostir/host_ir/communication.h"
#include "hostir/runtime/comm/team_exchange.h"

// Allgather of torch.chunk's unequal pieces (issue 37): the member at
// position p of a team of k holds rowChunk(n, k, p) of the whole's axis
// (ceilDiv(n, k) rows each, the last fewer or none). Gloo 1.13's allgather
// takes equal blocks only, so this is an all-to-all with split sizes
// (Gloo's alltoallv, MPI's MPI_Ialltoallv) that reads and writes the
// caller's buffers where their layout allows: nothing is padded, on the
// wire or in a buffer, and the scratch it needs comes from
// collectiveScratch() (collective_buffers.h). The reduce-scatter of unequal
// pieces is composed_reduce_scatter.h.

namespace hostir {

// Allgathers `piece`, this member's piece of axis 0 of `whole`, from every
// member into `whole`. This member's rows are copied locally; the others'
// land straight in `whole` when contiguous in it (always for 2 members and
// for the first or the last member of a sorted team), else in a scratch
// copied into place. The sent buffer is `piece` itself for 2 members, its
// k - 1 copies otherwise (an alltoallv reads disjoint ranges).
c10::intrusive_ptr<c10d::Work> postUnevenAllgather(const TeamExchange& exchange,
                                                   const at::Tensor& piece,
                                                   const at::Tensor& whole);

}  // namespace hostir
