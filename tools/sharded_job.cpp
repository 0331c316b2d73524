#include "sharded_job.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cli_arguments.h"
#include "hostir/autodiff/differentiate.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/pack_cache.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/streams/thread_budget.h"
#include "hostir/runtime/streams/tracer.h"
#include "hostir/runtime/target_detection.h"
#include "hostir/runtime/tensor_memory.h"

namespace hostir::tools {

namespace {

struct Program {
  std::string name;  // "pipelined", "pipelined-auto", "automatic", "unchunked"
  // "automatic": built without a Stream split; the executors' automatic
  // stream splits choose, at the first run, what to chunk (`chunks` is then
  // the forward's chunk count).
  int64_t chunks = 1;
  std::unique_ptr<Fusion> fusion;
  std::unique_ptr<MultiDeviceExecutor> executor;
  // --train: `executor` runs the differentiated forward (the outputs, then
  // the saved tensors) and `backward` the backward program.
  std::optional<Differentiated> differentiated;
  std::unique_ptr<MultiDeviceExecutor> backward;

  // The forward's outputs, or with --train one step's grads of the inputs.
  // What each program allocates is named after it (--memory-breakdown).
  std::vector<at::Tensor> run(const ShardedJob& job) const {
    static const std::string forward_site = "forward", backward_site = "backward";
    std::vector<at::Tensor> outputs;
    {
      const runtime::AllocationSite site(&forward_site);
      outputs = executor->run(job.inputs);
    }
    const runtime::AllocationSite site(&backward_site);
    return backward ? backward->run(backwardInputs(job, outputs)) : outputs;
  }
  // run() with the tracer recording; then each executor's exposureReport()
  // says what its collectives cost this rank (--explain).
  void runMeasuringExposure(const ShardedJob& job) const {
    std::vector<at::Tensor> outputs = executor->runMeasuringExposure(job.inputs);
    if (backward) {
      backward->runMeasuringExposure(backwardInputs(job, outputs));
    }
  }
  // The same with every collective replaced by a local copy.
  void runComputeOnly(const ShardedJob& job) const {
    std::vector<at::Tensor> outputs = executor->runComputeOnly(job.inputs);
    if (backward) {
      backward->runComputeOnly(backwardInputs(job, outputs));
    }
  }
  // The same with every compute op skipped: its collectives alone.
  void runCommunicationOnly(const ShardedJob& job) const {
    std::vector<at::Tensor> outputs = executor->runCommunicationOnly(job.inputs);
    if (backward) {
      backward->runCommunicationOnly(backwardInputs(job, outputs));
    }
  }
  // Lets go of the buffers both executors keep for later runs.
  void releasePooledBuffers() const {
    executor->evaluator().releasePooledBuffers();
    if (backward) {
      backward->evaluator().releasePooledBuffers();
    }
  }
  std::vector<at::Tensor> backwardInputs(const ShardedJob& job,
                                         const std::vector<at::Tensor>& outputs) const {
    std::vector<at::Tensor> inputs = job.inputs;
    inputs.push_back(job.output_grad);
    for (int64_t saved : differentiated->saved_outputs) {
      inputs.push_back(outputs.at(static_cast<size_t>(saved)));
    }
    return inputs;
  }
};

// max |got - want| / max |want| over every tensor, and whether each is
// within `tolerance` of its own largest value.
std::pair<double, bool> relativeDifference(const std::vector<at::Tensor>& got,
                                           const std::vector<at::Tensor>& want, double tolerance) {
  double worst = 0;
  bool close = got.size() == want.size();
  for (size_t i = 0; close && i < got.size(); ++i) {
    close = got[i].sizes() == want[i].sizes();
    if (!close || want[i].numel() == 0) {
      continue;  // a rank torch.chunk leaves no rows has nothing to compare
    }
    const double scale = std::max(want[i].abs().max().item<double>(), 1e-30);
    const double diff = (got[i] - want[i]).abs().max().item<double>() / scale;
    worst = std::max(worst, diff);
    close = diff <= tolerance;
  }
  return {worst, close};
}

std::string programTitle(const Program& program) {
  if (program.name == "unchunked") {
    return "unchunked";
  }
  if (program.name == "automatic") {
    const int64_t chunks = program.executor->automaticChunks();
    return chunks == 1 ? "automatic (not chunked)"
                       : "automatic (" + std::to_string(chunks) + " chunks)";
  }
  return (program.name == "pipelined-auto" ? "pipelined, auto (" : "pipelined (") +
         std::to_string(program.chunks) + " chunks)";
}

std::vector<double> timedRuns(int runs, Communicator& communicator,
                              const std::function<void()>& body) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    // Each run starts when every rank is ready and ends when every rank is
    // done.
    communicator.barrier();
    auto start = std::chrono::steady_clock::now();
    body();
    communicator.barrier();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return times;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

nlohmann::json autoReport(const ChunkChoice& choice) {
  nlohmann::json predicted;
  for (const auto& [chunks, ms] : choice.predicted_ms) {
    predicted[std::to_string(chunks)] = ms;
  }
  const LinkCalibration& link = choice.inputs;
  nlohmann::json rates;
  for (const auto& [chunks, rate] : link.gemm_gflops) {
    rates[std::to_string(chunks)] = rate;
  }
  return {{"chunks", choice.chunks},
          {"reason", choice.reason},
          {"predicted_ms", predicted},
          {"inputs",
           {{"bandwidth_MBps", link.bandwidth_mb_per_s},
            {"latency_ms", link.latency_ms},
            {"comm_cpu_fraction", link.comm_cpu_fraction},
            {"wake_wait_ms", link.wake_wait_ms},
            {"gemm_gflops", link.gemm_gflops.at(choice.chunks)},
            {"gemm_gflops_by_chunks", rates}}}};
}

// A row of the time table: the title left in a column of kTitleWidth.
constexpr int kTitleWidth = 34;
std::ostream& row(const std::string& title, double value, const char* unit = "ms") {
  return std::cout << "  " << std::left << std::setw(kTitleWidth) << title << std::right
                   << std::fixed << std::setprecision(1) << std::setw(9) << value << " " << unit;
}

std::string withChunks(const std::string& title, int64_t chunks) {
  return chunks == 1 ? title : title + ", " + std::to_string(chunks) + " chunks";
}

}  // namespace

IdealGain idealGain(double unchunked_ms, double program_ms, double comm_only_ms,
                    double compute_only_ms) {
  IdealGain gain;
  gain.bound_ms = std::max(comm_only_ms, compute_only_ms);
  if (program_ms < gain.bound_ms) {
    gain.below_bound = (gain.bound_ms - program_ms) / gain.bound_ms;
  }
  if (unchunked_ms <= gain.bound_ms * (1 + IdealGain::kBoundNoise)) {
    gain.nothing_to_gain = true;
    return gain;
  }
  if (gain.below_bound <= IdealGain::kBoundNoise) {
    gain.fraction = std::min(1.0, (unchunked_ms - program_ms) / (unchunked_ms - gain.bound_ms));
  }
  return gain;
}

std::string IdealGain::describe(const std::string& title) const {
  std::ostringstream line;
  line << std::fixed << std::setprecision(2);
  if (fraction.has_value()) {
    line << "fraction of the ideal gain, " << title << ": " << *fraction;
    if (below_bound > 0) {
      line << std::setprecision(1) << " (at the bound: " << 100 * below_bound
           << " % below it, within the " << 100 * kBoundNoise << " % noise)";
    }
  } else if (below_bound > kBoundNoise) {
    line << std::setprecision(1) << title << " ran " << 100 * below_bound
         << " % below its measured bound (" << bound_ms
         << " ms, the longer of its communication alone and its compute alone): those were "
            "timed apart, not overlapped as the program runs them, so no fraction of the "
            "ideal gain";
  } else {
    line << std::setprecision(1) << "fraction of the ideal gain, " << title
         << ": none (the unchunked program is already at the bound, " << bound_ms
         << " ms, within the noise)";
  }
  return line.str();
}

void addShardedJobOptions(CLI::App& app, ShardedJobOptions& options) {
  // A positive extent (CLI::PositiveNumber's message would print the double range).
  auto positive = CLI::Range(int64_t{1}, int64_t{1} << 40);
  app.add_option("--ranks", options.ranks, "ranks to start when not launched")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  app.add_option("--tokens", options.tokens, "rows of x (sequence length)")->check(positive);
  app.add_option("--hidden", options.hidden, "columns of x")->check(positive);
  app.add_option("--ffn", options.ffn, "the MLP's inner width")->check(positive);
  app.add_option("--chunks", options.chunks,
                 "pipelined variants: chunk counts, auto (the model picks the count of the "
                 "annotated split) and/or none (no annotation: hostir decides what to pipeline), "
                 "e.g. 4,8,auto,none")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "none"}) | CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--streams", options.streams, "worker streams")
      ->check(CLI::Range(1, static_cast<int>(runtime::StreamPool::kMaxStreamIndex)));
  app.add_option("--runs", options.runs, "timed runs per program (median)")
      ->check(CLI::Range(1, 10000));
  app.add_flag("--dump", options.dump, "also print the unchunked host program");
  app.add_flag("--baselines", options.baselines,
               "also time communication-only and compute-only programs");
  app.add_option("--trace", options.trace_path,
                 "trace the first pipelined variant into PATH.rankN.json");
  app.add_flag("--explain", options.explain,
               "after the timed runs, one traced run per program: per collective, how long the "
               "streams waited for it and how much of that no compute hid (rank 0's)");
  app.add_option("--json", options.json_path, "write the figures as JSON (rank 0)");
  app.add_option("--link", options.link, "how the output names the link");
  app.add_flag("--train", options.train,
               "time a training step (forward + hostir's backward), check every input's grad");
  app.add_flag("--memory-breakdown", options.memory_breakdown,
               "with --train: print what is alive at each step's peak memory, by tensor (rank 0)");
  app.add_option("--save", options.save,
                 "with --train: what the forward keeps for the backward: gemm_outputs (GEMM "
                 "results; the backward gathers its inputs again) or gathered (also each GEMM's "
                 "gathered input: one allgather a step fewer, more memory)")
      ->check(CLI::IsMember({"gemm_outputs", "gathered"}));
}

