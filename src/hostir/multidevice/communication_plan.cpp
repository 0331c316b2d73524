#include "hostir/multidevice/communication_plan.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

std::string toString(CollectiveType type) {
  switch (type) {
    case CollectiveType::Gather: return "Gather";
    case CollectiveType::Allgather: return "Allgather";
    case CollectiveType::Scatter: return "Scatter";
    case CollectiveType::Reduce: return "Reduce";
    case CollectiveType::Allreduce: return "Allreduce";
    case CollectiveType::ReduceScatter: return "ReduceScatter";
    case CollectiveType::Broadcast: return "Broadcast";
    case CollectiveType::SendRecv: return "SendRecv";
  }
  HOSTIR_ASSERT(false, "unknown CollectiveType");
}

std::string toString(ReshardingPattern pattern) {
  switch (pattern) {
    case ReshardingPattern::Set: return "Set";
    case ReshardingPattern::ReductionOverShardedAxis: return "ReductionOverShardedAxis";
    case ReshardingPattern::ShardedContraction: return "ShardedContraction";
    case ReshardingPattern::PipelinedAllgatherGemm: return "PipelinedAllgatherGemm";
  }
  HOSTIR_ASSERT(false, "unknown ReshardingPattern");
}

std::vector<Collective> CommunicationPlan::collectivesFor(int64_t device) const {
  std::vector<Collective> result;
  for (const Collective& collective : collectives) {
    if (std::find(collective.team.begin(), collective.team.end(), device) !=
        collective.team.end()) {
      result.push_back(collective);
    }
  }
  return result;
}

std::string CommunicationPlan::toString() const {
  std::stringstream ss;
  ss << "CommunicationPlan(pattern=" << hostir::toString(pattern)
     << ", type=" << hostir::toString(type) << ", along=" << hostir::toString(parallel_type);
  if (scattered_axis >= 0) {
    ss << ", scattered_axis=" << scattered_axis;
  }
  if (reduce_op.has_value()) {
    ss << ", reduce_op=" << hostir::toString(*reduce_op);
  }
  if (reduced_axis >= 0) {
    ss << ", reduced_axis=" << reduced_axis;
  }
  if (stream_axis >= 0) {
    ss << ", stream_axis=" << stream_axis;
  }
  ss << ", collectives={";
  for (size_t i = 0; i < collectives.size(); ++i) {
    const Collective& c = collectives[i];
    ss << (i ? "; " : "") << "team=(";
    for (size_t j = 0; j < c.team.size(); ++j) {
      ss << (j ? " " : "") << c.team[j];
    }
    ss << ")";
    if (c.root >= 0) {
      ss << " root=" << c.root;
    }
    if (c.receiver >= 0) {
      ss << " receiver=" << c.receiver;
    }
  }
  ss << "})";
  return ss.str();
}

