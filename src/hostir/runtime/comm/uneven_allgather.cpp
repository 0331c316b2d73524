#include "hostir/runtime/comm/uneven_allgather.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "hostir/multidevice/row_chunks.h"
#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collective_works.h"

namespace hostir {
namespace {

// The position of each group rank: group ranks follow the sorted team
// (Communicator::rankInTeam).
std::vector<int64_t> positionsByGroupRank(const std::vector<int64_t>& team) {
  std::vector<int64_t> positions(team.size());
  std::iota(positions.begin(), positions.end(), 0);
  std::sort(positions.begin(), positions.end(),
            [&team](int64_t a, int64_t b) { return team[a] < team[b]; });
  return positions;
}

// Elements [offset, offset + numel) of a flat buffer.
struct Region {
  int64_t offset = 0;
  int64_t numel = 0;
};

// Where an all-to-all receives regions of `target` (flat, contiguous; one
// region per group rank, in group-rank order): `target` itself when the
// regions follow each other in it, otherwise a scratch that land() copies
// into them.
struct Landing {
  at::Tensor receive;
  at::Tensor target;
  std::vector<Region> regions;  // set when staged

  Landing(const at::Tensor& flat_target, const std::vector<Region>& wanted) {
    int64_t begin = 0, end = -1, total = 0;
    bool direct = true;
    for (const Region& region : wanted) {
      total += region.numel;
      if (region.numel == 0) {
        continue;
      }
      if (end < 0) {
        begin = region.offset;
      } else if (region.offset != end) {
        direct = false;
      }
      end = region.offset + region.numel;
    }
    if (direct) {
      receive = flat_target.narrow(0, begin, total);
      return;
    }
    receive = collectiveScratch({total}, flat_target.options());
    target = flat_target;
    regions = wanted;
  }
  void land() const {
    if (regions.empty()) {
      return;
    }
    int64_t offset = 0;
    for (const Region& region : regions) {
      target.narrow(0, region.offset, region.numel).copy_(receive.narrow(0, offset, region.numel));
      offset += region.numel;
    }
  }
};

c10::intrusive_ptr<c10d::Work> allOf(std::vector<c10::intrusive_ptr<c10d::Work>> works) {
  if (works.size() == 1) {
    return works.front();
  }
  return c10::make_intrusive<StripedWork>(std::move(works));
}

}  // namespace

c10::intrusive_ptr<c10d::Work> postUnevenAllgather(const TeamExchange& exchange,
                                                   const at::Tensor& piece,
                                                   const at::Tensor& whole) {
  const auto k = static_cast<int64_t>(exchange.team.size());
  const int64_t extent = whole.size(0);
  const int64_t inner = whole.numel() / extent;  // a posted whole is not empty
  WritableBuffer out(whole);
  const at::Tensor flat = out.buffer.view(-1);
  const RowChunk mine = rowChunk(extent, k, exchange.position);
  const at::Tensor mine_flat = piece.contiguous().view(-1);
  flat.narrow(0, mine.start * inner, mine.rows * inner).copy_(mine_flat);
  const std::vector<int64_t> positions = positionsByGroupRank(exchange.team);
  const auto stripes = static_cast<int64_t>(exchange.stripes.size());
  c10d::AllToAllOptions options;
  options.timeout = exchange.timeout;
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  std::vector<Landing> landings;
  std::vector<at::Tensor> sent;
  for (int64_t stripe = 0; stripe < stripes; ++stripe) {
    const auto [begin, end] = pieceBounds(mine_flat.numel(), stripe, stripes);
    const at::Tensor part = mine_flat.slice(0, begin, end);
    at::Tensor send = k == 2 ? part : part.unsqueeze(0).expand({k - 1, end - begin}).contiguous();
    send = send.view(-1);
    std::vector<int64_t> send_sizes(k, 0), receive_sizes(k, 0);
    std::vector<Region> regions(k);
    for (int64_t rank = 0; rank < k; ++rank) {
      const int64_t position = positions[rank];
      if (position == exchange.position) {
        continue;  // copied above
      }
      const RowChunk theirs = rowChunk(extent, k, position);
      const auto [their_begin, their_end] = pieceBounds(theirs.rows * inner, stripe, stripes);
      send_sizes[rank] = end - begin;
      receive_sizes[rank] = their_end - their_begin;
      regions[rank] = {theirs.start * inner + their_begin, their_end - their_begin};
    }
    landings.emplace_back(flat, regions);
    works.push_back(exchange.stripes[stripe]->alltoall_base(landings.back().receive, send,
                                                            receive_sizes, send_sizes, options));
    sent.push_back(send);
  }
  return c10::make_intrusive<WorkWithEpilogue>(allOf(std::move(works)), [landings, sent, out] {
    for (const Landing& landing : landings) {
      landing.land();
    }
    out.copyBack();
  });
}

}  // namespace hostir
