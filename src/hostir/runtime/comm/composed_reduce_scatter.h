#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cstdint>

#include "hostir/host_ir/communication.h"
#include "hostir/runtime/comm/team_exchange.h"

// The reduce-scatter, composed (Gloo 1.13 has none): an all-to-all with
// counts sends each other member its piece of the input, and each member
// reduces what it receives with its own piece, which does not travel. This
// moves what a real reduce-scatter moves (the others' pieces) where an
// allreduce and a slice would move about twice as much. One mechanism for
// equal blocks and for torch.chunk's unequal pieces (issue 37): equal
// blocks are the case where every piece has ceilDiv(n, k) rows.

namespace hostir {

// Reduce-scatters `input` with `op` into `output` (any shape of this
// member's element count). The member at position p owns rowChunk(n, k, p)
// of the input's axis `axis` (n its extent, k the team's size): the first
// members ceilDiv(n, k) rows, the last fewer or none. With one peer the
// peer's piece is received into the output itself (no scratch); on a
// larger team a member at either end of the group order receives the k - 1
// others' pieces into a scratch; a member between others whose input is the
// pieces in group order (axis 0, contiguous, the team sorted) sends and
// receives all k, its own to itself, rather than copy the others' pieces out
// of the input. Scratch comes from collectiveScratch() (collective_buffers.h).
// Returns nothing to wait for on a team of one.
c10::intrusive_ptr<c10d::Work> postComposedReduceScatter(const TeamExchange& exchange,
                                                         const at::Tensor& input, int64_t axis,
                                                         ReduceOp op, const at::Tensor& output);

}  // namespace hostir
