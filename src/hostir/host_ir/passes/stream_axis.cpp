#include "hostir/host_ir/passes/stream_axis.h"

#include <algorithm>

#include "hostir/ir/iter_domain.h"

namespace hostir {

namespace {
int64_t logicalPosition(const TensorView* tv, const IterDomain* id) {
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  auto it = std::find(logical.begin(), logical.end(), id);
  return it == logical.end() ? -1 : it - logical.begin();
}
}  // namespace

std::optional<StreamAxis> findStreamAxis(const TensorView* tv) {
  std::vector<IterDomain*> stream_ids;
  for (IterDomain* id : tv->getLoopDomain()) {
    if (id->isStream()) {
      stream_ids.push_back(id);
    }
  }
  if (stream_ids.empty()) {
    return std::nullopt;
  }
  HOSTIR_CHECK(stream_ids.size() == 1, tv->toInlineString(), " has ", stream_ids.size(),
               " Stream axes; parallelize at most one axis of a tensor with ParallelType::Stream");
  StreamAxis axis;
  axis.loop_id = stream_ids[0];
  IterDomain* logical = axis.loop_id;
  if (Expr* def = axis.loop_id->definition()) {
    HOSTIR_CHECK(!def->isA<Merge>(), "the Stream axis ", axis.loop_id->toInlineString(), " of ",
                 tv->toInlineString(),
                 " is produced by a merge; parallelize a logical axis or the outer part of a "
                 "split instead");
    const auto* split = def->as<Split>();
    HOSTIR_CHECK(split->outer() == axis.loop_id, "the Stream axis ", axis.loop_id->toInlineString(),
                 " of ", tv->toInlineString(),
                 " is the inner part of a split; parallelize the outer part instead");
    logical = split->in();
    axis.chunk_size = split->inner()->extent();
  }
  axis.logical_pos = logicalPosition(tv, logical);
  HOSTIR_CHECK(axis.logical_pos >= 0, "the Stream axis ", axis.loop_id->toInlineString(), " of ",
               tv->toInlineString(),
               " must be a logical axis or the outer part of one split of a logical axis");
  HOSTIR_CHECK(!logical->isReduction(), "the Stream axis ", axis.loop_id->toInlineString(), " of ",
               tv->toInlineString(),
               " is reduced; a reduction axis cannot be stream-parallel, parallelize an "
               "iteration axis instead");
  return axis;
}

bool sameIteration(const StreamAxis& a, const StreamAxis& b) {
  if (!a.loop_id->extent()->sameAs(b.loop_id->extent())) {
    return false;
  }
  if ((a.chunk_size == nullptr) != (b.chunk_size == nullptr)) {
    return false;
  }
  return a.chunk_size == nullptr || a.chunk_size->sameAs(b.chunk_size);
}

}  // namespace hostir