void checkShardedJobOptions(const ShardedJobOptions& options, int64_t devices) {
  HOSTIR_CHECK(options.ffn % devices == 0, "--ffn (", options.ffn,
               ") must divide by the number of ranks (", devices, ")");
  // Any --tokens: tokens the ranks do not divide are torch.chunk's pieces
  // (the first ranks hold ceil(tokens / ranks) rows, the last fewer).
  // Any chunk count (--chunks' range) is fine: chunk j of a rank's rows
  // holds ceilDiv(rows, chunks) of them, the last ones fewer or none.
  checkOutputFolder("--trace", options.trace_path);
  checkOutputFolder("--json", options.json_path);
}

namespace {

// The pipelined programs the options ask for, then the unchunked one.
struct Programs {
  std::vector<Program> programs;
  std::optional<ChunkChoice> auto_choice;
};

Programs buildPrograms(const ShardedJobOptions& options, const ShardedJob& job,
                       Communicator& communicator, int64_t local_rows) {
  // auto chooses among the usual powers of two that leave no chunk of a
  // rank's rows empty (an empty chunk is a loop iteration for nothing).
  std::vector<int64_t> candidates;
  for (int64_t chunks : {1, 2, 4, 8, 16}) {
    if (chunks <= local_rows) {
      candidates.push_back(chunks);
    }
  }
  const std::vector<int64_t> world = communicator.worldTeam();
  Programs built;
  for (const std::string& request : options.chunks) {
    Program program;
    if (request == "auto") {
      LinkCalibration link = calibrate(communicator, world, job.block.gemm_m, job.block.gemm_k,
                                       job.block.gemm_n, candidates);
      built.auto_choice = agreeOnChunks(communicator, world, job.block.cost, link, candidates);
      program.name = "pipelined-auto";
      program.chunks = built.auto_choice->chunks;
    } else if (request == "none") {
      program.name = "automatic";
    } else {
      program.name = "pipelined";
      program.chunks = std::stoll(request);
    }
    built.programs.push_back(std::move(program));
  }
  Program unchunked;
  unchunked.name = "unchunked";
  built.programs.push_back(std::move(unchunked));
  for (Program& program : built.programs) {
    // Only the "automatic" program has its Stream splits chosen by hostir;
    // the others run as written, whatever HOSTIR_OVERLAP says.
    MultiDeviceExecutorParams params{.number_of_streams = options.streams,
                                     .automatic_stream_splits = program.name == "automatic"};
    program.fusion = job.build(program.chunks);
    if (options.train) {
      program.differentiated =
          differentiate(*program.fusion, {.save = savePolicyNamed(options.save)});
      program.executor = std::make_unique<MultiDeviceExecutor>(*program.differentiated->forward,
                                                               communicator, params);
      program.backward = std::make_unique<MultiDeviceExecutor>(*program.differentiated->backward,
                                                               communicator, params);
    } else {
      program.executor =
          std::make_unique<MultiDeviceExecutor>(*program.fusion, communicator, params);
    }
  }
  return built;
}

// The first program's fusion and host programs (and the unchunked one's with
// --dump), on rank 0.
void printPrograms(const ShardedJobOptions& options, const Programs& built) {
  if (built.auto_choice) {
    std::cout << "auto chunks: " << built.auto_choice->chunks << " (" << built.auto_choice->reason
              << ")\n";
  }
  const Program& shown = built.programs.front();
  shown.fusion->print();
  std::cout << "== host program, " << programTitle(shown) << ":\n"
            << shown.executor->hostProgram().toString();
  if (shown.backward) {
    std::cout << "== backward host program, " << programTitle(shown) << ":\n"
              << shown.backward->hostProgram().toString();
  }
  if (options.dump) {
    const Program& unchunked = built.programs.back();
    std::cout << "== without stream chunking:\n" << unchunked.executor->hostProgram().toString();
    if (unchunked.backward) {
      std::cout << "== backward without stream chunking:\n"
                << unchunked.backward->hostProgram().toString();
    }
  }
}

// Each program's first run, checked against single-process ATen (or, with
// --train, autograd), and how many of its GEMMs ran with oneDNN post-ops.
struct Checks {
  bool ok = true;
  std::map<const Program*, bool> close;
  std::map<const Program*, int64_t> post_op_gemms;
};

Checks checkPrograms(const ShardedJobOptions& options, const ShardedJob& job,
                     const std::vector<Program>& programs) {
  Checks checks;
  for (const Program& program : programs) {
    const int64_t post_ops_before = gemmsWithPostOpsRun();
    std::vector<at::Tensor> results = program.run(job);
    checks.post_op_gemms[&program] = gemmsWithPostOpsRun() - post_ops_before;
    bool close = false;
    if (options.train) {
      // Every input's grad within 1e-4 of its largest value.
      const auto [worst, within] = relativeDifference(results, job.expected_grads, 1e-4);
      close = within;
      std::cout << "check " << programTitle(program)
                << " step's grads of every input against single-process autograd: max |diff| / "
                   "max |grad| = "
                << worst << " " << (close ? "OK" : "MISMATCH") << "\n";
    } else {
      at::Tensor out = results.at(0);
      double diff = out.numel() == 0 ? 0.0 : (out - job.expected).abs().max().item<double>();
      close = at::allclose(out, job.expected, 1e-4, 1e-4);
      std::cout << "check " << programTitle(program)
                << " against single-process ATen: max |diff| = " << diff << " "
                << (close ? "OK" : "MISMATCH") << "\n";
    }
    checks.close[&program] = close;
    checks.ok = checks.ok && close;
  }
  return checks;
}

// Every timed run: the programs' and, with --baselines, per chunk count the
// communication alone and the compute alone (and the compute as plain ATen).
struct Timings {
  std::vector<std::vector<double>> programs;  // per program
  std::vector<int64_t> comm_chunks;           // the chunk counts of the baselines
  bool comm_measured = false;
  std::vector<std::vector<double>> comm;     // per comm_chunks
  std::vector<std::vector<double>> compute;  // per comm_chunks
  // --train: the backward program's collectives alone, and the bytes they
  // send from this rank (collectiveBytesSent), per comm_chunks.
  std::vector<std::vector<double>> backward_comm;
  std::vector<int64_t> backward_sent_bytes;
  std::vector<double> aten;
  // --train: per program, the peak tensor bytes of one step (stepMemory).
  std::vector<int64_t> step_bytes;
  // --train: what the buffer pool kept in its reserve after the timed steps
  // (memory no tensor uses, kept for the next step; not in step_bytes).
  int64_t pool_reserve_bytes = 0;

