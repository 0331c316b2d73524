#include "transformer_layer_reference.h"

#include <cmath>

#include "hostir/multidevice/row_chunks.h"
#include "megatron_blocks.h"

namespace hostir::tools {

TransformerLayerTensors drawTransformerLayer(const TransformerLayerSizes& sizes, uint64_t seed) {
  at::manual_seed(seed);
  const int64_t h = sizes.hidden;
  const int64_t f = sizes.ffn;
  auto projection = [](int64_t out, int64_t in) {
    return at::randn({out, in}) / std::sqrt(static_cast<double>(in));
  };
  TransformerLayerTensors t;
  t.x = at::randn({sizes.tokens, h});
  t.ln1_weight = 1 + 0.1 * at::randn({h});
  t.ln1_bias = 0.1 * at::randn({h});
  t.wq = projection(h, h);
  t.wk = projection(h, h);
  t.wv = projection(h, h);
  t.wo = projection(h, h);
  t.ln2_weight = 1 + 0.1 * at::randn({h});
  t.ln2_bias = 0.1 * at::randn({h});
  t.w1 = projection(f, h);
  t.w2 = projection(h, f);
  return t;
}

at::Tensor transformerLayerReference(const TransformerLayerTensors& t, int64_t heads) {
  const int64_t tokens = t.x.size(0);
  const int64_t hidden = t.x.size(1);
  const int64_t head_dim = hidden / heads;
  // [T, H] -> [heads, T, head_dim]
  auto split_heads = [&](const at::Tensor& a) {
    return a.view({tokens, heads, head_dim}).transpose(0, 1);
  };
  at::Tensor xn = at::layer_norm(t.x, {hidden}, t.ln1_weight, t.ln1_bias, 1e-5);
  at::Tensor q = split_heads(at::linear(xn, t.wq));
  at::Tensor k = split_heads(at::linear(xn, t.wk));
  at::Tensor v = split_heads(at::linear(xn, t.wv));
  at::Tensor scores = at::matmul(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(head_dim));
  at::Tensor future = at::ones({tokens, tokens}, at::kBool).triu(1);
  at::Tensor attention = at::matmul(at::softmax(scores.masked_fill(future, -INFINITY), -1), v);
  at::Tensor h = t.x + at::linear(attention.transpose(0, 1).reshape({tokens, hidden}), t.wo);
  at::Tensor hn = at::layer_norm(h, {hidden}, t.ln2_weight, t.ln2_bias, 1e-5);
  return h + at::linear(at::gelu(at::linear(hn, t.w1)), t.w2);
}

std::vector<at::Tensor> transformerLayerFusionInputs(const TransformerLayerTensors& t,
                                                     int64_t heads) {
  const int64_t hidden = t.x.size(1);
  const int64_t head_dim = hidden / heads;
  // Head h's output features are rows [h * hd, (h + 1) * hd) of a [H, H]
  // projection: [heads, hd, H], transposed to [heads, H, hd].
  auto per_head_in = [&](const at::Tensor& w) {
    return w.view({heads, head_dim, hidden}).transpose(1, 2).contiguous();
  };
  // Head h's input features of wo are columns [h * hd, (h + 1) * hd):
  // woᵀ [H_in, H_out] viewed as [heads, hd, H].
  at::Tensor wo = t.wo.t().contiguous().view({heads, head_dim, hidden});
  return {t.x,
          t.ln1_weight,
          t.ln1_bias,
          per_head_in(t.wq),
          per_head_in(t.wk),
          per_head_in(t.wv),
          wo,
          t.ln2_weight,
          t.ln2_bias,
          t.w1,
          t.w2};
}

at::Tensor torchChunkPiece(const at::Tensor& t, int64_t dim, int64_t devices, int64_t rank) {
  const RowChunk piece = rowChunk(t.size(dim), devices, rank);
  return t.narrow(dim, piece.start, piece.rows).contiguous();
}

std::vector<at::Tensor> transformerLayerLocalInputs(const TransformerLayerTensors& t, int64_t heads,
                                                    int64_t devices, int64_t rank) {
  std::vector<at::Tensor> inputs = transformerLayerFusionInputs(t, heads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t axis = kLayerShardedAxis[i];
    if (axis >= 0) {
      inputs[i] = torchChunkPiece(inputs[i], axis, devices, rank);
    }
  }
  return inputs;
}

}  // namespace hostir::tools
