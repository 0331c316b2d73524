#include "hostir/runtime/host_collectives.h"

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/deferred_memory.h"

namespace hostir {

bool HostCollectives::communicates(const HostIrContainer& program) const {
  return communicator_ != nullptr && postsCommunication(program.topLevel());
}

std::chrono::milliseconds HostCollectives::timeout() const {
  return communicator_ != nullptr ? communicator_->timeout() : std::chrono::milliseconds(0);
}

void HostCollectives::startRun(bool local_collectives) {
  channels_.startRun();
  local_collectives_ = local_collectives;
}

Communicator& HostCollectives::communicator(const Expr* expr) {
  HOSTIR_CHECK(communicator_ != nullptr, "the host program posts\n", expr->toString(1),
               "but the evaluator has no Communicator; pass one in HostIrEvaluatorParams");
  return *communicator_;
}

void HostCollectives::post(const Communication* expr,
                           const std::shared_ptr<const std::string>& label, const at::Tensor& in,
                           const at::Tensor& out, runtime::Stream& current,
                           runtime::WaitTimeout wait_timeout) {
  Communicator& comm = communicator(expr);
  const int64_t my_device = my_device_;
  if (local_collectives_) {
    channels_.post(expr, label, expr->team(), current, wait_timeout, [expr, in, out, my_device] {
      materializeWritten({in, out});  // some collectives write their input
      localStandIn(*expr, my_device, in, out);
      return c10::intrusive_ptr<c10d::Work>();
    });
    return;
  }
  channels_.post(expr, label, expr->team(), current, wait_timeout,
                 [expr, &comm, in, out, my_device] {
                   materializeWritten({in, out});
                   return postCollective(*expr, my_device, in, out, comm);
                 });
}

void HostCollectives::post(const P2PCommunication* expr,
                           const std::shared_ptr<const std::string>& label,
                           const at::Tensor& buffer, int64_t peer, runtime::Stream& current,
                           runtime::WaitTimeout wait_timeout) {
  Communicator& comm = communicator(expr);
  const int64_t my_device = my_device_;
  const auto type = expr->type();
  if (local_collectives_) {
    // The stand-in of a receive: defined values, nothing received.
    channels_.post(expr, label, {my_device, peer}, current, wait_timeout, [type, buffer] {
      materialize(buffer, /*written=*/true);
      if (type == P2PCommunicationType::Recv) {
        buffer.zero_();
      }
      return c10::intrusive_ptr<c10d::Work>();
    });
    return;
  }
  channels_.post(expr, label, {my_device, peer}, current, wait_timeout,
                 [type, peer, buffer, &comm, my_device] {
                   materialize(buffer, type == P2PCommunicationType::Recv);
                   return postP2P(type, peer, my_device, buffer, comm);
                 });
}

void HostCollectives::wait(const Expr* wait, const Expr* communication,
                           const std::shared_ptr<const std::string>& label,
                           runtime::Stream& current, runtime::WaitTimeout wait_timeout) {
  Communicator& comm = communicator(wait);
  channels_.wait(communication, label, current, wait_timeout, comm.timeout());
}

}  // namespace hostir