  // A baseline of the program of `chunks` chunks: its own (every chunk
  // count's is timed).
  double baselineMs(const std::vector<std::vector<double>>& all, int64_t chunks) const {
    auto found = std::ranges::find(comm_chunks, chunks);
    return median(all[static_cast<size_t>(found - comm_chunks.begin())]);
  }
};

// --baselines: the communication alone as the unchunked program moves it and
// as each chunked program (auto's too) does, and each of those programs'
// compute alone (its collectives replaced by local copies), plus the compute
// as plain ATen for reference. The communication alone is the block's bytes
// moved by hand through raw c10d (BlockCommunication), or for a training
// step, whose collectives no hand-written program moves, each step's own
// collectives with its compute skipped (Executor::runCommunicationOnly).
// Runs of the programs and of the baselines interleave, so a change in the
// machine's load hits them alike (a bound timed under another load than its
// program would not bound it), and the programs take turns in each position.
Timings timePrograms(const ShardedJobOptions& options, const ShardedJob& job,
                     const std::vector<Program>& programs, Communicator& communicator) {
  Timings timings;
  timings.comm_chunks = {1};
  for (const Program& program : programs) {
    if (program.chunks > 1 &&
        std::ranges::find(timings.comm_chunks, program.chunks) == timings.comm_chunks.end()) {
      timings.comm_chunks.push_back(program.chunks);
    }
  }
  std::ranges::sort(timings.comm_chunks);
  // The program that computes alone for each chunk count.
  std::vector<const Program*> compute_programs;
  for (int64_t chunks : timings.comm_chunks) {
    compute_programs.push_back(&*std::ranges::find(programs, chunks, &Program::chunks));
  }
  timings.comm_measured = options.train || job.communication_only != nullptr;
  timings.comm.resize(timings.comm_chunks.size());
  timings.compute.resize(timings.comm_chunks.size());
  timings.backward_comm.resize(options.train ? timings.comm_chunks.size() : 0);
  timings.backward_sent_bytes.resize(timings.backward_comm.size());
  timings.programs.resize(programs.size());
  auto timeOnce = [&](const std::function<void()>& body) {
    return timedRuns(1, communicator, body).front();
  };
  for (int run = 0; run < options.runs; ++run) {
    // Each run starts one program later: the program timed first after the
    // previous run's last ran up to 1.18x slower on the same program
    // (docs/performance.md, "The automatic splits on a real AVX2 machine").
    for (size_t k = 0; k < programs.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(run)) % programs.size();
      timings.programs[i].push_back(timeOnce([&] { programs[i].run(job); }));
    }
    if (!options.baselines) {
      continue;
    }
    for (size_t i = 0; i < timings.comm_chunks.size(); ++i) {
      if (timings.comm_measured) {
        timings.comm[i].push_back(timeOnce([&] {
          if (options.train) {
            compute_programs[i]->runCommunicationOnly(job);
          } else {
            job.communication_only->run(timings.comm_chunks[i]);
          }
        }));
      }
      timings.compute[i].push_back(timeOnce([&] { compute_programs[i]->runComputeOnly(job); }));
      if (options.train) {
        // The backward's alone, on the saved tensors of a forward moved alone
        // (untimed): the bound for the backward is its bytes' link time.
        const Program& program = *compute_programs[i];
        const std::vector<at::Tensor> backward_inputs =
            program.backwardInputs(job, program.executor->runCommunicationOnly(job.inputs));
        const int64_t sent_before = collectiveBytesSent();
        timings.backward_comm[i].push_back(
            timeOnce([&] { program.backward->runCommunicationOnly(backward_inputs); }));
        timings.backward_sent_bytes[i] = collectiveBytesSent() - sent_before;
      }
    }
    if (job.compute_only_aten) {
      timings.aten.push_back(timeOnce(job.compute_only_aten));
    }
  }
  return timings;
}

