#include "megatron_blocks.h"

#include <cmath>
#include <vector>

#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir::tools {

namespace {

// `tv` on `mesh`, its logical axis `axis` split over the devices (an outer
// split, as a user shards a tensor into contiguous blocks).
TensorView* shardOn(TensorView* tv, const DeviceMesh& mesh, int64_t axis) {
  return shard(tv, mesh, axis, ParallelType::DIDx, /*via_outer_split=*/true);
}

TensorView* input(Fusion& fusion, int64_t ndims, const DeviceMesh& mesh, int64_t sharded_axis) {
  TensorView* tv = makeContigTensor(ndims);
  fusion.addInput(tv);
  return sharded_axis >= 0 ? shardOn(tv, mesh, sharded_axis) : shard(tv, mesh);
}

// Causal self-attention of the normalized tokens xn [T, H] (sharded on T)
// over this rank's heads, reduced over all heads into [T, H] sharded on T.
TensorView* sequenceParallelAttention(TensorView* xn, TensorView* wq, TensorView* wk,
                                      TensorView* wv, TensorView* wo, const DeviceMesh& mesh,
                                      int64_t head_dim, int64_t chunks) {
  // One allgather of the tokens feeds the three projections.
  TensorView* gathered = shard(set(xn), mesh);
  TensorView* q = shardOn(matmul(gathered, wq), mesh, 0);  // [nh, T, hd]
  TensorView* k = shardOn(matmul(gathered, wk), mesh, 0);
  TensorView* v = shardOn(matmul(gathered, wv), mesh, 0);
  if (chunks > 1) {
    // The tokens of q, k and v in chunks (loop axes [DIDx, nh/d, T, hd]):
    // the allgather is pipelined with the three projections, q's split
    // reaches the scores, the softmax and the per-head outputs
    // (propagate_stream_axes), each query chunk reads only the keys it sees
    // (causal_key_ranges), and each chunk's partial sums over the heads are
    // reduced as soon as they are computed.
    for (TensorView* projection : {q, k, v}) {
      projection->split(2, chunks, /*inner_split=*/false);
      projection->axis(2)->parallelize(ParallelType::Stream);
    }
  }
  TensorView* scores =
      mul(matmul(q, permute(k, {0, 2, 1})), 1.0 / std::sqrt(static_cast<double>(head_dim)));
  Val* tokens = xn->getLogicalDomain()[0]->extent();
  TensorView* probs = softmax(where(causalMask(tokens, tokens), scores, -INFINITY), -1);
  TensorView* heads_out = matmul(matmul(probs, v), wo);  // [nh, T, H], this rank's heads
  // The sum over the sharded heads axis: a partial sum per rank,
  // reduce-scattered onto the tokens (logical axis 1, after the reduced one).
  return shardOn(sum(heads_out, {0}), mesh, 1);
}

}  // namespace

TensorView* sequenceParallelMlp(TensorView* x, TensorView* w1, TensorView* w2,
                                const DeviceMesh& mesh, int64_t chunks) {
  TensorView* h = shardOn(linear(x, w1), mesh, 1);
  if (chunks > 1) {
    h->split(0, chunks, /*inner_split=*/false);
    h->axis(0)->parallelize(ParallelType::Stream);
  }
  return shardOn(linear(gelu(h), w2), mesh, 0);
}

std::unique_ptr<Fusion> buildSequenceParallelMlp(int64_t devices, int64_t chunks) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  // All inputs made before any is sharded: the printed names (T0, iS7, ...)
  // stay those the docs quote.
  TensorView* x = makeContigTensor(2);
  TensorView* w1 = makeContigTensor(2);
  TensorView* w2 = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addInput(w1);
  fusion->addInput(w2);
  shardOn(x, mesh, 0);
  shardOn(w1, mesh, 0);
  shardOn(w2, mesh, 1);
  fusion->addOutput(sequenceParallelMlp(x, w1, w2, mesh, chunks));
  return fusion;
}

std::unique_ptr<Fusion> buildTransformerLayer(int64_t devices, int64_t head_dim, int64_t chunks) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  DeviceMesh mesh = DeviceMesh::createForNumDevices(devices);
  // Each input's rank, in TransformerLayerInput order.
  constexpr int64_t kInputRank[kLayerInputCount] = {2, 1, 1, 3, 3, 3, 3, 1, 1, 2, 2};
  std::vector<TensorView*> in;
  for (int64_t i = 0; i < kLayerInputCount; ++i) {
    in.push_back(input(*fusion, kInputRank[i], mesh, kLayerShardedAxis[i]));
  }
  TensorView* x = in[kLayerX];
  TensorView* attention = sequenceParallelAttention(
      layerNorm(x, 1, in[kLayerLn1Weight], in[kLayerLn1Bias]), in[kLayerWq], in[kLayerWk],
      in[kLayerWv], in[kLayerWo], mesh, head_dim, chunks);
  TensorView* h = add(x, attention);
  TensorView* mlp = sequenceParallelMlp(layerNorm(h, 1, in[kLayerLn2Weight], in[kLayerLn2Bias]),
                                        in[kLayerW1], in[kLayerW2], mesh, chunks);
  fusion->addOutput(add(h, mlp));
  return fusion;
}

}  // namespace hostir::tools
