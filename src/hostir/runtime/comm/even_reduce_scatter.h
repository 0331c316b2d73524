#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cstdint>

#include "hostir/host_ir/communication.h"
#include "hostir/runtime/comm/team_exchange.h"

// The reduce-scatter of equal blocks, composed (Gloo 1.13 has none): an
// all-to-all with counts sends each other member its block of the input,
// and each member reduces what it receives with its own block, which does
// not travel. This moves what a real reduce-scatter moves ((n-1)/n of the
// input per member); an allreduce and a slice would move about twice as
// much.

namespace hostir {

// Reduce-scatters `input` (n equal blocks along `axis`, block p for the
// member at position p) into `output` (one block's elements) with `op`.
// With one peer the peer's block is received into the output itself (no
// scratch); on a larger team a member at either end of the group order
// receives the n - 1 others' blocks into a scratch; a member between others
// whose input is the rows in group order (axis 0, contiguous, the team
// sorted) sends and receives all n, its own to itself, rather than copy
// the others' blocks out of the input. Scratch comes from
// collectiveScratch() (collective_buffers.h). Returns nothing to wait for
// on a team of one.
c10::intrusive_ptr<c10d::Work> postEvenReduceScatter(const TeamExchange& exchange,
                                                     const at::Tensor& input, int64_t axis,
                                                     ReduceOp op, const at::Tensor& output);

}  // namespace hostir