namespace {

// Everything classification needs about one producer -> consumer edge.
struct Edge {
  TensorView* producer;
  TensorView* consumer;
  TensorSharding p;
  TensorSharding c;
  AxisMap map;
};

Edge edgeOf(const Expr* expr, TensorView* producer) {
  TensorView* consumer = tensorOutput(expr);
  return {producer, consumer, shardingOf(producer), shardingOf(consumer),
          mapProducerToConsumer(expr, producer)};
}

std::vector<int64_t> sortedUnion(std::vector<int64_t> devices, int64_t extra) {
  devices.push_back(extra);
  std::set<int64_t> unique(devices.begin(), devices.end());
  return {unique.begin(), unique.end()};
}

// `devices` in their order, then `extra` unless it is one of them. A
// collective that moves blocks (allgather, gather, scatter, reduce-scatter)
// gives the block at position i of its team to (or takes it from) the
// team's i-th device, so a team lists a sharded mesh's devices in mesh
// order: on the mesh {1 0}, device 1 holds block 0.
std::vector<int64_t> inMeshOrder(std::vector<int64_t> devices, int64_t extra) {
  if (std::find(devices.begin(), devices.end(), extra) == devices.end()) {
    devices.push_back(extra);
  }
  return devices;
}

// The teams of a collective along `parallel_type` of a mesh: one per slice,
// in mesh order (see inMeshOrder).
std::vector<std::vector<int64_t>> slicesAlong(const DeviceMesh& mesh, ParallelType parallel_type) {
  std::vector<std::vector<int64_t>> slices;
  for (int64_t device : mesh.vector()) {
    std::vector<int64_t> slice = mesh.getSlice(device, parallel_type);
    if (std::find(slices.begin(), slices.end(), slice) == slices.end()) {
      slices.push_back(slice);
    }
  }
  return slices;
}

// One collective per slice of the mesh; a rooted one is rooted at the
// slice's first device (every device of the slice holds the data).
void addPerSlice(CommunicationPlan& plan, const DeviceMesh& mesh, bool with_root) {
  for (std::vector<int64_t>& slice : slicesAlong(mesh, plan.parallel_type)) {
    Collective collective{plan.type, slice, with_root ? slice.front() : -1, -1};
    plan.collectives.push_back(std::move(collective));
  }
}

// A sender for a one-to-many transfer between meshes: a device of the
// sending mesh that also receives, if any (less traffic), else its first.
int64_t pickSender(const DeviceMesh& from, const DeviceMesh& to) {
  for (int64_t device : from.vector()) {
    if (to.has(device)) {
      return device;
    }
  }
  return from.vector().front();
}

int64_t shapeDim(const TensorView* tv, int64_t logical_pos) {
  return logical_pos < 0 ? -1 : logicalToShape(tv, logical_pos);
}

std::string describeExpr(const Expr* expr) {
  std::stringstream ss;
  ss << expr->toString();
  std::string text = ss.str();
  while (!text.empty() && text.back() == '\n') {
    text.pop_back();
  }
  return text;
}

[[noreturn]] void reject(const Expr* expr, const std::string& why) {
  HOSTIR_THROW("cannot lower the resharding expr\n", describeExpr(expr), "\nwith shardings ",
               describeShardings(expr), ": ", why,
               ". Supported: a set from unsharded to sharded (Scatter), from sharded to unsharded "
               "(Allgather on one mesh, Gather onto another), between meshes with the same "
               "sharding (SendRecv) or unsharded (Broadcast); a reduction over the sharded axis "
               "(Allreduce/ReduceScatter/Reduce); matmul/linear contracting a sharded K "
               "(Allreduce/ReduceScatter); matmul/linear with A sharded on its row axis and a "
               "Stream-parallel output (pipelined Allgather)");
}

bool differsAlong(const Edge& edge, ParallelType parallel_type) {
  return haveDifferentShardingsAlong(edge.p, edge.c, edge.map, parallel_type);
}

// Whether the edge agrees along every DID parallel type but `except`.
bool consistentExcept(const Edge& edge, ParallelType except) {
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    if (parallel_type != except && differsAlong(edge, parallel_type)) {
      return false;
    }
  }
  return true;
}

// The one DID parallel type along which the edge differs, if exactly one.
std::optional<ParallelType> onlyDifferingType(const Edge& edge) {
  std::optional<ParallelType> result;
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    if (!differsAlong(edge, parallel_type)) {
      continue;
    }
    if (result.has_value()) {
      return std::nullopt;
    }
    result = parallel_type;
  }
  return result;
}

