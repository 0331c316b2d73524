#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hostir {

class Communicator;

// What a short calibration at start-up measures on this rank: the link of a
// team (a latency and a bandwidth fitted to two probe allgathers), how much
// of a transfer's wall time costs this rank CPU (a transfer over loopback is
// a memory copy done by the same cores that compute; one over a real or
// shaped link mostly waits), and the GEMM rate with the cores the thread
// budget gives one op.
struct LinkCalibration {
  double latency_ms = 0;
  double bandwidth_mb_per_s = 0;  // MB = 1e6 bytes, received per rank
  double comm_cpu_fraction = 0;   // in [0, 1]
  // GEMM rate per candidate chunk count (its chunk's rows): on a CPU a
  // smaller GEMM can run faster per FLOP (its operands stay in cache), so
  // chunking can pay even without a link to hide.
  std::map<int64_t, double> gemm_gflops;
  int compute_threads = 1;
  // How long a thread waits for a CPU each time it is woken, now (the
  // median of the link probe's repetitions): about 0.01 ms on a quiet
  // machine, 3-10 ms on 2 cores under a load of 10. Every chunk's
  // collectives wake a transfer thread and a stream thread that waits on
  // them (kWakesPerCollective), and on a loaded machine those waits are
  // what a chunked program loses.
  double wake_wait_ms = 0;
};

// The threads each collective of a chunk wakes: the one that moves it and
// the stream's that waits for it.
constexpr int64_t kWakesPerCollective = 2;

// The per-rank cost of one pipelined program, whole (before chunking).
struct PipelineCost {
  double link_bytes = 0;  // bytes each rank moves over the link
  double flops = 0;       // floating-point operations each rank computes
  int64_t collectives_per_chunk = 1;
  int64_t ops_per_chunk = 1;  // compute ops each chunk enqueues
  // What each rank computes with C chunks, where that is not `flops`: a
  // chunked program can compute less than the whole one (a causal softmax
  // in a query loop reads only the keys each tile of queries sees, and
  // without a loop it reads them all).
  std::map<int64_t, double> flops_by_chunks;
  // The causal attention's scores (q·kᵀ and p·v over every key for every
  // query: `flops` of them over `tokens` queries), where a chunked program
  // computes only what each tile of query rows sees: with C >= 2 chunks, a
  // fraction (n + 1) / 2n of them for its n tiles of
  // min(kCausalQueryTileRows, tokens / C) rows (at least one). Any C.
  struct CausalScores {
    double flops = 0;
    int64_t tokens = 0;
  } causal_scores;
  // The host thread's instructions per chunk (the program's walk: views,
  // posts, waits); 0: ops_per_chunk x kHostInstructionsPerOp.
  int64_t host_instructions_per_chunk = 0;

  // What each rank computes with `chunks` chunks: flops_by_chunks' entry,
  // else `flops` less the causal scores a query loop skips.
  double flopsWith(int64_t chunks) const;
  // The host thread's time per chunk, in ms.
  double hostMsPerChunk() const;
};

// The host thread's time per host instruction: bench_host_overhead's
// HostIr/16 (0.55-0.56 µs, docs/performance.md, "Issue 18, item 3: met").
constexpr double kHostMicrosecondsPerInstruction = 0.56;
// Host instructions per compute op where a cost does not count them: the
// main jobs' pipelined programs have 28 per chunk for the MLP's 6 ops and
// 127 for the layer's 16 (HOSTIR_DUMP=host_ir, 4 chunks): 8 per op at most.
constexpr int64_t kHostInstructionsPerOp = 8;

// A [rows, cols] operand for a GEMM-rate probe, every element 1/sqrt(cols)
// (a product of two stays O(1): no overflow, no denormals). A BLAS GEMM's
// time does not depend on its values, and a constant fill costs a quarter of
// at::randn's (22 vs 6 ms for 1024 x 2048 on one AVX2 core), which the
// planner paid per candidate (docs/performance.md, "Planning time on AVX2").
// It draws nothing, so torch's default generator (the user's seed) is left
// as it was: ranks probe different GEMMs, and draws from it made their next
// torch.randn differ.
at::Tensor probeOperand(int64_t rows, int64_t cols);

