#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hostir/host_ir/passes/stream_split_insertion.h"
#include "hostir/ir/fusion.h"
#include "hostir/runtime/fusion_checks.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "hostir/runtime/rank_agreement.h"

namespace hostir {

class Communicator;

struct ExecutorParams {
  // The streams a run rotates over when run() is not given a number.
  int number_of_streams = runtime::kDefaultNumberOfStreams;
  // Set: the fusion runs sharded over this communicator's ranks (its
  // presegmentation passes run, the program is lowered for this rank).
  Communicator* communicator = nullptr;
  // Overlap without annotations (issue 36): a sharded fusion with no Stream
  // axis and a collective insert_stream_splits could pipeline is prepared at
  // its first run, when the sizes are known, and that pass pipelines the
  // collectives the cost model says pay (CalibratedStreamSplitPlanner); any
  // other fusion is prepared at construction. On by default; false here,
  // HOSTIR_OVERLAP=off or HOSTIR_DISABLE_PASS=insert_stream_splits turn it off.
  bool automatic_stream_splits = automaticStreamSplitsFromEnvironment();

  static bool automaticStreamSplitsFromEnvironment();
};

// The one run path (docs/architecture.md, "One run path"). Every entry
// point (HostExecutor, MultiDeviceExecutor, Python's fd.execute, the CLI)
// runs a fusion through it:
//  1. prepare, once per definition (the constructor): one copy of the
//     fusion (on a mesh of ranks, the presegmentation passes run on it),
//     one segmentation and lowering of that copy;
//  2. key, once per call: one input signature (inputSignature), which keys
//     the fusion checks of a single process and the cross-rank agreement of
//     a sharded run alike, and one validation of the inputs (the
//     evaluator's);
//  3. run the host program.
// The number of streams is an argument of the run, not of the preparation:
// one prepared program and one pool of stream workers serve every value.
//
// run() may be called from several threads; runs are serialized.
class Executor {
 public:
  Executor(const Fusion& fusion, ExecutorParams params);
  virtual ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Inputs are this device's shards in a sharded run (an undefined tensor
  // for an input whose mesh does not hold this device); outputs likewise.
  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs = {},
                              std::optional<int> number_of_streams = std::nullopt);
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {});
  // `run({t0, t1})`: a braced list of tensors would be ambiguous between the
  // two overloads above.
  std::vector<at::Tensor> run(std::initializer_list<at::Tensor> inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    return run(std::vector<at::Tensor>(inputs), outputs);
  }

  // The program's compute alone, for the compute-only baseline of a
  // sharded job (`hostir sp-mlp --baselines`): a run with every collective
  // replaced by its local stand-in (HostIrRunOptions::local_collectives),
  // without the ranks' agreement check, so nothing goes over the link (but
  // the exchange of input extents, which only a program with an input some
  // rank does not hold makes: there every rank must call it). The same
  // prepared program, streams, loops, segments and GEMM paths as run(), on
  // this rank's inputs; the outputs are not the program's.
  std::vector<at::Tensor> runComputeOnly(const std::vector<at::Tensor>& inputs,
                                         std::optional<int> number_of_streams = std::nullopt);

  // The program's communication alone (the communication-only baseline of
  // a training step, whose collectives no hand-written program moves): a run
  // with every compute op skipped (HostIrRunOptions::skip_compute), its
  // collectives posted and waited for where the program does, on buffers
  // that hold no results. Every rank must call it, as run(); without the
  // agreement check. The outputs are not the program's.
  std::vector<at::Tensor> runCommunicationOnly(const std::vector<at::Tensor>& inputs,
                                               std::optional<int> number_of_streams = std::nullopt);

  // One run() with the tracer recording (a stretch of a trace already
  // recording), then what each collective of the program cost this rank on
  // that run: how long its streams waited for it, and how much of the wait
  // no compute hid (runtime::measureWaitExposure), in exposureReport(). A
  // sharded program's ranks must all call it, as run(). HOSTIR_DUMP=overlap
  // measures a sharded program's second run this way and prints it.
  std::vector<at::Tensor> runMeasuringExposure(const std::vector<at::Tensor>& inputs);
  // The last measured run's exposure, a line per collective (empty before).
  const std::string& exposureReport() const {
    return exposure_report_;
  }

  // The lowered program, for inspection.
  const HostIrContainer& hostProgram() const {
    checkPrepared("hostProgram");
    return evaluator_->container();
  }
  // The fusion that was lowered: the caller's copy, after the
  // presegmentation passes in a sharded run.
  const Fusion& preparedFusion() const {
    checkPrepared("preparedFusion");
    return *prepared_;
  }
  // How each segment runs and what its runs so far ran on, falls back to
  // ATen at run time included (HostIrEvaluator::segmentExecution).
  std::string segmentExecution() const {
    checkPrepared("segmentExecution");
    return evaluator_->segmentExecution();
  }
  // For inspection (its stream pool, pooled buffers): run through the
  // executor, whose lock its runs take, not through the evaluator's run().
  HostIrEvaluator& evaluator() {
    checkPrepared("evaluator");
    return *evaluator_;
  }
  // Whether the program waits for its first run to be prepared (automatic
  // stream splits), and what the automatic stream splits found and chose
  // (empty before that run, or when they did not run).
  bool preparedAtFirstRun() const {
    return deferred_communicator_ != nullptr;
  }
  const std::string& overlapReport() const {
    return overlap_report_;
  }
  // The chunk count the automatic stream splits gave the program: the
  // largest among its collectives (1: none chunked, or not decided yet).
  int64_t automaticChunks() const {
    return automatic_chunks_;
  }
  // The per-signature checks of a single-process run (a sharded run's
  // inputs are shards, which the agreement among ranks checks instead).
  const FusionChecks& checks() const;
  bool isSharded() const {
    return agreement_ != nullptr || deferred_communicator_ != nullptr;
  }

 private:
  // Presegmentation, lowering and the agreement of a sharded run; with
  // `planner`, insert_stream_splits asks it.
  void prepareSharded(Communicator& communicator, StreamSplitPlanner* planner);
  // The deferred preparation, at the first run (under the run lock).
  void prepareIfDeferred(const std::vector<at::Tensor>& inputs);
  void checkPrepared(const char* what) const;
  // runComputeOnly and runCommunicationOnly: a run of this rank's inputs
  // with `options` (what it leaves out), without the agreement check.
  std::vector<at::Tensor> runWithout(const std::vector<at::Tensor>& inputs,
                                     std::optional<int> number_of_streams,
                                     HostIrRunOptions options);
  // The run's number of streams: its own, else the params', checked.
  int streamsOfRun(std::optional<int> number_of_streams) const;
  int number_of_streams_;
  std::unique_ptr<Fusion> prepared_;
  std::unique_ptr<FusionChecks> checks_;           // single process
  std::unique_ptr<RankAgreement> agreement_;       // sharded run
  Communicator* deferred_communicator_ = nullptr;  // set until the first run prepares
  // run() under the tracer; sets exposure_report_.
  std::vector<at::Tensor> measuringExposure(const std::function<std::vector<at::Tensor>()>& run);
  std::string overlap_report_;
  std::string exposure_report_;
  int64_t automatic_chunks_ = 1;
  int64_t runs_ = 0;
  std::unique_ptr<HostIrEvaluator> evaluator_;  // last: destroyed first
  // The one lock of a run through the executor, held from the first check
  // to the drained streams (the deferred preparation, the ranks' agreement
  // and the evaluator's run, which takes no lock of its own here).
  std::mutex run_mutex_;
};

}  // namespace hostir