CommunicationPlan classifySet(const LoadStoreOp* set) {
  Edge edge = edgeOf(set, set->in()->as<TensorView>());
  HOSTIR_CHECK(edge.p.mesh.has_value() && edge.c.mesh.has_value(), "cannot lower\n",
               describeExpr(set), "\nas a communication: ", describeShardings(set),
               "; give both tensors a device mesh");
  CommunicationPlan plan;
  plan.pattern = ReshardingPattern::Set;
  const DeviceMesh& from = *edge.p.mesh;
  const DeviceMesh& to = *edge.c.mesh;

  if (from == to) {
    std::optional<ParallelType> parallel_type = onlyDifferingType(edge);
    if (!parallel_type.has_value()) {
      reject(set, "its sharding changes along several mesh dimensions or not at all");
    }
    plan.parallel_type = *parallel_type;
    int64_t p = edge.p.axisOf(*parallel_type);
    int64_t c = edge.c.axisOf(*parallel_type);
    if (p < 0 && c >= 0) {
      plan.type = CollectiveType::Scatter;
      plan.scattered_axis = shapeDim(edge.consumer, c);
      addPerSlice(plan, from, /*with_root=*/true);
      return plan;
    }
    if (p >= 0 && c < 0) {
      plan.type = CollectiveType::Allgather;
      plan.scattered_axis = shapeDim(edge.consumer, mappedConsumerAxis(edge.map, p));
      addPerSlice(plan, from, /*with_root=*/false);
      return plan;
    }
    reject(set,
           "it moves the sharded axis to another axis (an all-to-all); reshard through an "
           "unsharded tensor instead");
  }

  bool one_dimensional = from.shape().size() == 1 && to.shape().size() == 1;
  if (!one_dimensional) {
    reject(set, "it moves data between different 2-D meshes");
  }
  plan.parallel_type = ParallelType::DIDx;
  int64_t p = edge.p.axisOf(ParallelType::DIDx);
  int64_t c = edge.c.axisOf(ParallelType::DIDx);
  if (p < 0 && c < 0) {
    plan.type = CollectiveType::Broadcast;
    int64_t root = pickSender(from, to);
    plan.collectives.push_back({plan.type, sortedUnion(to.vector(), root), root, -1});
    return plan;
  }
  if (p < 0 && c >= 0) {
    plan.type = CollectiveType::Scatter;
    plan.scattered_axis = shapeDim(edge.consumer, c);
    int64_t root = pickSender(from, to);
    plan.collectives.push_back({plan.type, inMeshOrder(to.vector(), root), root, -1});
    return plan;
  }
  if (p >= 0 && c < 0) {
    plan.type = CollectiveType::Gather;
    plan.scattered_axis = shapeDim(edge.consumer, mappedConsumerAxis(edge.map, p));
    for (int64_t receiver : to.vector()) {
      plan.collectives.push_back({plan.type, inMeshOrder(from.vector(), receiver), receiver, -1});
    }
    return plan;
  }
  if (mappedConsumerAxis(edge.map, p) == c && from.size() == to.size()) {
    plan.type = CollectiveType::SendRecv;
    plan.scattered_axis = shapeDim(edge.consumer, c);
    for (size_t i = 0; i < from.vector().size(); ++i) {
      int64_t sender = from.vector()[i];
      int64_t receiver = to.vector()[i];
      plan.collectives.push_back({plan.type, sortedUnion({sender}, receiver), sender, receiver});
    }
    return plan;
  }
  if (from.size() == 1 || to.size() == 1) {
    // A DIDx axis over one device shards nothing, but the collectives size
    // their buffers from the tensors' DIDx axes, so this is not lowered as
    // the Gather (or Scatter) it is.
    const bool onto = to.size() == 1;
    reject(set, "the tensor on the one-device mesh " + (onto ? to : from).toString() +
                    " carries a DIDx axis over 1 device, so both sides look sharded; this move " +
                    (onto ? "onto" : "from") + " that device is a " +
                    (onto ? "Gather" : "Scatter") +
                    ": declare the one-device tensor replicated (no DIDx axis) instead");
  }
  reject(set, "both sides are sharded but on different axes or over meshes of different sizes");
}

std::optional<CommunicationPlan> tryReductionOverShardedAxis(const ReductionOp* reduction) {
  Edge edge = edgeOf(reduction, reduction->in());
  if (!edge.p.mesh.has_value() || !edge.c.mesh.has_value()) {
    return std::nullopt;
  }
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    int64_t p = edge.p.axisOf(parallel_type);
    if (p < 0) {
      continue;
    }
    int64_t mapped = mappedConsumerAxis(edge.map, p);
    if (mapped < 0 ||
        !edge.consumer->getLogicalDomain()[static_cast<size_t>(mapped)]->isReduction()) {
      continue;
    }
    // The sharded axis is reduced: the rest must already agree.
    if (!consistentExcept(edge, parallel_type)) {
      return std::nullopt;
    }
    CommunicationPlan plan;
    plan.pattern = ReshardingPattern::ReductionOverShardedAxis;
    plan.parallel_type = parallel_type;
    plan.reduce_op = reduction->type();
    plan.reduced_axis = shapeDim(edge.producer, p);
    int64_t c = edge.c.axisOf(parallel_type);
    const DeviceMesh& from = *edge.p.mesh;
    const DeviceMesh& to = *edge.c.mesh;
    if (from == to) {
      plan.type = c < 0 ? CollectiveType::Allreduce : CollectiveType::ReduceScatter;
      plan.scattered_axis = shapeDim(edge.consumer, c);
      addPerSlice(plan, from, /*with_root=*/false);
      return plan;
    }
    bool one_dimensional = from.shape().size() == 1 && to.shape().size() == 1;
    if (c >= 0 || !one_dimensional) {
      return std::nullopt;
    }
    plan.type = CollectiveType::Reduce;
    for (int64_t receiver : to.vector()) {
      plan.collectives.push_back({plan.type, sortedUnion(from.vector(), receiver), receiver, -1});
    }
    return plan;
  }
  return std::nullopt;
}

