#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cstdint>

#include "hostir/host_ir/communication.h"
#include "hostir/runtime/comm/team_exchange.h"

// Allgather and reduce-scatter of torch.chunk's unequal pieces (issue 37):
// the member at position p of a team of k holds rowChunk(n, k, p) of the
// whole's axis (ceilDiv(n, k) rows each, the last fewer or none). Gloo 1.13's
// allgather takes equal blocks only and it has no reduce-scatter, so both
// are all-to-alls with split sizes (Gloo's alltoallv, MPI's
// MPI_Ialltoallv) that read and write the caller's buffers where their
// layout allows: nothing is padded, on the wire or in a buffer, and the
// scratch they need comes from collectiveScratch() (collective_buffers.h).

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

// Reduces every member's `whole` with `op` and leaves this member's piece of
// axis `axis` of the result in `piece` (any shape of its element count). The
// sent buffer is `whole` itself when contiguous, cut on axis 0 and the team
// sorted (unstriped), else a scratch the pieces are copied into.
c10::intrusive_ptr<c10d::Work> postUnevenReduceScatter(const TeamExchange& exchange,
                                                       const at::Tensor& whole, int64_t axis,
                                                       ReduceOp op, const at::Tensor& piece);

}  // namespace hostir
