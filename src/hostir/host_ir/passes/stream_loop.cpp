#include "hostir/host_ir/passes/stream_loop.h"

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/stream.h"
#include "hostir/host_ir/stream_ops.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/scalar.h"

namespace hostir {

Stream* makeWorkerStream(HostIrContainer& container, Val* index) {
  auto* streams =
      IrBuilder::createInContainer<Scalar>(&container, kNumberOfStreams, DataType::Int64);
  return IrBuilder::createInContainer<Stream>(&container, mod(index, streams));
}

namespace {

ForLoop* makeStreamSyncLoop(HostIrContainer& container, Val* iterations, Stream* caller) {
  auto* index = IrBuilder::createInContainer<Scalar>(&container, kStreamIdx, DataType::Int64);
  auto* streams =
      IrBuilder::createInContainer<Scalar>(&container, kNumberOfStreams, DataType::Int64);
  auto* loop = IrBuilder::createInContainer<ForLoop>(
      &container, index, IrBuilder::createInContainer<Scalar>(&container, int64_t{0}),
      minimum(iterations, streams), IrBuilder::createInContainer<Scalar>(&container, int64_t{1}));
  loop->body().push_back(IrBuilder::createInContainer<SetCurrentStream>(
      &container, makeWorkerStream(container, index)));
  loop->body().push_back(IrBuilder::createInContainer<Synchronize>(&container, caller));
  return loop;
}

}  // namespace

void appendWorkerSync(HostIrContainer& container, Val* iterations, Stream* caller,
                      std::vector<Expr*>& emitted) {
  emitted.push_back(makeStreamSyncLoop(container, iterations, caller));
  emitted.push_back(IrBuilder::createInContainer<SetCurrentStream>(&container, caller));
}

ForLoop* makeStreamIndexLoop(HostIrContainer& container, IterDomain* loop_id) {
  auto* index = IrBuilder::createInContainer<Scalar>(&container, kStreamIdx, DataType::Int64);
  return IrBuilder::createInContainer<ForLoop>(&container, index, loop_id);
}

ForLoop* makeWaitsAfterLoop(HostIrContainer& container, IterDomain* loop_id,
                            const std::vector<Expr*>& communications) {
  ForLoop* waits = makeStreamIndexLoop(container, loop_id);
  for (Expr* communication : communications) {
    waits->body().push_back(IrBuilder::createInContainer<Wait>(&container, communication));
  }
  return waits;
}

std::pair<Val*, Val*> chunkBounds(Val* index, Val* chunk_size, Val* extent) {
  Val* start = minimum(mul(index, chunk_size), extent);
  Val* stop = minimum(add(start, chunk_size), extent);
  return {start, stop};
}

StreamMainLoop::StreamMainLoop(HostIrContainer& container, IterDomain* loop_id, Stream* caller)
    : container_(container), caller_(caller) {
  index_ = IrBuilder::createInContainer<Scalar>(&container, kStreamIdx, DataType::Int64);
  worker_ = makeWorkerStream(container, index_);
  loop_ = IrBuilder::createInContainer<ForLoop>(&container, index_, loop_id);
  loop_->body().push_back(IrBuilder::createInContainer<SetCurrentStream>(&container, worker_));
}

ForLoop* StreamMainLoop::finish() {
  loop_->body().push_back(IrBuilder::createInContainer<SetCurrentStream>(&container_, caller_));
  loop_->body().push_back(IrBuilder::createInContainer<Synchronize>(&container_, worker_));
  return loop_;
}

}  // namespace hostir
