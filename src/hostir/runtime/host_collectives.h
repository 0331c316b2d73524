#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <ATen/ATen.h>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/runtime/collective_channels.h"

namespace hostir {

class Communication;
class Communicator;
class Expr;
class P2PCommunication;

// The communication nodes of a host program, as this rank runs them: a
// Communication or a P2PCommunication is posted on its team's channel once
// the stream that produces its input reaches it, and a Wait makes only the
// stream that needs the data wait (CollectiveChannels: the channels, the
// Post/Wait pairing). With local_collectives, every one is replaced by its
// local stand-in (comm/collectives.h): nothing goes over the link.
class HostCollectives {
 public:
  // `pool` is only kept (its owner may pass a member not constructed yet);
  // `communicator` may be null for a program that does not communicate.
  HostCollectives(runtime::StreamPool& pool, Communicator* communicator, int64_t my_device)
      : channels_(pool), communicator_(communicator), my_device_(my_device) {}

  // Whether `program` communicates on this rank (a communicator was given
  // and the program posts a collective).
  bool communicates(const HostIrContainer& program) const;
  // The communication timeout (the communicator's); zero without one.
  std::chrono::milliseconds timeout() const;

  // A run starts with nothing posted; HostIrRunOptions::local_collectives.
  void startRun(bool local_collectives);

  // Posted once `current` reaches this point; `in`/`out` (`buffer`) are
  // undefined where this rank holds none.
  void post(const Communication* expr, const std::shared_ptr<const std::string>& label,
            const at::Tensor& in, const at::Tensor& out, runtime::Stream& current,
            runtime::WaitTimeout wait_timeout);
  void post(const P2PCommunication* expr, const std::shared_ptr<const std::string>& label,
            const at::Tensor& buffer, int64_t peer, runtime::Stream& current,
            runtime::WaitTimeout wait_timeout);
  // Wait: `current` waits for the post of `communication` (a Communication,
  // a P2PCommunication or an EndCoalescing) to be posted, then for its data.
  void wait(const Expr* wait, const Expr* communication,
            const std::shared_ptr<const std::string>& label, runtime::Stream& current,
            runtime::WaitTimeout wait_timeout);
  void startCoalescing(const std::string& label) {
    channels_.startCoalescing(label);
  }
  void endCoalescing(const Expr* end, const std::string& label) {
    channels_.endCoalescing(end, label);
  }

  // Throws hostir::Error naming `expr` when no communicator was given.
  Communicator& communicator(const Expr* expr);

 private:
  CollectiveChannels channels_;
  Communicator* communicator_;
  int64_t my_device_;
  bool local_collectives_ = false;
};

}  // namespace hostir