// --train: the peak memory of one step of each program on this rank, as
// benchmarks/overlap's torch steps measure theirs (docs/training.md, "Peak
// memory of a step"): the most bytes of CPU tensor memory alive at once
// during the step above those alive before it, counted at c10's CPU
// allocator. Every program's pooled buffers are let go first, with the
// pack-cache entries of operands that lived in them, so the step makes its
// buffers anew. A pooled buffer counts while a tensor holds it; what the
// pool keeps for the next step does not (printed apart: its reserve).
// --memory-breakdown: rank 0 prints what is alive at each peak.
std::vector<int64_t> stepMemory(const ShardedJobOptions& options, const ShardedJob& job,
                                const std::vector<Program>& programs, Communicator& communicator) {
  runtime::countTensorMemory();
  runtime::traceTensorMemory(options.memory_breakdown);
  std::vector<int64_t> bytes;
  for (const Program& program : programs) {
    for (const Program& each : programs) {
      each.releasePooledBuffers();
    }
    // The packings of operands that lived in those buffers go now, not
    // inside the step (where their memory would be subtracted from it).
    dropStalePackCacheEntries();
    communicator.barrier();
    bytes.push_back(runtime::peakTensorBytesOf([&] { program.run(job); }));
    if (options.memory_breakdown && communicator.deviceId() == 0) {
      std::cout << "alive at the peak of a step, " << programTitle(program)
                << " (made during the step; by program and tensor):\n"
                << runtime::describeLiveAtPeak();
    }
  }
  runtime::traceTensorMemory(false);
  return bytes;
}

