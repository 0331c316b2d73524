#pragma once

#include <ATen/ATen.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/comm/block_communication.h"
#include "hostir/runtime/comm/block_costs.h"
#include "hostir/runtime/comm/chunk_choice.h"
#include "hostir/runtime/streams/number_of_streams.h"

// What the sharded main jobs (`hostir sp-mlp`, `hostir sp-layer`) share:
// their common flags and checks, and the run on a rank: build the program
// unchunked and with each requested chunk count (auto: the chunk-count
// model), print it, check every rank's output against a single-process
// reference, time the programs interleaved, and report (table, --json,
// --trace, --baselines).
namespace hostir::tools {

struct ShardedJobOptions {
  int64_t ranks = 2;
  int64_t tokens = 1024;
  int64_t hidden = 512;
  int64_t ffn = 2048;
  // Pipelined variants to run: chunk counts, "auto" (the model picks the
  // count of the annotated split) and/or "none" (no annotation: hostir's
  // automatic stream splits decide, as for a user who writes only shardings).
  std::vector<std::string> chunks = {"auto", "none"};
  int streams = runtime::kDefaultNumberOfStreams;
  int runs = 5;
  bool dump = false;
  // Also time a communication-only and a compute-only program (the ideal
  // pipelined time is the larger of the two).
  bool baselines = false;
  std::string trace_path;
  // After the timed runs, one traced run per program: what each collective
  // cost rank 0 (Executor::exposureReport).
  bool explain = false;
  std::string json_path;
  std::string link = "loopback";  // how the output names the link
  // Time a training step instead of the forward: the forward (which also
  // returns what the backward saves) and hostir's backward program
  // (autodiff/differentiate.h), checked against single-process autograd.
  bool train = false;
  // With --train: rank 0 prints what is alive at each step's peak memory, by
  // program and tensor (runtime/tensor_memory.h's trace).
  bool memory_breakdown = false;
  // With --train: what the forward keeps for the backward
  // (autodiff/differentiate.h's SavePolicy): "gemm_outputs" (the default)
  // or "gathered" (also each GEMM's gathered input: no re-gather).
  std::string save = "gemm_outputs";
};

// Adds the common flags to `app` (each with its range check).
void addShardedJobOptions(CLI::App& app, ShardedJobOptions& options);

// Everything about the common arguments that does not need the ranks, for
// `devices` ranks: run by the launching process (once, before starting any
// rank) and by every rank (which may have been started by another
// launcher). Throws hostir::Error.
// Any --tokens: the ranks hold torch.chunk's pieces of them.
void checkShardedJobOptions(const ShardedJobOptions& options, int64_t devices);

// One job on this rank.
struct ShardedJob {
  // The program for a chunk count (1: unchunked).
  std::function<std::unique_ptr<Fusion>(int64_t chunks)> build;
  std::vector<at::Tensor> inputs;  // this rank's
  at::Tensor expected;             // this rank's shard of the reference output
  // What rank 0 prints first, after "== " (the block, ranks, link, shapes).
  std::string title;
  // Extra "config" entries of the --json report (e.g. the layer's heads).
  nlohmann::json config = nlohmann::json::object();
  // --chunks auto: the pipelined part's cost per rank, and the shape of its
  // GEMM that the link calibration times.
  BlockCost block;
  // --baselines: the job's data movement through raw c10d, as the unchunked
  // program and as each chunk count's program moves it. The compute alone is
  // each program's own (Executor::runComputeOnly: its collectives replaced
  // by local copies); `compute_only_aten` is the same compute written as
  // plain ATen on whole tensors, printed next to it for reference
  // ("compute only (ATen)"), in no bound.
  std::unique_ptr<BlockCommunication> communication_only;
  std::function<void()> compute_only_aten;
  // --train: this rank's shard of the output's grad that seeds the
  // backward, and of the grad of every input (single-process autograd).
  at::Tensor output_grad;
  std::vector<at::Tensor> expected_grads;
};

// The bound of a pipelined program and how its time reads against it
// (docs/performance.md, "Fraction of the ideal gain"): the bound is the
// longer of its communication alone and its compute alone, each timed
// separately at its chunk count; the fraction of the ideal gain is
// (unchunked - program) / (unchunked - bound). A program more than
// kBoundNoise below its bound gets no fraction (it would exceed 1: the
// bound's parts were timed apart, not as the program overlaps them); one
// below it by kBoundNoise or less is at the bound, 1.00. An unchunked
// program at most kBoundNoise above the bound leaves nothing to gain (a
// fraction of a gain within the noise would be noise): none.
struct IdealGain {
  static constexpr double kBoundNoise = 0.03;
  double bound_ms = 0;
  // Set when unchunked > bound * (1 + kBoundNoise) and the program is not
  // more than kBoundNoise below the bound; at most 1.
  std::optional<double> fraction;
  // (bound - program) / bound, when the program ran below its bound.
  double below_bound = 0;
  // Nothing to gain: the unchunked program already runs at the bound.
  bool nothing_to_gain = false;
  // The line rank 0 prints after "fraction of the ideal gain, <title>: " or
  // in its place ("<title> ran 5.2 % below its measured bound ...").
  std::string describe(const std::string& title) const;
};
IdealGain idealGain(double unchunked_ms, double program_ms, double comm_only_ms,
                    double compute_only_ms);

// Runs `job` on this rank (the Communicator's); returns the exit status (0
// when every rank's check passed on this rank).
int runShardedJob(const ShardedJobOptions& options, const ShardedJob& job);

}  // namespace hostir::tools