// The operands a matmul/linear multiplies (not the bias).
std::pair<TensorView*, TensorView*> gemmOperands(const Expr* expr) {
  if (const auto* mm = dynamic_cast<const MatmulOp*>(expr)) {
    return {mm->a(), mm->b()};
  }
  const auto* lin = expr->as<LinearOp>();
  return {lin->in(), lin->weight()};
}

bool hasBias(const Expr* expr) {
  const auto* lin = dynamic_cast<const LinearOp*>(expr);
  return lin != nullptr && lin->hasBias();
}

bool sameMeshes(const std::vector<Edge>& edges) {
  for (const Edge& edge : edges) {
    if (!edge.p.mesh.has_value() || !edge.c.mesh.has_value() || *edge.p.mesh != *edge.c.mesh) {
      return false;
    }
  }
  return true;
}

std::optional<CommunicationPlan> tryShardedContraction(const Expr* expr) {
  auto [a, b] = gemmOperands(expr);
  Edge ea = edgeOf(expr, a);
  Edge eb = edgeOf(expr, b);
  if (hasBias(expr) || !sameMeshes({ea, eb})) {
    return std::nullopt;
  }
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    int64_t ka = ea.p.axisOf(parallel_type);
    if (ka < 0 || ka != contractedAxis(expr, a) ||
        eb.p.axisOf(parallel_type) != contractedAxis(expr, b)) {
      continue;
    }
    if (!consistentExcept(ea, parallel_type) || !consistentExcept(eb, parallel_type)) {
      return std::nullopt;
    }
    CommunicationPlan plan;
    plan.pattern = ReshardingPattern::ShardedContraction;
    plan.parallel_type = parallel_type;
    plan.reduce_op = ReductionOpType::Sum;
    int64_t c = ea.c.axisOf(parallel_type);
    plan.type = c < 0 ? CollectiveType::Allreduce : CollectiveType::ReduceScatter;
    plan.scattered_axis = shapeDim(ea.consumer, c);
    addPerSlice(plan, *ea.p.mesh, /*with_root=*/false);
    return plan;
  }
  return std::nullopt;
}

// Whether a Stream-parallel loop axis derives from the logical axis at
// `logical_pos`.
bool hasStreamAxisOn(const TensorView* tv, int64_t logical_pos) {
  const IterDomain* logical_id = tv->getLogicalDomain()[static_cast<size_t>(logical_pos)];
  for (IterDomain* loop_id : tv->getLoopDomain()) {
    if (loop_id->isStream() && logicalIdOf(tv, loop_id) == logical_id) {
      return true;
    }
  }
  return false;
}

