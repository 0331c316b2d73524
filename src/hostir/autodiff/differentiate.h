#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"

// Reverse-mode differentiation of a fusion (docs/training.md): from a
// forward fusion, a forward that also returns what the backward reads, and
// a backward fusion that maps the grads of the outputs to the grads of the
// inputs. Both are ordinary fusions: they are sharded, segmented, lowered
// and run like any other, so the backward's collectives come from the same
// sharding passes as the forward's.
namespace hostir {

// What the forward keeps for the backward. Either way the forward's inputs
// are the backward's inputs too (the caller holds them), and everything
// else the backward reads is recomputed from them and from what was saved.
enum class SavePolicy {
  // Nothing but the inputs: every intermediate is recomputed (least memory;
  // GEMMs run twice).
  kRecomputeAll,
  // The results of matmul and linear (as Megatron-LM keeps them) and of
  // sums over an axis sharded across devices (a reduce-scatter's or
  // allreduce's output: recomputing it would run the collective again): the
  // GEMMs run once, pointwise ops and resharding copies (a re-gathered
  // input) are recomputed, so no gathered activation is kept between the
  // two passes.
  kSaveGemmOutputs,
  // kSaveGemmOutputs, and the gathered left operand of each GEMM that reads
  // a tensor sharded on its rows whole (the sequence-parallel tokens a
  // column-parallel linear reads): the backward reads it from the forward
  // instead of gathering it again, one allgather a step fewer for a
  // gathered [S, H] activation more in memory (torch's "pipelined-keep"
  // step; docs/training.md, "What the forward keeps"). A gather the user
  // wrote as a `set` (the attention's tokens) is gathered again as before.
  kSaveGathered,
};

// The policy `name` names, as Python's `save=` and the tools' `--save`
// spell it: "gemm_outputs", "gathered" or "nothing". Throws hostir::Error
// naming the valid ones for any other.
SavePolicy savePolicyNamed(const std::string& name);

struct DifferentiateOptions {
  // Positions of the forward's outputs to differentiate; empty: every
  // floating-point output.
  std::vector<int64_t> outputs = {};
  // Positions of the forward's inputs that need a grad; empty: every
  // floating-point tensor input.
  std::vector<int64_t> inputs = {};
  SavePolicy save = SavePolicy::kSaveGemmOutputs;
};

struct Differentiated {
  // The forward fusion's outputs, then each saved tensor that is not one of
  // them already.
  std::unique_ptr<Fusion> forward;
  // Inputs: the forward's inputs, then one grad per differentiated output
  // (shaped and sharded as that output), then the saved tensors. Outputs:
  // the grad of each input in `grad_inputs`, shaped and sharded as it.
  std::unique_ptr<Fusion> backward;
  std::vector<int64_t> differentiated_outputs;
  std::vector<int64_t> grad_inputs;
  // Per saved tensor (the backward's last inputs), its position among
  // `forward`'s outputs.
  std::vector<int64_t> saved_outputs;
};

// Throws hostir::Error naming the op when an op on the path from a grad
// input to a differentiated output has no rule, and when an option names a
// position that is not a floating-point tensor of the fusion.
Differentiated differentiate(const Fusion& fusion, const DifferentiateOptions& options = {});

}  // namespace hostir
