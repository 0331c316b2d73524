#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/ops.h"
#include "hostir/ir/types.h"
#include "hostir/multidevice/collective_type.h"

// How a resharding expr becomes collectives, as plain data. The host IR
// lowering turns a plan into Communication nodes (and, for the matmul
// patterns, the surrounding compute); this layer does not know those nodes.
namespace hostir {

// Which shape of resharding the expr has; it says what the lowering emits
// around the collectives.
enum class ReshardingPattern {
  // A `set`: the collectives alone move the data from input to output.
  Set,
  // A reduction over the sharded axis: each device reduces its shard, the
  // collectives combine the partial results (Allreduce/ReduceScatter/Reduce).
  ReductionOverShardedAxis,
  // matmul/linear contracting a sharded K (row-parallel linear): a local
  // partial product, then Allreduce or ReduceScatter.
  ShardedContraction,
  // matmul/linear whose first operand is sharded on its row axis and whose
  // output has a Stream-parallel axis: per chunk, Allgather the chunk of A,
  // Wait, then the GEMM into the output slice.
  PipelinedAllgatherGemm,
};

std::string toString(ReshardingPattern pattern);

// One collective over one team.
struct Collective {
  CollectiveType type = CollectiveType::Allgather;
  // Device ids taking part, ascending. A SendRecv whose sender is its
  // receiver has a team of one: a local copy.
  std::vector<int64_t> team;
  // Gather/Reduce: the receiving device; Scatter/Broadcast: the sending
  // device; SendRecv: the sender. -1 for the others.
  int64_t root = -1;
  // SendRecv: the receiver; -1 for the others.
  int64_t receiver = -1;

  bool operator==(const Collective& other) const = default;
};

struct CommunicationPlan {
  ReshardingPattern pattern = ReshardingPattern::Set;
  CollectiveType type = CollectiveType::Allgather;
  // All of `type`. Several when the data moves along one dimension of a 2-D
  // mesh (one per slice), for a Gather/Reduce onto several receiving
  // devices (one per receiver; a root that holds no shard contributes
  // nothing) and for SendRecv (one per shard). A device runs, in this
  // order, the collectives whose team holds it.
  std::vector<Collective> collectives;
  // The mesh dimension along which the data moves.
  ParallelType parallel_type = ParallelType::DIDx;
  // Scatter/Allgather/Gather/SendRecv/ReduceScatter: the dim of the output's
  // shape that is split into per-device blocks. PipelinedAllgatherGemm: the
  // dim of A's shape that is gathered. -1 otherwise.
  int64_t scattered_axis = -1;
  // Reduce/Allreduce/ReduceScatter: how contributions combine.
  std::optional<ReductionOpType> reduce_op;
  // ReductionOverShardedAxis: the dim of the input's shape that is reduced.
  int64_t reduced_axis = -1;
  // PipelinedAllgatherGemm: the dim of the output's shape that is
  // Stream-parallel (the chunked axis).
  int64_t stream_axis = -1;

  // The collectives whose team holds `device`, in order.
  std::vector<Collective> collectivesFor(int64_t device) const;
  std::string toString() const;
};

// Classifies a resharding expr (after the presegmentation passes) per the
// table of docs/design.md / issue 5. Throws hostir::Error naming the expr and the
// shardings involved when it reshards in a way no collective implements,
// or when it does not reshard at all.
CommunicationPlan classifyResharding(const Expr* expr);

// The plan of a matmul/linear that allgathers its first operand's rows and
// would be a PipelinedAllgatherGemm if its output had a Stream axis on those
// rows (plan.stream_axis, a position in the output's shape); nullopt for any
// other expr. What the automatic stream splits (stream_split_insertion) ask.
std::optional<CommunicationPlan> pipelinableAllgatherGemm(const Expr* expr);

// Whether `expr` is a resharding compute op that the lowering handles as is
// (reduction over the sharded axis, sharded contraction, pipelined
// allgather + GEMM), so no resharding set must be split off it.
bool isLoweredDirectly(const Expr* expr);

}  // namespace hostir