// The fraction of the ideal gain of each pipelined program (empty without
// --baselines or a measured communication).
std::vector<std::optional<IdealGain>> idealGains(const ShardedJobOptions& options,
                                                 const std::vector<Program>& programs,
                                                 const Timings& timings) {
  std::vector<std::optional<IdealGain>> gains(programs.size());
  if (!options.baselines || !timings.comm_measured) {
    return gains;
  }
  const double unchunked_ms = median(timings.programs.back());
  for (size_t i = 0; i + 1 < programs.size(); ++i) {
    const int64_t chunks = programs[i].chunks;
    gains[i] = idealGain(unchunked_ms, median(timings.programs[i]),
                         timings.baselineMs(timings.comm, chunks),
                         timings.baselineMs(timings.compute, chunks));
  }
  return gains;
}

void addTimingsToReport(const std::vector<Program>& programs, const Checks& checks,
                        const Timings& timings, const std::vector<std::optional<IdealGain>>& gains,
                        nlohmann::json& report) {
  report["programs"] = nlohmann::json::array();
  for (size_t i = 0; i < programs.size(); ++i) {
    nlohmann::json entry{{"name", programs[i].name},
                         {"chunks", programs[i].chunks},
                         {"median_ms", median(timings.programs[i])},
                         {"runs_ms", timings.programs[i]},
                         {"check", checks.close.at(&programs[i])},
                         {"gemms_with_post_ops", checks.post_op_gemms.at(&programs[i])}};
    if (!timings.step_bytes.empty()) {
      entry["peak_step_bytes"] = timings.step_bytes[i];
    }
    if (gains[i]) {
      entry["bound_ms"] = gains[i]->bound_ms;
      entry["ideal_gain_fraction"] =
          gains[i]->fraction ? nlohmann::json(*gains[i]->fraction) : nlohmann::json(nullptr);
      entry["below_bound"] = gains[i]->below_bound;
    }
    report["programs"].push_back(entry);
  }
  for (const auto& [name, all_times] :
       {std::pair{"comm-only", &timings.comm}, std::pair{"compute-only", &timings.compute}}) {
    for (size_t i = 0; i < timings.comm_chunks.size() && !(*all_times)[i].empty(); ++i) {
      nlohmann::json entry{
          {"name", name}, {"median_ms", median((*all_times)[i])}, {"runs_ms", (*all_times)[i]}};
      if (timings.comm_chunks[i] > 1) {
        entry["chunks"] = timings.comm_chunks[i];
      }
      report["programs"].push_back(entry);
    }
  }
  for (size_t i = 0; i < timings.backward_comm.size() && !timings.backward_comm[i].empty(); ++i) {
    nlohmann::json entry{{"name", "comm-only-backward"},
                         {"median_ms", median(timings.backward_comm[i])},
                         {"runs_ms", timings.backward_comm[i]},
                         {"sent_bytes", timings.backward_sent_bytes[i]}};
    if (timings.comm_chunks[i] > 1) {
      entry["chunks"] = timings.comm_chunks[i];
    }
    report["programs"].push_back(entry);
  }
  if (!timings.aten.empty()) {
    report["programs"].push_back({{"name", "compute-only-aten"},
                                  {"median_ms", median(timings.aten)},
                                  {"runs_ms", timings.aten}});
  }
}

