#pragma once

#include "hostir/multidevice/sharding.h"

// The rules that carry a sharding across one expr, shared by the
// propagation pass and the passes that create tensors.
namespace hostir {

// The sharding `consumer` (the expr's tensor output) gets from the expr's
// inputs: the mesh of the input with the most sharded axes (the first among
// ties) and, from every input on that mesh, each sharded axis that maps to
// a consumer axis. Not carried: an axis the expr reduces (the reduction's
// output is unsharded unless the user says so) or contracts (matmul/linear's
// K has no output axis). With `respect_consumer_loop`, consumer axes that
// are already parallelized or transformed by a Split/Merge are left alone.
TensorSharding shardingFromProducers(const Expr* expr, const TensorView* consumer,
                                     bool respect_consumer_loop);

// The sharding `producer` (a tensor input of the expr) gets from the expr's
// output: the output's mesh and each of its sharded axes that maps back to
// a producer axis.
TensorSharding shardingFromConsumer(const Expr* expr, const TensorView* producer);

// Gives `tv` the mesh and sharded axes of `sharding` (sharding through an
// outer split where `via_split` says so). Positions index tv's logical domain.
void applySharding(TensorView* tv, const TensorSharding& sharding);

}  // namespace hostir
