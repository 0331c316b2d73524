#include "sequence_parallel_mlp.h"

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

int runOnRank(const SequenceParallelMlpOptions& options) {
  Communicator& communicator = Communicator::getInstance();
  const int64_t devices = communicator.size();
  const int64_t rank = communicator.deviceId();
  checkShardedJobOptions(options, devices);

  // Every rank draws the same full tensors and keeps its shards.
  at::manual_seed(0);
  at::Tensor x = at::randn({options.tokens, options.hidden});
  at::Tensor w1 = at::randn({options.ffn, options.hidden}) / std::sqrt(options.hidden);
  at::Tensor w2 = at::randn({options.hidden, options.ffn}) / std::sqrt(options.ffn);
  at::Tensor reference = at::linear(at::gelu(at::linear(x, w1)), w2);
  auto rows = [&](const at::Tensor& t, int64_t dim) {
    return torchChunkPiece(t, dim, devices, rank);
  };

  ShardedJob job;
  job.build = [&](int64_t chunks) { return buildSequenceParallelMlp(devices, chunks); };
  job.inputs = {rows(x, 0), rows(w1, 0), rows(w2, 1)};
  job.expected = rows(reference, 0);
  job.title = "sequence-parallel MLP block on " + std::to_string(devices) + " ranks over " +
              options.link + ": x[" + std::to_string(options.tokens) + ", " +
              std::to_string(options.hidden) + "] sharded on tokens, w1[" +
              std::to_string(options.ffn) + ", " + std::to_string(options.hidden) + "], w2[" +
              std::to_string(options.hidden) + ", " + std::to_string(options.ffn) +
              "] sharded on ffn";
  job.block = mlpBlockCost(options.tokens, options.hidden, options.ffn, devices);

  // --baselines: the same data movement through raw c10d (the compute alone
  // is the programs' own, runShardedJob's), and the same compute as plain
  // ATen on whole tensors, for reference.
  if (options.baselines) {
    job.communication_only = std::make_unique<BlockCommunication>(
        Communicator::getInstance(), job.inputs[0], options.tokens, /*blocks=*/1);
  }
  // The forward alone as plain ATen, for reference (not for --train, whose
  // step has a backward too).
  if (!options.train) {
    job.compute_only_aten = [&] {
      at::linear(at::gelu(at::linear(x, job.inputs[1])), job.inputs[2]);
    };
  }
  if (options.train) {
    // The step's reference: single-process autograd on the whole tensors,
    // seeded by the same output grad.
    at::Tensor output_grad = at::randn({options.tokens, options.hidden});
    std::vector<at::Tensor> leaves{x.detach().requires_grad_(), w1.detach().requires_grad_(),
                                   w2.detach().requires_grad_()};
    at::Tensor y = at::linear(at::gelu(at::linear(leaves[0], leaves[1])), leaves[2]);
    std::vector<at::Tensor> grads = torch::autograd::grad({y}, leaves, {output_grad});
    job.output_grad = rows(output_grad, 0);
    job.expected_grads = {rows(grads[0], 0), rows(grads[1], 0), rows(grads[2], 1)};
  }
  return runShardedJob(options, job);
}

}  // namespace

SequenceParallelMlpOptions parseSequenceParallelMlpOptions(const std::vector<std::string>& args) {
  SequenceParallelMlpOptions options;
  CLI::App app{"the main job: a sequence-parallel transformer MLP block", "hostir sp-mlp"};
  addShardedJobOptions(app, options);
  if (!parseArguments(app, args, "hostir sp-mlp")) {
    std::exit(0);
  }
  return options;
}

int runSequenceParallelMlp(const std::vector<std::string>& args) {
  SequenceParallelMlpOptions options = parseSequenceParallelMlpOptions(args);
  if (launchedAsRank()) {
    return runOnRank(options);
  }
  // Not launched: check what can be checked once, then start the ranks.
  checkShardedJobOptions(options, options.ranks);
  return relaunchAsRanks(options.ranks, "sp-mlp", args);
}

}  // namespace hostir::tools