void printTimings(const ShardedJobOptions& options, const std::vector<Program>& programs,
                  const Timings& timings, const std::vector<std::optional<IdealGain>>& gains) {
  const double unchunked_ms = median(timings.programs.back());
  std::cout << (options.train ? "time of one training step, forward + backward (median of "
                              : "time (median of ")
            << options.runs << " runs, link: " << options.link << "):\n";
  for (size_t i = 0; i < programs.size(); ++i) {
    const double ms = median(timings.programs[i]);
    row(programTitle(programs[i]), ms)
        << "   " << std::setprecision(2) << ms / unchunked_ms << " x unchunked\n";
  }
  if (!timings.step_bytes.empty()) {
    std::cout << "peak memory of a step on rank 0 (the most bytes of CPU tensors alive at once "
                 "above those alive before it):\n";
    for (size_t i = 0; i < programs.size(); ++i) {
      row(programTitle(programs[i]), static_cast<double>(timings.step_bytes[i]) / (1 << 20), "MiB")
          << "\n";
    }
    std::cout << "the buffer pool's reserve after the timed steps (buffers of the programs' "
                 "earlier runs, kept for their next; not counted above):\n";
    row("every program", static_cast<double>(timings.pool_reserve_bytes) / (1 << 20), "MiB")
        << "\n";
  }
  if (!options.baselines) {
    return;
  }
  const std::vector<int64_t>& chunk_counts = timings.comm_chunks;
  for (size_t i = 0; timings.comm_measured && i < chunk_counts.size(); ++i) {
    row(withChunks("communication only", chunk_counts[i]), median(timings.comm[i])) << "\n";
  }
  for (size_t i = 0; i < timings.backward_comm.size(); ++i) {
    row(withChunks("backward communication", chunk_counts[i]), median(timings.backward_comm[i]))
        << "   " << static_cast<double>(timings.backward_sent_bytes[i]) / (1 << 20)
        << " MiB sent by this rank\n";
  }
  for (size_t i = 0; i < chunk_counts.size(); ++i) {
    row(withChunks("compute only (hostir)", chunk_counts[i]), median(timings.compute[i])) << "\n";
  }
  if (!timings.aten.empty()) {
    row("compute only (ATen)", median(timings.aten)) << "\n";
  }
  // The bound of a program: the longer of its own communication alone and
  // its own compute alone.
  for (size_t i = 0; timings.comm_measured && i + 1 < programs.size(); ++i) {
    std::cout << "  " << gains[i]->describe(programTitle(programs[i])) << "\n";
  }
}

}  // namespace

