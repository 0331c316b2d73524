#include "hostir/runtime/comm/block_communication.h"

#include <algorithm>

#include "hostir/ir/error.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/runtime/comm/collectives.h"

namespace hostir {

BlockCommunication::BlockCommunication(Communicator& communicator, const at::Tensor& local,
                                       int64_t tokens, int blocks, int64_t stream_key)
    : communicator_(communicator),
      local_(local.detach().contiguous()),
      blocks_(blocks),
      stream_key_(stream_key),
      world_(communicator.worldTeam()) {
  const auto devices = static_cast<int64_t>(world_.size());
  HOSTIR_CHECK(local_.dim() == 2 && local_.size(0) * devices == tokens,
               "communication only: this rank's rows of shape ", local_.sizes(), " on ", devices,
               " ranks do not make ", tokens, " tokens; give a [tokens / ranks, hidden] shard");
  HOSTIR_CHECK(blocks >= 1, "communication only: ", blocks, " blocks; give at least one");
  scattered_ = at::empty_like(local_);
}

const BlockCommunication::Buffers& BlockCommunication::buffersFor(int64_t chunks) {
  HOSTIR_CHECK(chunks >= 1, "communication only: ", chunks, " chunks; give at least one");
  auto found = by_chunks_.find(chunks);
  if (found != by_chunks_.end()) {
    return found->second;
  }
  Buffers buffers;
  // As the pipelined program splits them: ceilDiv(rows, chunks) rows per
  // chunk, the last ones fewer or none (an empty chunk moves nothing).
  const int64_t local_rows = local_.size(0);
  const auto devices = static_cast<int64_t>(world_.size());
  for (int64_t j = 0; j < chunks; ++j) {
    const auto [start, rows] = rowChunk(local_rows, chunks, j);
    buffers.local.push_back(local_.narrow(0, start, rows));
    buffers.gathered.push_back(at::empty({devices * rows, local_.size(1)}, local_.options()));
    buffers.partial.push_back(at::full({devices * rows, local_.size(1)},
                                       static_cast<double>(communicator_.deviceId() + 1),
                                       local_.options()));
    buffers.scattered.push_back(scattered_.narrow(0, start, rows));
  }
  return by_chunks_.emplace(chunks, std::move(buffers)).first->second;
}

void BlockCommunication::run(int64_t chunks) {
  const Buffers& b = buffersFor(chunks);
  const int64_t rank = communicator_.deviceId();
  const auto timeout = communicator_.timeout();
  const CommunicationParams allgather{.type = CommunicationType::Allgather, .team = world_};
  const CommunicationParams reduce_scatter{.type = CommunicationType::ReduceScatter,
                                           .team = world_,
                                           .reduce_op = ReduceOp::Sum,
                                           .scattered_axis = 0};
  for (int block = 0; block < blocks_; ++block) {
    std::vector<c10::intrusive_ptr<c10d::Work>> gathers;
    for (int64_t j = 0; j < chunks; ++j) {
      gathers.push_back(postCollective(allgather, "comm-only allgather", rank, b.local[j],
                                       b.gathered[j], communicator_, stream_key_));
    }
    std::vector<c10::intrusive_ptr<c10d::Work>> scatters;
    for (int64_t j = 0; j < chunks; ++j) {
      waitWork(gathers[j], timeout, "comm-only allgather");
      scatters.push_back(postCollective(reduce_scatter, "comm-only reduce-scatter", rank,
                                        b.partial[j], b.scattered[j], communicator_, stream_key_));
    }
    for (const auto& work : scatters) {
      waitWork(work, timeout, "comm-only reduce-scatter");
    }
  }
}

}  // namespace hostir
