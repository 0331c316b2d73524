#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

namespace hostir {

// What a collective composed from all-to-alls (the reduce-scatters, the
// uneven allgather: Gloo 1.13 has neither) needs of its team.
struct TeamExchange {
  std::vector<int64_t> team;  // the members, in position order
  int64_t position = 0;       // this member's
  // One group over the team per stripe, stripe 0 first: stripe s moves the
  // s-th of near-equal parts (pieceBounds) of every piece.
  std::vector<c10d::ProcessGroup*> stripes;
  std::chrono::milliseconds timeout{0};
};

}  // namespace hostir
