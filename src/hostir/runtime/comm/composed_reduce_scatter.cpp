#include "hostir/runtime/comm/composed_reduce_scatter.h"

#include <ATen/MemoryOverlap.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "hostir/multidevice/row_chunks.h"
#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collective_works.h"
#include "hostir/runtime/comm/communicator.h"

namespace hostir {
namespace {

// Which pieces go where, by group rank (the team sorted: Communicator::rankInTeam).
struct PiecePlan {
  std::vector<at::Tensor> pieces;  // pieces[g]: the input's rows for the member of group rank g
  std::vector<int64_t> numels;     // their element counts
  int64_t me = 0;                  // this member's group rank
  bool input_is_the_pieces = false;
  bool own_piece_stays = true;
};

PiecePlan planPieces(const TeamExchange& exchange, const at::Tensor& input, int64_t axis) {
  const auto k = static_cast<int64_t>(exchange.team.size());
  const int64_t extent = input.size(axis);
  PiecePlan plan;
  plan.pieces.resize(static_cast<size_t>(k));
  plan.numels.resize(static_cast<size_t>(k));
  for (int64_t position = 0; position < k; ++position) {
    const auto g = static_cast<size_t>(
        Communicator::rankInTeam(exchange.team, exchange.team[static_cast<size_t>(position)]));
    const RowChunk chunk = rowChunk(extent, k, position);
    plan.pieces[g] = input.narrow(axis, chunk.start, chunk.rows);
    plan.numels[g] = plan.pieces[g].numel();
  }
  plan.me = Communicator::rankInTeam(exchange.team,
                                     exchange.team[static_cast<size_t>(exchange.position)]);
  plan.input_is_the_pieces = axis == 0 && input.is_contiguous() &&
                             std::is_sorted(exchange.team.begin(), exchange.team.end());
  // The own piece stays out of the exchange unless it sits between others
  // in an input sent as it is (a copy of the others would cost more than
  // the piece received). Before, every piece travelled, into a scratch the
  // size of the input: 8 chunks' reduce-scatters in flight held 16 MiB of
  // it in the MLP training step.
  plan.own_piece_stays = !plan.input_is_the_pieces || plan.me == 0 || plan.me == k - 1;
  return plan;
}

// Whether group rank g's piece travels (to g).
bool travels(const PiecePlan& plan, int64_t g) {
  return g != plan.me || !plan.own_piece_stays;
}

// The travelling pieces, flat and in group-rank order: the input itself
// (or the part of it past or before the own piece) when it is the pieces,
// else packed into a scratch.
at::Tensor sendBuffer(const PiecePlan& plan, const at::Tensor& input) {
  const auto k = static_cast<int64_t>(plan.pieces.size());
  if (plan.input_is_the_pieces) {
    const at::Tensor all = input.view(-1);
    if (!plan.own_piece_stays) {
      return all;
    }
    const int64_t own = plan.numels[static_cast<size_t>(plan.me)];
    return plan.me == 0 ? all.narrow(0, own, all.numel() - own)
                        : all.narrow(0, 0, all.numel() - own);
  }
  int64_t total = 0;
  for (int64_t g = 0; g < k; ++g) {
    total += travels(plan, g) ? plan.numels[static_cast<size_t>(g)] : 0;
  }
  at::Tensor packed = collectiveScratch({total}, input.options());
  int64_t offset = 0;
  for (int64_t g = 0; g < k; ++g) {
    if (travels(plan, g)) {
      const at::Tensor& piece = plan.pieces[static_cast<size_t>(g)];
      packed.narrow(0, offset, piece.numel()).view(piece.sizes()).copy_(piece);
      offset += piece.numel();
    }
  }
  return packed;
}

// Stripe `stripe` of the flat send buffer: its part of every travelling
// piece, one after another (the send buffer itself when unstriped).
at::Tensor stripeToSend(const PiecePlan& plan, const at::Tensor& send, int64_t stripe,
                        int64_t stripes, std::vector<int64_t>& send_counts) {
  const auto k = static_cast<int64_t>(plan.pieces.size());
  std::vector<at::Tensor> parts;
  int64_t offset = 0, total = 0;
  for (int64_t g = 0; g < k; ++g) {
    send_counts[static_cast<size_t>(g)] = 0;
    if (!travels(plan, g)) {
      continue;
    }
    const int64_t numel = plan.numels[static_cast<size_t>(g)];
    const auto [begin, end] = pieceBounds(numel, stripe, stripes);
    parts.push_back(send.narrow(0, offset + begin, end - begin));
    send_counts[static_cast<size_t>(g)] = end - begin;
    total += end - begin;
    offset += numel;
  }
  if (stripes == 1) {
    return send;
  }
  at::Tensor gathered = collectiveScratch({total}, send.options());
  return at::cat_out(gathered, parts);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> postComposedReduceScatter(const TeamExchange& exchange,
                                                         const at::Tensor& input, int64_t axis,
                                                         ReduceOp op, const at::Tensor& output) {
  const PiecePlan plan = planPieces(exchange, input, axis);
  const auto k = static_cast<int64_t>(plan.pieces.size());
  WritableBuffer out(output);
  // An output over the input (a reduce-scatter in place) is written only
  // in the epilogue, from a scratch, and the own piece is read from a copy:
  // the sum overwrites it.
  const bool output_overlaps_input =
      at::get_overlap_status(out.buffer, input) != at::MemOverlapStatus::No;
  const at::Tensor own_rows = plan.pieces[static_cast<size_t>(plan.me)];
  const at::Tensor own = output_overlaps_input && plan.own_piece_stays
                             ? own_rows.reshape(-1).clone()
                             : own_rows.reshape(-1);
  if (k == 1) {  // a team of one: nothing to exchange
    out.buffer.view(-1).copy_(own);
    out.copyBack();
    return {};
  }
  const at::Tensor send = sendBuffer(plan, input);
  const int64_t senders = plan.own_piece_stays ? k - 1 : k;
  const bool receive_into_output = senders == 1 && !output_overlaps_input;
  c10d::AllToAllOptions options;
  options.timeout = exchange.timeout;
  // Stripe s moves part s of every piece and reduces it into the same part
  // of the output. Counts are given on every member (none to or from this
  // member when its piece stays), so that all take Gloo's all-to-all with
  // counts.
  const at::Tensor out_flat = out.buffer.view(-1);
  const auto stripes = static_cast<int64_t>(exchange.stripes.size());
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  std::vector<at::Tensor> sent, received, destinations;
  for (int64_t stripe = 0; stripe < stripes; ++stripe) {
    std::vector<int64_t> send_counts(static_cast<size_t>(k));
    sent.push_back(stripeToSend(plan, send, stripe, stripes, send_counts));
    const auto [begin, end] = pieceBounds(out_flat.numel(), stripe, stripes);
    std::vector<int64_t> receive_counts(static_cast<size_t>(k), end - begin);
    if (plan.own_piece_stays) {
      receive_counts[static_cast<size_t>(plan.me)] = 0;
    }
    destinations.push_back(out_flat.slice(0, begin, end));
    received.push_back(receive_into_output
                           ? destinations.back()
                           : collectiveScratch({senders * (end - begin)}, input.options()));
    // c10d takes the counts by reference and moves them away: these are
    // this stripe's own.
    works.push_back(exchange.stripes[static_cast<size_t>(stripe)]->alltoall_base(
        received.back(), sent.back(), receive_counts, send_counts, options));
  }
  c10::intrusive_ptr<c10d::Work> work =
      stripes == 1
          ? works.front()
          : c10::intrusive_ptr<c10d::Work>(c10::make_intrusive<StripedWork>(std::move(works)));
  const bool own_piece_stays = plan.own_piece_stays;
  return c10::make_intrusive<WorkWithEpilogue>(
      std::move(work),
      [received, destinations, op, sent, out, own, own_piece_stays, receive_into_output, senders] {
        int64_t offset = 0;
        for (size_t i = 0; i < received.size(); ++i) {
          const int64_t numel = destinations[i].numel();
          if (numel == 0) {
            continue;
          }
          if (!receive_into_output) {
            reduceAlongFirstAxisInto(received[i].view({senders, numel}), op, destinations[i]);
          }
          if (own_piece_stays) {
            combineInto(destinations[i], own.narrow(0, offset, numel), op);
          }
          offset += numel;
        }
        out.copyBack();
      });
}

}  // namespace hostir
