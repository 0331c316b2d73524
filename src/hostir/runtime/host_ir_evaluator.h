#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/encoding.h"
#include "hostir/runtime/binding_lifetimes.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/collective_channels.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/fusion_executor.h"

namespace c10d {
class Work;
}
#include "hostir/runtime/streams/compute_gate.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir {

class Communicator;
class Stream;

struct HostIrEvaluatorParams {
  // Worker streams a program rotates over; bound to `numberOfStreams`
  // (a run may give another number: RunOptions).
  int number_of_streams = runtime::kDefaultNumberOfStreams;
  // Needed only by programs with communications.
  Communicator* communicator = nullptr;
  // This rank's device id.
  int64_t my_device = 0;
};

struct HostIrRunOptions {
  // Binds scalars the inputs cannot (e.g. extents of tensors this device
  // does not hold, learned from the other ranks).
  std::vector<std::pair<const Val*, PolymorphicValue>> symbols;
  // This run's `numberOfStreams` (default: the params'). The pool's
  // streams are made on first use and kept, so runs with different
  // numbers share their workers.
  std::optional<int> number_of_streams;
  // The caller has called validate() on these inputs and outputs.
  bool inputs_validated = false;
  // Every collective (and send/receive) replaced by its local stand-in
  // (localStandIn, comm/collectives.h): nothing goes over the link, a Wait
  // waits only for the stand-in's copy. The program's compute alone, on
  // this rank's data, as its streams and loops order it (the compute-only
  // baseline, Executor::runComputeOnly); the outputs are not the program's.
  bool local_collectives = false;
  // Every compute op skipped (its outputs allocated, not computed): the
  // program's collectives alone, posted and waited for as its streams and
  // loops order them (the communication-only baseline of a step,
  // Executor::runCommunicationOnly); the outputs are not the program's.
  bool skip_compute = false;
};