// The GEMM rate, in GFLOP/s, of `flops` timed `milliseconds` (one GEMM
// each): the fastest timing's. A GEMM slowed by other processes makes
// compute look longer, and longer compute hides more of a transfer, so a
// slowed GEMM probe would argue for chunking as a slowed link probe does.
double gemmGflopsFromTimes(double flops, const std::vector<double>& milliseconds);

// The least predicted gain, in milliseconds, that chunking must bring.
constexpr double kMinimumGainMs = 1.0;

struct ChunkChoice {
  int64_t chunks = 1;
  std::string reason;
  LinkCalibration inputs;
  std::map<int64_t, double> predicted_ms;  // per candidate
  // Of predicted_ms, the time no compute hides (the first chunk's transfer,
  // and each later chunk's transfer beyond its predecessor's compute): what
  // the measured exposure (Executor::exposureReport) is to be read against.
  std::map<int64_t, double> predicted_exposed_ms;
};

// Probes `team`'s link (allgathers of 64 KiB and 4 MiB per rank, repeated,
// on the team's process group; linkFromProbes reads them) and, for each
// candidate chunk count C, a GEMM of [gemm_m / C, gemm_k] x [gemm_k, gemm_n]
// (one chunk's, its fastest of 2). Every member must call it (it posts
// collectives).
LinkCalibration calibrate(Communicator& communicator, const std::vector<int64_t>& team,
                          int64_t gemm_m, int64_t gemm_k, int64_t gemm_n,
                          const std::vector<int64_t>& candidates);

// Timed allgathers of one size: each rank's piece and the wall and process
// CPU time of each repetition (warm-up dropped), and, per repetition, the
// most time one thread of any member spent runnable but waiting for a CPU
// (the kernel's run_delay; empty where the kernel does not report it).
struct LinkProbeSamples {
  int64_t floats_per_rank = 0;
  std::vector<double> wall_ms;
  std::vector<double> cpu_ms;
  std::vector<double> cpu_wait_ms;
  // Per repetition, the mean time a thread waited for a CPU each time it
  // was given one (run_delay over time slices; the members' most).
  std::vector<double> wake_wait_ms;
};

// The link model from probes of a small and a large size across `members`
// ranks. A repetition's link time is its wall time less its cpu_wait_ms: on
// a loaded machine a transfer waits for the CPUs that run it (on loopback,
// the copies; anywhere, the peer's sends), and that wait is no link a
// chunk's compute could hide; all of it, not some repetitions, so the
// fastest repetition alone still read a loopback at 12-100 MB/s with a
// quarter of its time on a CPU, and the model chunked small programs that
// then ran up to 3x slower. Of those link times it reads the fastest
// repetition of each size: other processes only ever add time to a probe
// (a median of 3 moved with two disturbed repetitions). The CPU share is
// of the link time. Throws when a size has no samples.
LinkCalibration linkFromProbes(const LinkProbeSamples& small, const LinkProbeSamples& large,
                               int64_t members, int compute_threads);

// calibrate's link half alone (a property of the team, measured once; the
// automatic stream splits cache it per process).
LinkCalibration calibrateLink(Communicator& communicator, const std::vector<int64_t>& team);

// The model: per chunk, compute takes flops(C) / C / rate(C) plus the host
// thread's time (PipelineCost::hostMsPerChunk), the link takes latency + bytes / C / bandwidth per
// collective, and a transfer also costs this rank comm_cpu_fraction of its
// wall time in CPU. A chunk's compute overlaps the next chunk's transfer, so
//   T(C) = link(C) + compute(C) + (C - 1) * max(compute(C) + cpu(C), link(C))
//          + C * collectives_per_chunk * kWakesPerCollective * wake_wait_ms
// with cpu(C) = comm_cpu_fraction * link(C). Picks the candidate with the
// least T (ties go to fewer chunks), and 1 unless that beats one chunk by at
// least 2 % and at least kMinimumGainMs: when the link is so cheap or so
// CPU-bound that chunking cannot win, or wins too little to pay for what the
// model does not see.
ChunkChoice chooseChunks(const PipelineCost& cost, const LinkCalibration& link,
                         const std::vector<int64_t>& candidates);

// chooseChunks with rank 0's choice broadcast, so every rank runs the same
// program even though each measured its own link.
ChunkChoice agreeOnChunks(Communicator& communicator, const std::vector<int64_t>& team,
                          const PipelineCost& cost, const LinkCalibration& link,
                          const std::vector<int64_t>& candidates);

}  // namespace hostir
