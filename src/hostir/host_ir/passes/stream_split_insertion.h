#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hostir {

class Expr;
class Fusion;
class TensorView;

// Overlap without annotations (issue 36): on a sharded fusion that has no
// Stream axis, the collectives a pipelined loop can hide are found and the
// GEMMs next to them get the Stream split a user would write, so the
// existing stream lowering pipelines them. What is chunked and how finely is
// decided by a planner that knows the sizes and the link (the runtime's,
// from a calibration at the first run); without one nothing is chunked.

// One collective the pass could pipeline, or could not (with the reason).
struct StreamSplitCandidate {
  // The resharding expr: a matmul/linear that allgathers its first operand's
  // rows (the pipelined allgather + GEMM), or a `set` that allgathers rows
  // read only by GEMMs (the attention's Q, K and V projections).
  const Expr* collective = nullptr;
  // The tensor whose rows are gathered (this device's shard) and the GEMMs
  // whose outputs would be split, on `output_rows` (logical positions).
  const TensorView* gathered = nullptr;
  std::vector<const Expr*> gemms;
  std::vector<int64_t> output_rows;
  // What joins the chunks of a pipelined allgather + GEMM after it: its
  // unary pointwise ops, then a GEMM contracting the sharded axis whose sum
  // is reduce-scattered (the MLP's GELU and second linear); null if none.
  const Expr* tail_contraction = nullptr;
  int64_t tail_pointwise_ops = 0;
  // Empty when it can be pipelined; otherwise why not.
  std::string not_chunkable;
  // Another resharding expr (a reduce-scatter or allreduce of a sum, a set
  // that is not an allgather of rows): listed with why it is not pipelined
  // on its own; `gathered` is null.
  const Expr* other = nullptr;
  // For such a collective: the earlier candidate whose pipelined loop it
  // joins as the tail (reduce-scattered chunk by chunk in that loop), if any.
  std::optional<size_t> follows;
  std::string describe() const;  // "allgather of T0_g_float[...] into linear T3 = ..."
};

// What the planner decided for one candidate.
struct StreamSplitDecision {
  int64_t chunks = 1;  // 1: left unchunked
  std::string reason;
  std::map<int64_t, double> predicted_ms;  // per chunk count it priced
};

// Decides the chunk count of each candidate (1 for one that is not
// chunkable); the same answer on every rank.
class StreamSplitPlanner {
 public:
  virtual ~StreamSplitPlanner() = default;
  virtual std::vector<StreamSplitDecision> decide(
      const std::vector<StreamSplitCandidate>& candidates) = 0;
};

// Makes `planner` the one insertStreamSplits asks on this thread while the
// scope lives (the executor's preparation of a definition).
class StreamSplitPlannerScope {
 public:
  explicit StreamSplitPlannerScope(StreamSplitPlanner* planner);
  ~StreamSplitPlannerScope();
  StreamSplitPlannerScope(const StreamSplitPlannerScope&) = delete;
  StreamSplitPlannerScope& operator=(const StreamSplitPlannerScope&) = delete;

 private:
  StreamSplitPlanner* previous_;
};

// The candidates of a sharded fusion whose shardings are propagated, before
// insert_reshardings, in program order.
std::vector<StreamSplitCandidate> findStreamSplitCandidates(const Fusion& fusion);

// Splits each candidate's GEMM outputs on their rows in `chunks` chunks
// (outer split) and makes the outer part Stream-parallel.
void applyStreamSplit(const StreamSplitCandidate& candidate, int64_t chunks);

// One line per candidate: pipelined or not, the axis, the chunk count, the
// predicted times and the reason (HOSTIR_DUMP=overlap, the executor's
// overlapReport()).
std::string describeStreamSplits(const std::vector<StreamSplitCandidate>& candidates,
                                 const std::vector<StreamSplitDecision>& decisions);

// Whether any tensor of the fusion has a Stream-parallel loop axis.
bool hasStreamAxis(const Fusion& fusion);

// The pass: a fusion with a Stream axis anywhere is left as the user wrote
// it (a user's annotation wins); otherwise the candidates the planner gives
// more than one chunk are split. Without a planner it changes nothing.
void insertStreamSplits(Fusion* fusion);

}  // namespace hostir
