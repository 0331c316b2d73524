#include "sequence_parallel_layer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <cstdlib>

#include "cli_arguments.h"
#include "hostir/runtime/comm/communicator.h"
#include "launch_command.h"
#include "megatron_blocks.h"
#include "transformer_layer_reference.h"

namespace hostir::tools {

namespace {

// The arguments' checks that need no ranks, for `devices` ranks (see
// checkShardedJobOptions).
void checkOptions(const SequenceParallelLayerOptions& options, int64_t devices) {
  checkShardedJobOptions(options, devices);
  HOSTIR_CHECK(options.heads % devices == 0, "--heads (", options.heads,
               ") must divide by the number of ranks (", devices,
               "): each rank computes whole heads");
  HOSTIR_CHECK(options.hidden % options.heads == 0, "--hidden (", options.hidden,
               ") must divide by --heads (", options.heads, "): every head has hidden / heads ",
               "features");
}

int runOnRank(const SequenceParallelLayerOptions& options) {
  Communicator& communicator = Communicator::getInstance();
  const int64_t devices = communicator.size();
  const int64_t rank = communicator.deviceId();
  checkOptions(options, devices);
  const int64_t head_dim = options.hidden / options.heads;

  // Every rank draws the same full tensors and keeps its shards.
  const TransformerLayerSizes sizes{.tokens = options.tokens,
                                    .hidden = options.hidden,
                                    .heads = options.heads,
                                    .ffn = options.ffn};
  TransformerLayerTensors tensors = drawTransformerLayer(sizes, /*seed=*/0);
  ShardedJob job;
  job.build = [&](int64_t chunks) { return buildTransformerLayer(devices, head_dim, chunks); };
  job.inputs = transformerLayerLocalInputs(tensors, options.heads, devices, rank);
  job.expected =
      torchChunkPiece(transformerLayerReference(tensors, options.heads), 0, devices, rank);
  job.title = "sequence + tensor-parallel transformer layer on " + std::to_string(devices) +
              " ranks over " + options.link + ": x[" + std::to_string(options.tokens) + ", " +
              std::to_string(options.hidden) + "] sharded on tokens, " +
              std::to_string(options.heads) + " heads of " + std::to_string(head_dim) +
              " sharded over the ranks, ffn " + std::to_string(options.ffn) +
              " sharded; --chunks pipeline both halves";
  job.config = {{"heads", options.heads}};
  // --chunks auto is calibrated on the MLP block's GEMMs and collectives
  // and prices the whole layer; the count it picks chunks both halves
  // (docs/transformer_layer.md).
  job.block = transformerLayerCost(options.tokens, options.hidden, options.ffn, devices);

  // --baselines: the layer's two allgathers and two reduce-scatters through
  // raw c10d (the compute alone is the programs' own, runShardedJob's), and
  // one rank's compute as plain ATen on the gathered tokens, for reference.
  if (options.baselines) {
    job.communication_only = std::make_unique<BlockCommunication>(
        Communicator::getInstance(), job.inputs[kLayerX], options.tokens, /*blocks=*/2);
  }
  // The forward alone as plain ATen, for reference (not for --train, whose
  // step has a backward too).
  if (!options.train) {
    job.compute_only_aten = [&] {
      const std::vector<at::Tensor>& in = job.inputs;
      at::Tensor xn =
          at::layer_norm(tensors.x, {options.hidden}, in[kLayerLn1Weight], in[kLayerLn1Bias], 1e-5);
      at::Tensor q = at::matmul(xn, in[kLayerWq]);
      at::Tensor k = at::matmul(xn, in[kLayerWk]);
      at::Tensor v = at::matmul(xn, in[kLayerWv]);
      at::Tensor scores = at::matmul(q, k.transpose(1, 2)) / std::sqrt(head_dim);
      at::Tensor future = at::ones({options.tokens, options.tokens}, at::kBool).triu(1);
      at::Tensor probs = at::softmax(scores.masked_fill(future, -INFINITY), -1);
      at::Tensor h = tensors.x + at::matmul(at::matmul(probs, v), in[kLayerWo]).sum(0);
      at::Tensor hn =
          at::layer_norm(h, {options.hidden}, in[kLayerLn2Weight], in[kLayerLn2Bias], 1e-5);
      at::linear(at::gelu(at::linear(hn, in[kLayerW1])), in[kLayerW2]);
    };
  }
  if (options.train) {
    // The step's reference: single-process autograd through the usual
    // layout, whose grads are regrouped and sharded as the inputs are (the
    // regrouping is a view, so it maps grads alike).
    at::Tensor output_grad = at::randn({options.tokens, options.hidden});
    TransformerLayerTensors leaves = tensors;
    std::vector<at::Tensor*> all{
        &leaves.x,  &leaves.ln1_weight, &leaves.ln1_bias, &leaves.wq, &leaves.wk, &leaves.wv,
        &leaves.wo, &leaves.ln2_weight, &leaves.ln2_bias, &leaves.w1, &leaves.w2};
    std::vector<at::Tensor> leaf_list;
    for (at::Tensor* t : all) {
      *t = t->detach().requires_grad_();
      leaf_list.push_back(*t);
    }
    std::vector<at::Tensor> grads = torch::autograd::grad(
        {transformerLayerReference(leaves, options.heads)}, leaf_list, {output_grad});
    TransformerLayerTensors grad_tensors;
    std::vector<at::Tensor*> grad_slots{
        &grad_tensors.x,  &grad_tensors.ln1_weight, &grad_tensors.ln1_bias,
        &grad_tensors.wq, &grad_tensors.wk,         &grad_tensors.wv,
        &grad_tensors.wo, &grad_tensors.ln2_weight, &grad_tensors.ln2_bias,
        &grad_tensors.w1, &grad_tensors.w2};
    for (size_t i = 0; i < grads.size(); ++i) {
      *grad_slots[i] = grads[i];
    }
    job.output_grad = torchChunkPiece(output_grad, 0, devices, rank);
    job.expected_grads = transformerLayerLocalInputs(grad_tensors, options.heads, devices, rank);
  }
  return runShardedJob(options, job);
}

}  // namespace

SequenceParallelLayerOptions parseSequenceParallelLayerOptions(
    const std::vector<std::string>& args) {
  SequenceParallelLayerOptions options;
  options.hidden = 256;
  options.ffn = 1024;
  CLI::App app{"a sequence + tensor-parallel transformer layer (Megatron-style)",
               "hostir sp-layer"};
  addShardedJobOptions(app, options);
  app.add_option("--heads", options.heads, "attention heads (sharded over the ranks)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  if (!parseArguments(app, args, "hostir sp-layer")) {
    std::exit(0);
  }
  return options;
}

int runSequenceParallelLayer(const std::vector<std::string>& args) {
  SequenceParallelLayerOptions options = parseSequenceParallelLayerOptions(args);
  if (launchedAsRank()) {
    return runOnRank(options);
  }
  // Not launched: check what can be checked once, then start the ranks.
  checkOptions(options, options.ranks);
  return relaunchAsRanks(options.ranks, "sp-layer", args);
}

}  // namespace hostir::tools
