#include "hostir/runtime/comm/collectives.h"

// A send or a receive between two devices (P2PCommunication), posted on
// the pair's process group.

#include <string>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collective_works.h"

namespace hostir {

c10::intrusive_ptr<c10d::Work> postP2P(P2PCommunicationType type, int64_t peer, int64_t my_device,
                                       const at::Tensor& buffer, Communicator& communicator,
                                       int64_t stream_key) {
  const std::string what =
      (type == P2PCommunicationType::Send ? "send to device " : "receive from device ") +
      std::to_string(peer) + " on device " + std::to_string(my_device);
  HOSTIR_CHECK(buffer.defined(), what, ": the buffer is undefined; pass the local buffer");
  HOSTIR_CHECK(peer != my_device, what, ": a device cannot send to itself; use a copy");
  std::vector<int64_t> pair{my_device, peer};
  c10d::ProcessGroup& group = communicator.processGroup(pair, stream_key);
  const int peer_rank = static_cast<int>(Communicator::rankInTeam(pair, peer));
  constexpr int kTag = 0;
  try {
    if (type == P2PCommunicationType::Send) {
      std::vector<at::Tensor> tensors{buffer.contiguous()};
      return group.send(tensors, peer_rank, kTag);
    }
    WritableBuffer out(buffer);
    std::vector<at::Tensor> tensors{out.buffer};
    auto work = group.recv(tensors, peer_rank, kTag);
    if (!out.staged()) {
      return work;
    }
    return c10::make_intrusive<WorkWithEpilogue>(std::move(work), [out] { out.copyBack(); });
  } catch (const std::exception& error) {
    HOSTIR_THROW("posting the ", what, " failed: ", c10ErrorMessage(error));
  }
}

}  // namespace hostir