// With `assume_stream_axis`, the plan the expr would have if its output had
// a Stream axis on the gathered rows (what the automatic stream splits ask).
std::optional<CommunicationPlan> tryPipelinedAllgatherGemm(const Expr* expr,
                                                           bool assume_stream_axis = false) {
  TensorView* a = gemmOperands(expr).first;
  std::vector<Edge> edges;
  for (TensorView* in : tensorInputs(expr)) {
    edges.push_back(edgeOf(expr, in));
  }
  if (!sameMeshes(edges)) {
    return std::nullopt;
  }
  const Edge& ea = edges.front();
  int64_t row = rowAxisOfFirstOperand(expr);
  for (ParallelType parallel_type : kDeviceParallelTypes) {
    if (row < 0 || ea.p.axisOf(parallel_type) != row) {
      continue;
    }
    int64_t out_row = mappedConsumerAxis(ea.map, row);
    // The output's rows must be gathered (whole on every device); its
    // columns may stay sharded along the same devices (sequence parallel).
    if (out_row < 0 || ea.c.axisOf(parallel_type) == out_row) {
      continue;
    }
    if (out_row < 0 || (!assume_stream_axis && !hasStreamAxisOn(ea.consumer, out_row))) {
      return std::nullopt;
    }
    // An output axis sharded along these devices must be sharded in every
    // other operand that has it (w1's N, and a bias): a replicated one would
    // give every device the whole axis, not its shard.
    if (int64_t out_sharded = ea.c.axisOf(parallel_type); out_sharded >= 0) {
      bool every_operand_sharded = std::all_of(edges.begin(), edges.end(), [&](const Edge& edge) {
        int64_t in_axis = mappedProducerAxis(edge.map, out_sharded);
        return edge.producer == a || in_axis < 0 || edge.p.axisOf(parallel_type) == in_axis;
      });
      bool some_operand_has_it = std::any_of(edges.begin(), edges.end(), [&](const Edge& edge) {
        return edge.producer != a && mappedProducerAxis(edge.map, out_sharded) >= 0;
      });
      if (!every_operand_sharded || !some_operand_has_it) {
        return std::nullopt;
      }
    }
    for (const Edge& edge : edges) {
      // Another operand may be sharded along the same devices only where it
      // keeps its sharding in the output (w1's N in a column-parallel linear).
      // A sharded contracted axis (K) has no output axis: it does not keep it.
      int64_t kept = edge.p.axisOf(parallel_type) < 0
                         ? -1
                         : mappedConsumerAxis(edge.map, edge.p.axisOf(parallel_type));
      bool other_keeps_sharding = edge.producer == a || edge.p.axisOf(parallel_type) < 0 ||
                                  (kept >= 0 && kept == edge.c.axisOf(parallel_type));
      if (!consistentExcept(edge, parallel_type) || !other_keeps_sharding) {
        return std::nullopt;
      }
    }
    CommunicationPlan plan;
    plan.pattern = ReshardingPattern::PipelinedAllgatherGemm;
    plan.type = CollectiveType::Allgather;
    plan.parallel_type = parallel_type;
    plan.scattered_axis = shapeDim(a, row);
    plan.stream_axis = shapeDim(ea.consumer, out_row);
    addPerSlice(plan, *ea.p.mesh, /*with_root=*/false);
    return plan;
  }
  return std::nullopt;
}

std::optional<CommunicationPlan> tryDirectPattern(const Expr* expr) {
  if (const auto* reduction = dynamic_cast<const ReductionOp*>(expr)) {
    return tryReductionOverShardedAxis(reduction);
  }
  if (expr->isA<MatmulOp>() || expr->isA<LinearOp>()) {
    if (auto plan = tryShardedContraction(expr)) {
      return plan;
    }
    return tryPipelinedAllgatherGemm(expr);
  }
  return std::nullopt;
}

}  // namespace

CommunicationPlan classifyResharding(const Expr* expr) {
  HOSTIR_CHECK(isResharding(expr), describeExpr(expr), "\ndoes not reshard (",
               describeShardings(expr), "); there is nothing to communicate");
  if (const auto* set = dynamic_cast<const LoadStoreOp*>(expr)) {
    return classifySet(set);
  }
  if (auto plan = tryDirectPattern(expr)) {
    return *plan;
  }
  if (hasBias(expr)) {
    reject(expr,
           "a linear contracting a sharded K must not carry a bias (each device would "
           "add it); runPresegmentationPasses moves the bias into a separate add");
  }
  reject(expr,
         "it computes and reshards at once; runPresegmentationPasses splits such an expr "
         "into the compute and a resharding set");
}

std::optional<CommunicationPlan> pipelinableAllgatherGemm(const Expr* expr) {
  if (!(expr->isA<MatmulOp>() || expr->isA<LinearOp>()) || !isResharding(expr) ||
      tryShardedContraction(expr).has_value()) {
    return std::nullopt;
  }
  return tryPipelinedAllgatherGemm(expr, /*assume_stream_axis=*/true);
}

bool isLoweredDirectly(const Expr* expr) {
  return !expr->isA<LoadStoreOp>() && isResharding(expr) && tryDirectPattern(expr).has_value();
}

}  // namespace hostir