int runShardedJob(const ShardedJobOptions& options, const ShardedJob& job) {
  Communicator& communicator = Communicator::getInstance();
  const int64_t devices = communicator.size();
  const int64_t rank = communicator.deviceId();
  runtime::Tracer::global().setProcessId(static_cast<int>(rank));
  const runtime::ThreadBudget budget =
      runtime::computeThreadBudget(options.streams, /*communicates=*/devices > 1,
                                   static_cast<int>(communicator.environment().local_world_size));
  at::set_num_threads(budget.intra_op_threads);
  // The first rank's rows (the most, torch.chunk's), the same on every rank.
  Programs built =
      buildPrograms(options, job, communicator, (options.tokens + devices - 1) / devices);
  const std::vector<Program>& programs = built.programs;

  // Which ISA and GEMM path run (the first GEMM's shape: w1's shard).
  const std::string machine = describeLocalMachine();
  const std::string gemm_path = describeGemmPath(job.block.gemm_k, job.block.gemm_n);
  if (rank == 0) {
    std::cout << "== " << job.title << "; " << options.streams << " streams\n"
              << "thread budget per rank: " << budget.describe() << "\n"
              << "machine: " << machine << ", GEMMs: " << gemm_path << "\n";
  }
  const bool first_prepared_at_run = programs.front().executor->preparedAtFirstRun();
  if (rank == 0 && !first_prepared_at_run) {
    printPrograms(options, built);
  }
  const Checks checks = checkPrograms(options, job, programs);
  for (Program& program : built.programs) {
    if (program.name == "automatic") {
      program.chunks = program.executor->automaticChunks();
      if (rank == 0) {
        std::cout << "automatic stream splits, forward:\n" << program.executor->overlapReport();
        if (program.backward) {
          std::cout << "automatic stream splits, backward:\n" << program.backward->overlapReport();
        }
      }
    }
  }
  if (rank == 0 && first_prepared_at_run) {
    printPrograms(options, built);
  }
  Timings timings = timePrograms(options, job, programs, communicator);
  if (options.train) {
    timings.pool_reserve_bytes = BufferPool::shared().reserveBytes();
    timings.step_bytes = stepMemory(options, job, programs, communicator);
  }
  if (!options.trace_path.empty()) {
    // One more run of the first program, traced (a stretch of HOSTIR_TRACE's
    // trace if that records the whole process).
    const runtime::Tracer::Stretch stretch = runtime::Tracer::global().beginStretch();
    timedRuns(1, communicator, [&] { programs.front().run(job); });
    std::string path = options.trace_path + ".rank" + std::to_string(rank) + ".json";
    runtime::Tracer::global().endStretch(stretch, path);
    std::cout << "trace of " << programTitle(programs.front()) << " written to " << path << "\n";
  }
  if (options.explain) {
    for (const Program& program : programs) {
      communicator.barrier();
      program.runMeasuringExposure(job);
      if (rank == 0) {
        std::cout << "exposed communication, " << programTitle(program)
                  << (program.backward ? ", forward" : "") << ": "
                  << program.executor->exposureReport();
        if (program.backward) {
          std::cout << "exposed communication, " << programTitle(program)
                    << ", backward: " << program.backward->exposureReport();
        }
      }
    }
  }
  const std::vector<std::optional<IdealGain>> gains = idealGains(options, programs, timings);
  if (rank == 0) {
    printTimings(options, programs, timings, gains);
    if (!options.json_path.empty()) {
      nlohmann::json report;
      report["config"] = {{"ranks", devices},           {"tokens", options.tokens},
                          {"hidden", options.hidden},   {"ffn", options.ffn},
                          {"streams", options.streams}, {"runs", options.runs},
                          {"link", options.link},       {"thread_budget", budget.describe()},
                          {"machine", machine},         {"isa", localTarget().toString()},
                          {"gemm_path", gemm_path},     {"train", options.train}};
      report["config"].update(job.config);
      if (options.train) {
        report["pool_reserve_bytes"] = timings.pool_reserve_bytes;
      }
      if (built.auto_choice) {
        report["auto"] = autoReport(*built.auto_choice);
      }
      addTimingsToReport(programs, checks, timings, gains, report);
      std::ofstream file(options.json_path);
      HOSTIR_CHECK(file.is_open(), "cannot write --json file '", options.json_path, "'");
      file << report.dump(2) << "\n";
    }
  }
  std::cout << (checks.ok ? "PASSED" : "FAILED") << "\n";
  return checks.ok ? 0 : 1;
}

}  // namespace hostir::tools
