#include "hostir/runtime/comm/even_reduce_scatter.h"

#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collective_works.h"
#include "hostir/runtime/comm/communicator.h"

namespace hostir {
namespace {

// Which blocks go where, by group rank (the team sorted: Communicator::rankInTeam).
struct BlockPlan {
  std::vector<at::Tensor> rows;  // rows[g]: the block for the member of group rank g
  int64_t me = 0;                // this member's group rank
  bool input_is_the_rows = false;
  bool own_block_stays = true;
  int64_t sent_blocks = 0;
};

BlockPlan planBlocks(const TeamExchange& exchange, const at::Tensor& input, int64_t axis) {
  const auto n = static_cast<int64_t>(exchange.team.size());
  const int64_t extent = input.size(axis) / n;
  BlockPlan plan;
  plan.rows.resize(static_cast<size_t>(n));
  for (int64_t position = 0; position < n; ++position) {
    const int64_t device = exchange.team[static_cast<size_t>(position)];
    plan.rows[static_cast<size_t>(Communicator::rankInTeam(exchange.team, device))] =
        input.narrow(axis, position * extent, extent);
  }
  plan.me = Communicator::rankInTeam(exchange.team,
                                     exchange.team[static_cast<size_t>(exchange.position)]);
  plan.input_is_the_rows = axis == 0 && input.is_contiguous() &&
                           std::is_sorted(exchange.team.begin(), exchange.team.end());
  // The own block stays out of the exchange unless it sits between others
  // in an input sent as it is (a copy of the others would cost more than
  // the block received). Before, every block travelled, into a scratch the
  // size of the input: 8 chunks' reduce-scatters in flight held 16 MiB of
  // it in the MLP training step.
  plan.own_block_stays = !plan.input_is_the_rows || plan.me == 0 || plan.me == n - 1;
  plan.sent_blocks = plan.own_block_stays ? n - 1 : n;
  return plan;
}

// [sent_blocks, block elements]: the blocks to send, in group-rank order.
at::Tensor sendBuffer(const BlockPlan& plan, const at::Tensor& input) {
  const auto n = static_cast<int64_t>(plan.rows.size());
  if (plan.input_is_the_rows) {
    const at::Tensor all = input.view({n, -1});
    return plan.own_block_stays ? all.narrow(0, plan.me == 0 ? 1 : 0, plan.sent_blocks) : all;
  }
  std::vector<at::Tensor> peers;
  for (int64_t g = 0; g < n; ++g) {
    if (g != plan.me) {
      peers.push_back(plan.rows[static_cast<size_t>(g)]);
    }
  }
  std::vector<int64_t> stacked = plan.rows[0].sizes().vec();
  stacked.insert(stacked.begin(), plan.sent_blocks);
  at::Tensor stacked_peers = collectiveScratch(stacked, input.options());
  return at::stack_out(stacked_peers, peers).view({plan.sent_blocks, -1});
}

}  // namespace

c10::intrusive_ptr<c10d::Work> postEvenReduceScatter(const TeamExchange& exchange,
                                                     const at::Tensor& input, int64_t axis,
                                                     ReduceOp op, const at::Tensor& output) {
  const BlockPlan plan = planBlocks(exchange, input, axis);
  WritableBuffer out(output);
  // An output over the input (a reduce-scatter in place) is written only
  // in the epilogue, from a scratch, and the own block is read from a copy:
  // the sum overwrites it.
  const bool output_overlaps_input =
      at::get_overlap_status(out.buffer, input) != at::MemOverlapStatus::No;
  const at::Tensor own_rows = plan.rows[static_cast<size_t>(plan.me)];
  const at::Tensor own = output_overlaps_input && plan.own_block_stays
                             ? own_rows.reshape(-1).clone()
                             : own_rows.reshape(-1);
  if (plan.sent_blocks == 0) {  // a team of one: nothing to exchange
    out.buffer.view(-1).copy_(own);
    out.copyBack();
    return {};
  }
  const at::Tensor send = sendBuffer(plan, input);
  // Blocks along axis 0 of the send and receive buffers, per group rank:
  // none to or from this member when its block stays. Given on every
  // member, so that all take Gloo's all-to-all with counts.
  std::vector<int64_t> split(exchange.team.size(), 1);
  if (plan.own_block_stays) {
    split[static_cast<size_t>(plan.me)] = 0;
  }
  const bool receive_into_output =
      plan.own_block_stays && plan.sent_blocks == 1 && !output_overlaps_input;
  c10d::AllToAllOptions options;
  options.timeout = exchange.timeout;
  // Stripe i moves columns [b_i, e_i) of every block (a contiguous copy
  // each when there are several blocks: an all-to-all reads whole rows)
  // and reduces them into elements [b_i, e_i) of the output.
  const at::Tensor out_flat = out.buffer.view(-1);
  const auto stripes = static_cast<int64_t>(exchange.stripes.size());
  std::vector<c10::intrusive_ptr<c10d::Work>> pieces;
  std::vector<at::Tensor> sent, received, destinations;
  for (int64_t stripe = 0; stripe < stripes; ++stripe) {
    auto [begin, end] = pieceBounds(send.size(1), stripe, stripes);
    sent.push_back(send.slice(1, begin, end).contiguous());
    destinations.push_back(out_flat.slice(0, begin, end));
    received.push_back(receive_into_output
                           ? destinations.back().view({1, end - begin})
                           : collectiveScratch(sent.back().sizes(), sent.back().options()));
    // Copies: c10d takes the counts by reference and moves them away.
    std::vector<int64_t> receive_counts = split, send_counts = split;
    pieces.push_back(exchange.stripes[static_cast<size_t>(stripe)]->alltoall_base(
        received.back(), sent.back(), receive_counts, send_counts, options));
  }
  c10::intrusive_ptr<c10d::Work> work =
      stripes == 1
          ? pieces.front()
          : c10::intrusive_ptr<c10d::Work>(c10::make_intrusive<StripedWork>(std::move(pieces)));
  const bool own_block_stays = plan.own_block_stays;
  return c10::make_intrusive<WorkWithEpilogue>(
      std::move(work),
      [received, destinations, op, sent, out, own, own_block_stays, receive_into_output] {
        int64_t offset = 0;
        for (size_t i = 0; i < received.size(); ++i) {
          if (!receive_into_output) {
            reduceAlongFirstAxisInto(received[i], op, destinations[i]);
          }
          const int64_t numel = destinations[i].numel();
          if (own_block_stays) {
            combineInto(destinations[i], own.narrow(0, offset, numel), op);
          }
          offset += numel;
        }
        out.copyBack();
      });
}

}  // namespace hostir
