#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include "hostir/host_ir/communication.h"
#include "hostir/runtime/comm/communicator.h"

namespace hostir {

// Posts one collective for this rank (`my_device`) on its local buffers
// through the group of (team, stream_key), and returns the work handle the
// matching Wait completes with waitWork(). Returns nullptr when my_device is
// not in the team (it takes no part). `input` / `output` are this rank's
// tensors; the output must stay alive until the work is waited on.
//
// "Position" below is a device's index in the communication's team (the
// team's order is the collective's rank order), r is the local extent of
// axis 0 and k the number of contributors. A gathered buffer holds the
// contributions in team order along axis 0: [k * r, ...], or [k, ...] when
// each contribution is one row, i.e. any shape whose axis 0 splits into k
// equal blocks of the contribution's size.
//
//   Gather(root)       every member with a defined input sends it ([r, ...]);
//                      the root receives [k * r, ...] in `output`. The root
//                      contributes iff its input is defined (a root outside
//                      the sending mesh passes an undefined input).
//   Allgather          input [r, ...] on every member; output [n * r, ...].
//   Scatter(root)      the root's input [k * r, ...] holds one block per
//                      receiver in team order (the root receives iff its
//                      output is defined); each receiver's output [r, ...].
//   Reduce(root)       every member's input has the output's shape; the root
//                      gets the reduction in `output`. A root whose input is
//                      undefined contributes nothing.
//   Allreduce          input and output of one shape (may be one tensor).
//   ReduceScatter      input of extent n * c along the scattered axis; the
//                      member at position p gets block p (extent c along that
//                      axis) of the reduction over the team, in an output of
//                      the block's shape (or any shape with its element count).
//   Allgather and ReduceScatter also take pieces of unequal rows, laid out
//   as torch.chunk cuts the whole buffer's axis (0, or the scattered axis)
//   over the team: the member at position p holds rowChunk(rows, k, p)
//   (multidevice/row_chunks.h), ceilDiv(rows, k) each, the last fewer or
//   none; each member's piece must be exactly that. The allgather pads every
//   piece to ceilDiv(rows, k) rows in a scratch buffer for Gloo's equal
//   blocks, the reduce-scatter sends the pieces by an all-to-all with split
//   sizes; neither buffer the caller gives is padded.
//   Broadcast(root)    the root's input; the others' output of its shape. A
//                      root's defined output receives a copy as well.
//   SendRecv(root)     the root (sender) sends its input to the other member's
//                      output; with a team of one it is a local copy.
//
// Reductions use the communication's reduce op. Non-contiguous buffers are
// staged through contiguous ones. Every c10d call carries the communicator's
// timeout. Throws hostir::Error naming the communication for a buffer that
// does not fit these layouts.
c10::intrusive_ptr<c10d::Work> postCollective(const Communication& communication, int64_t my_device,
                                              const at::Tensor& input, const at::Tensor& output,
                                              Communicator& communicator, int64_t stream_key = 0);

// The same for a collective described by plain parameters; `name` is how
// errors refer to it (e.g. "Communication 3").
c10::intrusive_ptr<c10d::Work> postCollective(const CommunicationParams& params,
                                              const std::string& name, int64_t my_device,
                                              const at::Tensor& input, const at::Tensor& output,
                                              Communicator& communicator, int64_t stream_key = 0);

// The bytes this process's posted collectives handed the backend to send
// to other members, since it started: an allgather (n - 1) times its input,
// a reduce-scatter its input but its own block, an allreduce 2 (n - 1) / n
// times its buffer (a ring's), a gather's or reduce's member its input, a
// scatter's root its input but its own piece, a broadcast's root its buffer
// once per other member, a send its buffer. Collectives that move nothing
// (empty, a team of one, a member outside the team) count none. For a
// program's communication set against a link's rate (`hostir sp-mlp
// --train --baselines`: the backward's bytes).
int64_t collectiveBytesSent();

// A whole-buffer transfer with one peer (P2PCommunication): Send reads
// `buffer`, Recv fills it. Uses the group of the pair {my_device, peer}.
c10::intrusive_ptr<c10d::Work> postP2P(P2PCommunicationType type, int64_t peer, int64_t my_device,
                                       const at::Tensor& buffer, Communicator& communicator,
                                       int64_t stream_key = 0);

// The local stand-in of one collective, for a run of a program's compute
// alone (HostIrRunOptions::local_collectives): what the collective leaves in
// this rank's `output`, made from this rank's data only, nothing sent or
// received, on the calling thread. An allgather or gather copies the input
// into every block of the output (every member's data is this rank's); a
// reduce-scatter reduces this rank's own blocks into its output (the
// reduction hostir runs after the transfer); an allreduce, reduce, broadcast
// or send/receive copies the input to the output where this rank has both;
// a scatter copies this rank's block of the root's input; an output with
// nothing to copy from is zeroed (defined values: no NaN or denormal
// slows the compute that reads it). Nothing for a device outside the team.
void localStandIn(const CommunicationParams& params, int64_t my_device, const at::Tensor& input,
                  const at::Tensor& output);
void localStandIn(const Communication& communication, int64_t my_device, const at::Tensor& input,
                  const at::Tensor& output);

// Completes `work` (nullptr: nothing to do) within `timeout`. A timeout or a
// failure (e.g. a peer that exited) becomes a hostir::Error that starts with
// `what`, the collective waited for.
// Either also marks the process as having seen a collective fail
// (collectiveFailed()).
void waitWork(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout,
              const std::string& what);

// Whether a collective of this process has failed or timed out (a peer may
// be gone): Communicator::shutdown then does not wait for every rank to
// arrive, so a survivor exits about one communication timeout after a peer
// died, not two.
bool collectiveFailed();

// How errors and waits name a posted communication: "Allgather
// (Communication 3) over team (0 1)".
std::string describeCollective(const CommunicationParams& params, const std::string& name);

}  // namespace hostir
