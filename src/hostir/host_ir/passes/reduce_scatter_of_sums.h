#pragma once

namespace hostir {

class HostIrContainer;

// Partial sums are added before they are reduced, and scattered as they are
// reduced. A tensor that several sharded contractions feed (the grad of the
// gathered layer-norm output in an attention block's backward: one dgrad
// of each of the q, k and v projections, each a sum over this device's
// heads) was lowered as one allreduce per term, a sum of the allreduced
// terms on every rank, then a scatter of the sum to the token shards:
//
//   Allreduce(P1 -> R1); Allreduce(P2 -> R2); X = R1 + R2; Scatter(X -> Y)
//
// Addition commutes with the team's sum, and a scatter of a replicated sum
// is a reduce-scatter of the summed partials, so the pass rewrites it as
//
//   X = P1 + P2; ReduceScatter(X -> Y)
//
// one collective moving (n-1)/n of one term per rank instead of n terms of
// allreduce (each twice that). Only when X is the sum of the allreduced
// terms alone (a unit of adds, or a term scattered as it is), every term a
// sum-allreduce over the scatter's team in the same scope, and nothing else
// reads a term's result or X.
void reduceScatterSums(HostIrContainer& container);

}  // namespace hostir
