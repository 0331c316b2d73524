#include "hostir/multidevice/uneven_stream_splits.h"

#include <algorithm>
#include <memory>
#include <unordered_set>

#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

bool isStreamParallel(const TensorView* tv) {
  return std::any_of(
      tv->getLoopDomain().begin(), tv->getLoopDomain().end(),
      [](const IterDomain* id) { return id->getParallelType() == ParallelType::Stream; });
}

bool isGemm(const Expr* expr) {
  return expr->isA<MatmulOp>() || expr->isA<LinearOp>();
}

// A GEMM reading the gathered rows of its first operand, chunk by chunk:
// the allgather is pipelined with it (lowerPipelinedGemm), or with the
// GEMMs of an allgathered tensor (lowerPipelinedGatheredGemms).
bool isPipelinedGemm(const Expr* def) {
  if (!isGemm(def)) {
    return false;
  }
  if (isResharding(def)) {
    // One that computes and reshards at once is split by the
    // presegmentation passes (classifyResharding would throw).
    return isLoweredDirectly(def) &&
           classifyResharding(def).pattern == ReshardingPattern::PipelinedAllgatherGemm;
  }
  const Expr* gather = def->input(0)->definition();
  return gather != nullptr && gather->isA<LoadStoreOp>() && isResharding(gather) &&
         classifyResharding(gather).type == CollectiveType::Allgather;
}

bool isPointwise(const Expr* def) {
  return def->isA<UnaryOp>() || def->isA<BinaryOp>() || def->isA<WhereOp>() ||
         def->isA<LoadStoreOp>();
}

// A sum over the sharded axis (the attention's sum over the heads, and in
// the backward its input grad's) allreduced, or reduce-scattered onto the
// rows: chunk by chunk, its chunks are cut from the whole rows (the same on
// every rank) and every member's rows sit in a [devices, c, ...] padded
// buffer (stream_parallelization's addRowsReduceScatter); else whole, after
// the loop. An expr that computes and reshards at once (split in two by
// the presegmentation passes) is none: classifyResharding would throw.
bool isRowsReduction(const Expr* use) {
  if (!isLoweredDirectly(use)) {
    return false;
  }
  const CommunicationPlan plan = classifyResharding(use);
  return plan.pattern == ReshardingPattern::ReductionOverShardedAxis &&
         (plan.type == CollectiveType::ReduceScatter || plan.type == CollectiveType::Allreduce);
}

// Why `tv`, Stream-parallel, cannot run with uneven shards, or empty; adds
// it to `cut_alike` when its chunks follow a pipelined allgather + GEMM.
std::string refusalOf(const TensorView* tv, std::unordered_set<const TensorView*>& cut_alike) {
  const Expr* def = tv->definition();
  const bool reads_cut_alike =
      def != nullptr && std::any_of(def->inputs().begin(), def->inputs().end(), [&](const Val* in) {
        return cut_alike.count(dynamic_cast<const TensorView*>(in)) != 0;
      });
  if (def != nullptr && (isPipelinedGemm(def) || (reads_cut_alike && !isResharding(def) &&
                                                  (isPointwise(def) || isGemm(def))))) {
    cut_alike.insert(tv);
    return {};
  }
  if (def != nullptr && isResharding(def)) {
    return "the program splits " + tv->toInlineString() + " into Stream chunks, computed by " +
           def->toInlineString() + ", which moves it between devices";
  }
  for (const Expr* use : tv->uses()) {
    if (isResharding(use) && !isRowsReduction(use)) {
      return "the program splits " + tv->toInlineString() + " into Stream chunks, read by " +
             use->toInlineString() +
             ", which would move each device's chunks of its own rows (of different sizes)";
    }
  }
  return {};  // a loop of this device's own rows: no collective in it
}

}  // namespace

std::string streamSplitsRefusingUnevenShards(const Fusion& fusion) {
  // Statements are created in definition order: producers first.
  std::unordered_set<const TensorView*> cut_alike;
  for (const std::unique_ptr<Statement>& statement : fusion.statements()) {
    const auto* tv = dynamic_cast<const TensorView*>(statement.get());
    if (tv == nullptr || !isStreamParallel(tv)) {
      continue;
    }
    if (std::string reason = refusalOf(tv, cut_alike); !reason.empty()) {
      return reason +
             ", and only a pipelined allgather + GEMM (with the pointwise ops and the "
             "contraction after it) cuts every device's chunks from the largest shard; run it "
             "without that Stream split (no ParallelType::Stream on it, HOSTIR_OVERLAP=off)";
    }
  }
  return {};
}

}  // namespace hostir