// Runs a host program. The host thread walks the program and decides every
// buffer (allocations, views, loop indices); compute is enqueued as closures
// on the current stream, which fill those buffers. A collective is posted by
// its team's communication channel (one stream per team, fed by the host in
// program order, so every rank posts a team's collectives in one order and
// they reach the link in that order), once the current stream has produced
// its input; its Wait makes only the stream that needs the data wait
// (docs/streams.md, "Communication channels").
// IR stream index k (e.g. `Stream ( StreamIdx % numberOfStreams )`) is
// worker stream k + 1 of the pool; the caller's stream is pool stream 0, the
// one a program starts on and gets with GetCurrentStream. run() returns once
// every stream has drained, re-raising the first failure of any of them.
//
// Thread safety: run() may be called from several threads at once; the runs
// are serialized (one mutex per evaluator, held for the whole run, streams
// drained included), because a run owns the evaluator's streams until they
// drain. A second caller waits for the first run to end; for runs that
// overlap in time, give each thread its own evaluator (docs/reliability.md).
//
// Destruction: the stream pool is the last member, so it is destroyed first:
// queued work is discarded and running work finishes before the executors,
// the gate and the channels it refers to go away, whatever state the last
// run left (a timeout, a failure, work still queued).
class HostIrEvaluator final : public HostIrDispatch {
 public:
  explicit HostIrEvaluator(std::unique_ptr<HostIrContainer> container,
                           HostIrEvaluatorParams params = {});

  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {},
                              const HostIrRunOptions& options = {});
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  // `run({t0, t1})`: a braced list of tensors would be ambiguous between the
  // two overloads above.
  std::vector<at::Tensor> run(std::initializer_list<at::Tensor> inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return run(std::vector<at::Tensor>(inputs), outputs);
  }

  // Throws hostir::Error if `inputs` (and preallocated `outputs`) do not
  // fit the program's inputs: count, kinds, dtypes, ranks, contiguity,
  // scalar values, outputs aliasing inputs. run() calls it unless told the
  // caller did.
  void validate(const std::vector<PolymorphicValue>& inputs,
                const std::vector<at::Tensor>& outputs) const;

  const HostIrContainer& container() const {
    return *container_;
  }
  // The large buffers kept for later runs, the process's (buffer_pool.h):
  // what they hold, and letting them go (not during a run).
  int64_t pooledBytes() const {
    return buffers_.heldBytes();
  }
  void releasePooledBuffers() {
    buffers_.release();
  }
  // How each segment runs and what its runs so far ran on, one line per
  // HostUnit the program posts, then per LaunchKernel kernel:
  // "  HostUnit(...): compiled kernel <hash> for <target>; ran it 4 times,
  // fell back to ATen 1 time: the input T0... is empty (sizes [0, 8])"
  // (FusionExecutor::execution). Empty for a program without segments.
  std::string segmentExecution() const;
  runtime::StreamPool& streamPool() {
    return pool_;
  }

  // Host IR nodes.
  void handle(const HostUnit* expr) override;
  void handle(const PostOnStream* expr) override;
  void handle(const LaunchKernel* expr) override;
  void handle(const Allocate* expr) override;
  void handle(const Deallocate* expr) override;
  void handle(const ForLoop* expr) override;
  void handle(const GetCurrentStream* expr) override;
  void handle(const SetCurrentStream* expr) override;
  void handle(const Synchronize* expr) override;
  void handle(const HirAliasSelect* expr) override;
  void handle(const Communication* expr) override;
  void handle(const P2PCommunication* expr) override;
  void handle(const Wait* expr) override;
  void handle(const StartCoalescing* expr) override;
  void handle(const EndCoalescing* expr) override;
  void handle(const SetEncoding* expr) override;
  void handle(const UnsetEncoding* expr) override;
  // Fusion ops run directly, in place when their output is already bound.
  void handle(const LoadStoreOp* expr) override;
  void handle(const UnaryOp* expr) override;
  void handle(const BinaryOp* expr) override;
  void handle(const ReductionOp* expr) override;
  void handle(const BroadcastOp* expr) override;
  void handle(const MatmulOp* expr) override;
  void handle(const LinearOp* expr) override;
  void handle(const SelectOp* expr) override;
  void handle(const SliceOp* expr) override;
  void handle(const PermuteOp* expr) override;
  void handle(const ReshapeOp* expr) override;
  void handle(const FullOp* expr) override;
  void handle(const WhereOp* expr) override;
  void handle(const IotaOp* expr) override;

 private:
  void runScope(const Scope& scope);
  // The run's results (copied into `outputs` where given); then forgets the
  // run's bindings.
  std::vector<at::Tensor> takeOutputs(const std::vector<at::Tensor>& outputs, int64_t my_device);
  runtime::Stream& resolveStream(const Stream* stream);
  // A tensor held in a resolved panel layout (its encoding's) is allocated
  // in panels.
  at::Tensor boundOrAllocated(const Val* tensor, bool zero_init = false);
  // Allocates and binds `tv` laid out as `layout` (panels: [ceilDiv(N,
  // tile), K, tile], its plain sizes remembered).
  at::Tensor allocate(const TensorView* tv, const Layout& layout, bool zero_init = false);
  at::Tensor boundInput(const Val* tensor, const Expr* user);
  void enqueueFusionOp(const Expr* expr);
  void bindViewOrCopy(const Expr* expr);
  // `unit`: the HostUnit a PostOnStream runs (its ops name a NaN/Inf found
  // by the HOSTIR_CHECK_FINITE check), null for a kernel launch.
  void enqueueSegment(const Expr* expr, FusionExecutor& executor, const HostUnit* unit = nullptr);
  // Enqueues compute on the current stream, admitted in program order when
  // the thread budget says so. A template, so that the closure is wrapped
  // into one std::function (one allocation per op), not two. `cheap` work
  // runs on the host thread when its stream is idle and compute is not
  // ordered (Stream::enqueueCheap).
  template <typename Work>
  void enqueueCompute(const Expr* expr, Work work, bool cheap = false);
  // Runs `work` on the calling thread, failing as the caller's stream would.
  template <typename Work>
  void runInline(const Expr* expr, const Work& work);
  // Called before the run first orders streams or communicates.
  void leaveInline() {
    inline_on_caller_ = false;
  }
  // Posts on `team`'s channel once the current stream reaches this point.
  void postOnChannel(const Expr* expr, const std::vector<int64_t>& team,
                     CollectiveChannels::Post post);
  const std::string& label(const Expr* expr) {
    return *sharedLabel(expr);
  }
  // The printed expr, made once per expr and shared by every item a stream
  // queues for it.
  const std::shared_ptr<const std::string>& sharedLabel(const Expr* expr);
  Communicator& communicator(const Expr* expr);

  std::unique_ptr<HostIrContainer> container_;
  HostIrEvaluatorParams params_;
  std::unordered_map<const HostUnit*, std::unique_ptr<FusionExecutor>> unit_executors_;
  std::vector<std::unique_ptr<FusionExecutor>> kernel_executors_;
  std::unordered_map<const Expr*, std::shared_ptr<const std::string>> labels_;
  bool communicates_ = false;
  std::unique_ptr<runtime::ComputeGate> gate_;  // null: compute is not ordered
  // The teams' channels and the pairing of posts with Waits; refers to
  // pool_, which is destroyed first.
  CollectiveChannels channels_{pool_};

  // Per-run state.
  ExpressionEvaluator ee_;
  runtime::Stream* current_ = nullptr;
  // True until the run first leaves the caller's stream (switches to another
  // stream, makes a stream wait, or communicates): until then the caller's
  // stream has nothing queued and no other stream runs, so its compute runs
  // inline on the calling thread, in the same order, without a hand-off to
  // the stream's worker and back (docs/streams.md, "Inline on the caller").
  bool inline_on_caller_ = false;
  std::unordered_map<const Val*, runtime::Stream*> bound_streams_;
  // This run's HostIrRunOptions::local_collectives and skip_compute.
  bool local_collectives_ = false;
  bool skip_compute_ = false;
  // runtime::checkFiniteEnabled() when the run began.
  bool check_finite_ = false;
  // The timeout of this run's stream-side waits (runtime::defaultWaitTimeout,
  // plus the communication timeout when the program communicates: a stream
  // waiting for a collective must not give up before the collective does).
  runtime::WaitTimeout wait_timeout_{0};

  // Large intermediates of earlier runs, reused (buffer_pool.h).
  BufferPool& buffers_ = BufferPool::shared();
  // Per top-level expr, the tensors no later top-level expr refers to: let
  // go after it (binding_lifetimes.h), so their memory can serve later
  // allocations of the same run.
  // (A null program is refused by the constructor's body, after this.)
  std::vector<std::vector<const Val*>> dead_after_ =
      container_ ? tensorsDeadAfter(*container_) : std::vector<std::vector<const Val*>>{};
  void unbindDeadAfter(const Scope& scope, size_t index) {
    if (&scope != &container_->topLevel()) {
      return;
    }
    for (const Val* dead : dead_after_[index]) {
      ee_.unbind(dead);
    }
  }
  // Held by run() from start to end: runs are serialized.
  std::mutex run_mutex_;
  // Declared last, destroyed first: joins the workers before anything their
  // queued work refers to is destroyed.
  runtime::StreamPool pool_;
};

}  // namespace hostir
