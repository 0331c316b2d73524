#include "hostir/host_ir/passes/stream_split_insertion.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/options.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

namespace {

thread_local StreamSplitPlanner* current_planner = nullptr;

bool isGemm(const Expr* expr) {
  return expr->isA<MatmulOp>() || expr->isA<LinearOp>();
}

}  // namespace

bool hasStreamAxis(const Fusion& fusion) {
  return std::any_of(
      fusion.statements().begin(), fusion.statements().end(), [](const auto& statement) {
        const auto* tv = dynamic_cast<const TensorView*>(statement.get());
        return tv != nullptr && std::any_of(tv->getLoopDomain().begin(), tv->getLoopDomain().end(),
                                            [](const IterDomain* id) { return id->isStream(); });
      });
}

namespace {

// Whether the logical axis `pos` of `tv` is a plain loop axis a Stream split
// can take (not sharded, not split, not reduced).
bool splittable(const TensorView* tv, int64_t pos) {
  if (pos < 0) {
    return false;
  }
  IterDomain* id = tv->getLogicalDomain()[static_cast<size_t>(pos)];
  const std::vector<IterDomain*>& loop = tv->getLoopDomain();
  return !id->isReduction() && !id->isBroadcast() &&
         id->getParallelType() == ParallelType::Serial &&
         std::find(loop.begin(), loop.end(), id) != loop.end();
}

// The unary ops and the reduce-scattered contraction that a pipelined
// allgather + GEMM carries chunk by chunk (the lowering's PipelineTail).
void findTail(const Fusion& fusion, StreamSplitCandidate& candidate) {
  const Val* current = candidate.gemms.front()->output(0);
  int64_t pointwise = 0;
  for (;;) {
    if (fusion.isOutput(current) || current->uses().size() != 1) {
      return;
    }
    const Expr* use = current->uses().front();
    if (use->isA<UnaryOp>() && !isResharding(use)) {
      ++pointwise;
      current = use->output(0);
      continue;
    }
    if (isGemm(use) && use->input(0) == current && isLoweredDirectly(use)) {
      CommunicationPlan plan = classifyResharding(use);
      if (plan.pattern == ReshardingPattern::ShardedContraction &&
          plan.type == CollectiveType::ReduceScatter) {
        candidate.tail_contraction = use;
        candidate.tail_pointwise_ops = pointwise;
      }
    }
    return;
  }
}

// A matmul/linear that allgathers the rows of its 2-D first operand into
// the rows of its output: the pipelined allgather + GEMM.
std::optional<StreamSplitCandidate> gemmCandidate(const Expr* expr) {
  if (!isGemm(expr) || !isResharding(expr)) {
    return std::nullopt;
  }
  auto* a = expr->input(0)->as<TensorView>();
  TensorView* out = tensorOutput(expr);
  std::optional<CommunicationPlan> plan = pipelinableAllgatherGemm(expr);
  if (!plan) {
    return std::nullopt;
  }
  StreamSplitCandidate candidate;
  candidate.collective = expr;
  candidate.gathered = a;
  candidate.gemms = {expr};
  candidate.output_rows = {shapeToLogical(out).at(0)};
  if (a->rank() != 2 || plan->scattered_axis != 0 || plan->stream_axis != 0 ||
      plan->collectives.size() != 1) {
    candidate.not_chunkable =
        "no chunkable axis: the pipelined allgather + GEMM needs a 2-D first operand gathered "
        "on its rows into the output's first axis, on a 1-D mesh";
  } else if (!splittable(out, candidate.output_rows[0])) {
    candidate.not_chunkable = "no chunkable axis: the output's rows are split or parallelized";
  }
  return candidate;
}

// A `set` that allgathers the rows of a 2-D tensor read only by GEMMs as
// their first operand (the attention's Q, K and V projections).
std::optional<StreamSplitCandidate> gatheredRowsCandidate(const Fusion& fusion,
                                                          const std::vector<Expr*>& exprs,
                                                          size_t index) {
  const Expr* set = exprs[index];
  if (!set->isA<LoadStoreOp>() || !isResharding(set)) {
    return std::nullopt;
  }
  auto* in = set->input(0)->as<TensorView>();
  TensorView* gathered = tensorOutput(set);
  if (in->rank() != 2 || getShardedLogicalAxis(in, ParallelType::DIDx) != 0 ||
      getShardedLogicalAxis(gathered, ParallelType::DIDx) == 0) {
    return std::nullopt;  // not an allgather of rows
  }
  StreamSplitCandidate candidate;
  candidate.collective = set;
  candidate.gathered = in;
  if (fusion.isOutput(gathered)) {
    candidate.not_chunkable = "a consumer that needs the whole tensor: it is a fusion output";
    return candidate;
  }
  // The operands the pipeline needs where the set is.
  auto available = [&](const Val* operand) {
    const Expr* definition = operand->definition();
    return definition == nullptr ||
           std::find(exprs.begin(), exprs.begin() + static_cast<std::ptrdiff_t>(index),
                     definition) != exprs.begin() + static_cast<std::ptrdiff_t>(index);
  };
  for (size_t i = index + 1; i < exprs.size(); ++i) {
    const Expr* consumer = exprs[i];
    const auto& inputs = consumer->inputs();
    if (std::find(inputs.begin(), inputs.end(), gathered) == inputs.end()) {
      continue;
    }
    if (!isGemm(consumer) || consumer->input(0) != gathered ||
        std::count(inputs.begin(), inputs.end(), gathered) != 1 || isResharding(consumer) ||
        !std::all_of(inputs.begin() + 1, inputs.end(), available)) {
      candidate.not_chunkable =
          "a consumer that needs the whole tensor: " + consumer->toInlineString();
      return candidate;
    }
    TensorView* out = tensorOutput(consumer);
    const int64_t row = mappedConsumerAxis(mapProducerToConsumer(consumer, gathered), 0);
    if (!splittable(out, row)) {
      candidate.not_chunkable = "no chunkable axis: the rows of " + out->toInlineString() +
                                " are split, sharded or not there";
      return candidate;
    }
    candidate.gemms.push_back(consumer);
    candidate.output_rows.push_back(row);
  }
  if (candidate.gemms.empty()) {
    candidate.not_chunkable = "no GEMM reads the gathered rows";
  }
  return candidate;
}

// Whether `expr` reads `source`, directly or through the exprs before it.
bool readsFrom(const Expr* expr, const Val* source) {
  std::vector<const Expr*> pending{expr};
  std::unordered_set<const Expr*> seen;
  while (!pending.empty()) {
    const Expr* current = pending.back();
    pending.pop_back();
    if (!seen.insert(current).second) {
      continue;
    }
    for (const Val* input : current->inputs()) {
      if (input == source) {
        return true;
      }
      if (input->definition() != nullptr) {
        pending.push_back(input->definition());
      }
    }
  }
  return false;
}

// The latest earlier candidate of an allgather + GEMMs whose GEMM outputs
// `collective` reads: the loop it would join as the tail.
std::optional<size_t> pipelinedLoopBefore(const std::vector<StreamSplitCandidate>& candidates,
                                          const Expr* collective) {
  for (size_t i = candidates.size(); i-- > 0;) {
    const StreamSplitCandidate& earlier = candidates[i];
    if (earlier.gathered == nullptr || !earlier.not_chunkable.empty()) {
      continue;
    }
    for (const Expr* gemm : earlier.gemms) {
      if (readsFrom(collective, gemm->output(0))) {
        return i;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string StreamSplitCandidate::describe() const {
  std::ostringstream ss;
  if (other != nullptr) {
    ss << "the collective of " << other->toInlineString();
    return ss.str();
  }
  ss << "allgather of " << gathered->toInlineString() << "'s rows";
  for (size_t i = 0; i < gemms.size(); ++i) {
    ss << (i == 0 ? " into " : ", ") << gemms[i]->toInlineString();
  }
  return ss.str();
}

StreamSplitPlannerScope::StreamSplitPlannerScope(StreamSplitPlanner* planner)
    : previous_(current_planner) {
  current_planner = planner;
}

StreamSplitPlannerScope::~StreamSplitPlannerScope() {
  current_planner = previous_;
}

std::vector<StreamSplitCandidate> findStreamSplitCandidates(const Fusion& fusion) {
  const std::vector<Expr*> exprs = fusion.exprs();
  std::vector<StreamSplitCandidate> candidates;
  for (size_t i = 0; i < exprs.size(); ++i) {
    std::optional<StreamSplitCandidate> candidate = gemmCandidate(exprs[i]);
    if (candidate && candidate->not_chunkable.empty()) {
      findTail(fusion, *candidate);
    }
    if (!candidate) {
      candidate = gatheredRowsCandidate(fusion, exprs, i);
    }
    if (!candidate && isResharding(exprs[i])) {
      candidate = StreamSplitCandidate{};
      candidate->other = exprs[i];
      auto head = std::find_if(candidates.begin(), candidates.end(),
                               [&](const StreamSplitCandidate& earlier) {
                                 return earlier.tail_contraction == exprs[i];
                               });
      if (head != candidates.end()) {
        candidate->follows = static_cast<size_t>(head - candidates.begin());
        candidate->not_chunkable =
            "the tail of the allgather of " + head->gathered->toInlineString() +
            ": reduce-scattered chunk by chunk when that allgather is pipelined";
      } else if (isLoweredDirectly(exprs[i])) {
        candidate->follows = pipelinedLoopBefore(candidates, exprs[i]);
        candidate->not_chunkable =
            candidate->follows
                ? "the tail of the allgather of " +
                      candidates[*candidate->follows].gathered->toInlineString() +
                      ": it reads that loop's GEMMs and follows its chunks when that allgather "
                      "is pipelined"
                : "pipelined only as the tail of a pipelined allgather + GEMM before it, not on "
                  "its own, and no such allgather feeds it";
      } else {
        candidate->not_chunkable =
            "no chunkable axis: only an allgather of rows read by GEMMs is pipelined";
      }
    }
    if (candidate) {
      candidates.push_back(std::move(*candidate));
    }
  }
  return candidates;
}

void applyStreamSplit(const StreamSplitCandidate& candidate, int64_t chunks) {
  HOSTIR_ASSERT(candidate.not_chunkable.empty() && chunks > 1,
                "a Stream split of a candidate that is not chunkable");
  for (size_t i = 0; i < candidate.gemms.size(); ++i) {
    TensorView* out = tensorOutput(candidate.gemms[i]);
    IterDomain* rows = out->getLogicalDomain()[static_cast<size_t>(candidate.output_rows[i])];
    const std::vector<IterDomain*>& loop = out->getLoopDomain();
    const auto pos = static_cast<int64_t>(std::find(loop.begin(), loop.end(), rows) - loop.begin());
    out->split(pos, chunks, /*inner_split=*/false);
    out->axis(pos)->parallelize(ParallelType::Stream);
  }
}

std::string describeStreamSplits(const std::vector<StreamSplitCandidate>& candidates,
                                 const std::vector<StreamSplitDecision>& decisions) {
  std::ostringstream ss;
  ss << std::fixed << std::setprecision(2);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const StreamSplitCandidate& candidate = candidates[i];
    const StreamSplitDecision* decision = i < decisions.size() ? &decisions[i] : nullptr;
    const bool pipelined = decision != nullptr && decision->chunks > 1;
    // A tail is chunked by the loop it joins.
    const StreamSplitDecision* head = candidate.follows && *candidate.follows < decisions.size()
                                          ? &decisions[*candidate.follows]
                                          : nullptr;
    const bool pipelined_as_tail = head != nullptr && head->chunks > 1;
    ss << (pipelined ? "pipelined, " + std::to_string(decision->chunks) + " chunks on the rows: "
           : pipelined_as_tail
               ? "pipelined as a tail, " + std::to_string(head->chunks) + " chunks: "
               : std::string("not pipelined: "))
       << candidate.describe() << "\n    ";
    if (!candidate.not_chunkable.empty()) {
      ss << candidate.not_chunkable;
    } else if (decision != nullptr) {
      ss << decision->reason;
      if (!decision->predicted_ms.empty()) {
        ss << "; predicted";
        for (const auto& [chunks, ms] : decision->predicted_ms) {
          ss << " " << chunks << ": " << ms << " ms";
        }
      }
    } else {
      ss << "no sizes known yet: the executor decides at the first run";
    }
    ss << "\n";
  }
  return ss.str();
}

void insertStreamSplits(Fusion* fusion) {
  if (hasStreamAxis(*fusion)) {
    return;  // the user's annotation wins
  }
  const std::vector<StreamSplitCandidate> candidates = findStreamSplitCandidates(*fusion);
  if (candidates.empty() || current_planner == nullptr) {
    return;
  }
  std::vector<StreamSplitDecision> decisions = current_planner->decide(candidates);
  HOSTIR_ASSERT(decisions.size() == candidates.size(), "the planner answered ", decisions.size(),
                " of ", candidates.size(), " candidates");
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].not_chunkable.empty() && decisions[i].chunks > 1) {
      applyStreamSplit(candidates[i], decisions[i].chunks);
    }
  }
  if (isDumpEnabled("overlap")) {
    std::cout << "=== automatic stream splits:\n"
              << describeStreamSplits(candidates, decisions) << std::flush;
  }
}

}  // namespace hostir
