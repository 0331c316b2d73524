#pragma once

#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/host_collectives.h"
#include "hostir/runtime/run_buffers.h"
#include "hostir/runtime/segment_executors.h"
#include "hostir/runtime/stream_scheduler.h"
#include "hostir/runtime/streams/stream_pool.h"

namespace hostir {

class Communicator;
class Executor;

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

// Runs a host program: the interpreter of its instructions. The host
// thread walks the program and decides every buffer (allocations, views,
// loop indices); compute is enqueued as closures on the current stream,
// which fill those buffers. Each other concern has its own file, and the
// evaluator delegates to it (docs/architecture.md, "The evaluator"):
//  - stream_scheduler: the current stream, stream switches and waits, the
//    thread budget and compute turns, the run's timeout, the inline mode;
//  - host_collectives (over collective_channels): a collective is posted by
//    its team's communication channel (one stream per team, fed by the host
//    in program order, so every rank posts a team's collectives in one order
//    and they reach the link in that order), once the current stream has
//    produced its input; its Wait makes only the stream that needs the data
//    wait (docs/streams.md, "Communication channels");
//  - run_buffers (over buffer_pool): allocation, and bindings let go after
//    their last use;
//  - segment_executors: the executors of the program's segments.
// IR stream index k (e.g. `Stream ( StreamIdx % numberOfStreams )`) is
// worker stream k + 1 of the pool; the caller's stream is pool stream 0, the
// one a program starts on and gets with GetCurrentStream. run() returns once
// every stream has drained, re-raising the first failure of any of them.
//
// Thread safety: run() may be called from several threads at once; the runs
// are serialized (a mutex held for the whole run, streams drained included),
// because a run owns the evaluator's streams until they drain. A second
// caller waits for the first run to end; for runs that overlap in time,
// give each thread its own evaluator (docs/reliability.md). An Executor
// serializes its runs itself, with the one lock it holds for the whole run
// (agreement among ranks included), and runs its evaluator under it.
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
    return buffers_.pooledBytes();
  }
  void releasePooledBuffers() {
    buffers_.releasePooled();
  }
  // How each segment runs and what its runs so far ran on, one line per
  // HostUnit the program posts, then per LaunchKernel kernel:
  // "  HostUnit(...): compiled kernel <hash> for <target>; ran it 4 times,
  // fell back to ATen 1 time: the input T0... is empty (sizes [0, 8])"
  // (FusionExecutor::execution). Empty for a program without segments.
  std::string segmentExecution() const {
    return segments_.execution(*container_);
  }
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
  // The stream side of a run with `number_of_streams`: what the constructor
  // prepares (the default run's) and what each run starts.
  StreamSchedule scheduleOf(int number_of_streams, bool skip_compute) const;
  // The Executor runs its evaluator under its own run lock.
  friend class Executor;
  // run() without the evaluator's lock: the caller serializes runs.
  std::vector<at::Tensor> runSerialized(const std::vector<PolymorphicValue>& inputs,
                                        const std::vector<at::Tensor>& outputs,
                                        const HostIrRunOptions& options);
  // Binds the run's inputs, preallocated outputs and symbols.
  void bindRun(const std::vector<PolymorphicValue>& inputs, const std::vector<at::Tensor>& outputs,
               const HostIrRunOptions& options, int number_of_streams);
  void runScope(const Scope& scope);
  // The run's results (copied into `outputs` where given); then forgets the
  // run's bindings.
  std::vector<at::Tensor> takeOutputs(const std::vector<at::Tensor>& outputs, int64_t my_device);
  // The tensor's binding, else a new buffer (run_buffers.h) bound to it.
  at::Tensor boundOrAllocated(const Val* tensor, bool zero_init = false);
  at::Tensor boundInput(const Val* tensor, const Expr* user);
  void enqueueFusionOp(const Expr* expr);
  void bindViewOrCopy(const Expr* expr);
  // `unit`: the HostUnit a PostOnStream runs (its ops name a NaN/Inf found
  // by the HOSTIR_CHECK_FINITE check), null for a kernel launch.
  void enqueueSegment(const Expr* expr, FusionExecutor& executor, const HostUnit* unit = nullptr);
  const std::string& label(const Expr* expr) {
    return *sharedLabel(expr);
  }
  // The printed expr, made once per expr and shared by every item a stream
  // queues for it.
  const std::shared_ptr<const std::string>& sharedLabel(const Expr* expr);
  // Per top-level expr: lets go of the tensors no later one refers to, so
  // their memory can serve later allocations of the same run.
  void unbindDeadAfter(const Scope& scope, size_t index);

  std::unique_ptr<HostIrContainer> container_;
  HostIrEvaluatorParams params_;
  SegmentExecutors segments_;
  std::unordered_map<const Expr*, std::shared_ptr<const std::string>> labels_;
  RunBuffers buffers_;
  // The collectives, their channels and the Post/Wait pairing, and the
  // streams' side of a run: both refer to pool_, which is destroyed first.
  HostCollectives collectives_;
  StreamScheduler scheduler_{pool_};
  bool communicates_ = false;

  // Per-run state.
  ExpressionEvaluator ee_;
  // runtime::checkFiniteEnabled() when the run began.
  bool check_finite_ = false;

  // Held by run() from start to end: runs are serialized.
  std::mutex run_mutex_;
  // Declared last, destroyed first: joins the workers before anything their
  // queued work refers to is destroyed.
  runtime::StreamPool pool_;
};

}  // namespace hostir
