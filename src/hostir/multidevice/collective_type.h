#pragma once

#include <string>

namespace hostir {

// The collectives hostir lowers resharding to; the host IR's Communication
// node uses the same enum (CommunicationType).
enum class CollectiveType {
  Gather,
  Allgather,
  Scatter,
  Reduce,
  Allreduce,
  ReduceScatter,
  Broadcast,
  SendRecv
};

std::string toString(CollectiveType type);

}  // namespace hostir
