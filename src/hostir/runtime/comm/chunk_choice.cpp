#include "hostir/runtime/comm/chunk_choice.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/ir/error.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"

namespace hostir {
namespace {

// 10 TB/s: no link (nor loopback's memory copy) is that fast; a calibrated
// bandwidth at or above it is the probe's floor, not a measurement.
constexpr double kUnresolvedBandwidthMbPerS = 1e7;

double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Per thread of this process, how long it has waited for a CPU while
// runnable (run_delay) and how many times it got one (its time slices): the
// second and third fields of /proc/self/task/<tid>/schedstat. Empty where
// the kernel does not report them.
struct CpuWait {
  double waited_ms = 0;
  double slices = 0;
};
std::map<std::string, CpuWait> cpuWaits() {
  std::error_code error;
  std::map<std::string, CpuWait> waits;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
    std::ifstream schedstat(task.path() / "schedstat");
    double on_cpu_ns = 0;
    double waiting_ns = 0;
    double slices = 0;
    if (schedstat >> on_cpu_ns >> waiting_ns >> slices) {
      waits[task.path().filename().string()] = {waiting_ns * 1e-6, slices};
    }
  }
  return waits;
}

// Between two cpuWaits: the most any one thread waited (the transfer's
// thread stalled at least that long; the threads' sum counts threads that
// wait at once twice) and the mean wait per time slice.
std::pair<double, double> cpuWaitBetween(const std::map<std::string, CpuWait>& before,
                                         const std::map<std::string, CpuWait>& after) {
  double longest = 0;
  double waited = 0;
  double slices = 0;
  for (const auto& [thread, wait] : after) {
    auto earlier = before.find(thread);
    const CpuWait start = earlier == before.end() ? CpuWait{} : earlier->second;
    longest = std::max(longest, wait.waited_ms - start.waited_ms);
    waited += wait.waited_ms - start.waited_ms;
    slices += wait.slices - start.slices;
  }
  return {longest, slices > 0 ? waited / slices : 0.0};
}

LinkProbeSamples probeAllgather(Communicator& communicator, const std::vector<int64_t>& team,
                                int64_t floats, int repetitions) {
  const auto members = static_cast<int64_t>(team.size());
  at::Tensor in = at::ones({floats});
  at::Tensor out = at::empty({members * floats});
  CommunicationParams params{.type = CommunicationType::Allgather, .team = team};
  LinkProbeSamples samples{.floats_per_rank = floats,
                           .wall_ms = {},
                           .cpu_ms = {},
                           .cpu_wait_ms = {},
                           .wake_wait_ms = {}};
  for (int i = 0; i <= repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    double cpu_start = processCpuSeconds();
    const std::map<std::string, CpuWait> waits_before = cpuWaits();
    auto work =
        postCollective(params, "the link probe", communicator.deviceId(), in, out, communicator);
    waitWork(work, communicator.timeout(), "the link probe allgather");
    if (i == 0) {
      continue;  // warm-up: connections, page faults
    }
    samples.wall_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    samples.cpu_ms.push_back((processCpuSeconds() - cpu_start) * 1e3);
    const auto [longest, per_slice] = cpuWaitBetween(waits_before, cpuWaits());
    samples.cpu_wait_ms.push_back(longest);
    samples.wake_wait_ms.push_back(per_slice);
  }
  return samples;
}

// Each repetition's CPU waits (cpu_wait_ms and wake_wait_ms, of `small`
// then `large`) become the most of any member of `team`: a rank waits on the
// link while its peer waits for a CPU. One allgather; every member calls it.
void teamCpuWaits(Communicator& communicator, const std::vector<int64_t>& team,
                  LinkProbeSamples& small, LinkProbeSamples& large) {
  std::vector<std::vector<double>*> fields{&small.cpu_wait_ms, &large.cpu_wait_ms,
                                           &small.wake_wait_ms, &large.wake_wait_ms};
  std::vector<double> mine;
  for (const auto* field : fields) {
    mine.insert(mine.end(), field->begin(), field->end());
  }
  const auto members = static_cast<int64_t>(team.size());
  const auto count = static_cast<int64_t>(mine.size());
  at::Tensor in = at::tensor(mine, at::kDouble);
  at::Tensor out = at::empty({members * count}, at::kDouble);
  CommunicationParams params{.type = CommunicationType::Allgather, .team = team};
  auto work = postCollective(params, "the link probe's CPU waits", communicator.deviceId(), in, out,
                             communicator);
  waitWork(work, communicator.timeout(), "the link probe's CPU waits allgather");
  at::Tensor most = std::get<0>(out.view({members, count}).max(0)).contiguous();
  const double* value = most.data_ptr<double>();
  for (auto* field : fields) {
    for (double& wait : *field) {
      wait = *value++;
    }
  }
}

// The unchunked GEMM's rate as the reason prints it: "95 GFLOP/s whole", or,
// where one chunk was not a candidate, the fewest chunks' rate named so.
std::string gemmRateWhole(const LinkCalibration& link) {
  std::ostringstream text;
  text.precision(3);
  const auto& [fewest, rate] = *link.gemm_gflops.begin();
  text << rate << " GFLOP/s ";
  if (fewest == 1) {
    text << "whole";
  } else {
    text << "with " << fewest << " chunks (1 not tried)";
  }
  return text.str();
}

}  // namespace

at::Tensor probeOperand(int64_t rows, int64_t cols) {
  return at::full({rows, cols}, 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(cols, 1))));
}

double gemmGflopsFromTimes(double flops, const std::vector<double>& milliseconds) {
  HOSTIR_CHECK(!milliseconds.empty(), "gemmGflopsFromTimes: a GEMM-rate probe needs a timing");
  return flops / std::max(*std::min_element(milliseconds.begin(), milliseconds.end()), 1e-3) / 1e6;
}

double PipelineCost::flopsWith(int64_t chunks) const {
  if (auto given = flops_by_chunks.find(chunks); given != flops_by_chunks.end()) {
    return given->second;
  }
  if (chunks < 2 || causal_scores.flops <= 0 || causal_scores.tokens <= 0) {
    return flops;
  }
  const int64_t tokens = causal_scores.tokens;
  const int64_t tile_rows = std::max<int64_t>(1, std::min(kCausalQueryTileRows, tokens / chunks));
  const auto tiles = static_cast<double>((tokens + tile_rows - 1) / tile_rows);
  return flops - causal_scores.flops + causal_scores.flops * (tiles + 1) / (2 * tiles);
}

double PipelineCost::hostMsPerChunk() const {
  const int64_t instructions = host_instructions_per_chunk > 0
                                   ? host_instructions_per_chunk
                                   : ops_per_chunk * kHostInstructionsPerOp;
  return static_cast<double>(instructions) * kHostMicrosecondsPerInstruction * 1e-3;
}

namespace {

// The GEMM rate of each candidate's chunk, into `link`.
void calibrateGemms(LinkCalibration& link, int64_t gemm_m, int64_t gemm_k, int64_t gemm_n,
                    const std::vector<int64_t>& candidates) {
  HOSTIR_CHECK(gemm_m > 0 && gemm_k > 0 && gemm_n > 0, "calibrate: the probe GEMM [", gemm_m, ", ",
               gemm_k, "] x [", gemm_k, ", ", gemm_n, "] needs positive extents");
  at::Tensor b = probeOperand(gemm_k, gemm_n);
  for (int64_t chunks : candidates) {
    const int64_t rows = std::max<int64_t>(1, gemm_m / chunks);
    at::Tensor a = probeOperand(rows, gemm_k);
    at::Tensor c = at::empty({rows, gemm_n});
    // Repeat small GEMMs up to ~the work of one whole one, so every probe
    // takes long enough to time.
    const int64_t repeats = std::max<int64_t>(1, std::min<int64_t>(chunks, 8));
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) {
      auto start = std::chrono::steady_clock::now();
      for (int64_t r = 0; r < repeats; ++r) {
        at::matmul_out(c, a, b);
      }
      if (i > 0) {
        times.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count() /
            static_cast<double>(repeats));
      }
    }
    link.gemm_gflops[chunks] =
        gemmGflopsFromTimes(2.0 * static_cast<double>(rows * gemm_k * gemm_n), times);
  }
}

}  // namespace

LinkCalibration linkFromProbes(const LinkProbeSamples& small, const LinkProbeSamples& large,
                               int64_t members, int compute_threads) {
  const auto complete = [](const LinkProbeSamples& samples) {
    return !samples.wall_ms.empty() && samples.wall_ms.size() == samples.cpu_ms.size() &&
           (samples.cpu_wait_ms.empty() || samples.cpu_wait_ms.size() == samples.wall_ms.size()) &&
           (samples.wake_wait_ms.empty() || samples.wake_wait_ms.size() == samples.wall_ms.size());
  };
  HOSTIR_CHECK(complete(small) && complete(large),
               "linkFromProbes: each probe size needs at least one repetition with its wall and "
               "CPU time (and its CPU wait, if any), got ",
               small.wall_ms.size(), " and ", large.wall_ms.size());
  HOSTIR_CHECK(
      members >= 2 && large.floats_per_rank > small.floats_per_rank && small.floats_per_rank > 0,
      "linkFromProbes: needs 2 or more members and a large probe above the small one, got ",
      members, " members, ", small.floats_per_rank, " and ", large.floats_per_rank,
      " floats per rank");
  LinkCalibration link;
  link.compute_threads = compute_threads;
  // The link's time of each repetition: its wall time less its wait for a CPU.
  const auto linkTimes = [](const LinkProbeSamples& samples) {
    std::vector<double> times = samples.wall_ms;
    for (size_t i = 0; i < samples.cpu_wait_ms.size(); ++i) {
      times[i] = std::max(0.0, times[i] - samples.cpu_wait_ms[i]);
    }
    return times;
  };
  const std::vector<double> small_times = linkTimes(small);
  const std::vector<double> large_times = linkTimes(large);
  const double small_ms = *std::min_element(small_times.begin(), small_times.end());
  const auto large_at = static_cast<size_t>(
      std::min_element(large_times.begin(), large_times.end()) - large_times.begin());
  const double large_ms = large_times[large_at];
  const auto others = static_cast<double>(members - 1);
  const double small_bytes = others * static_cast<double>(small.floats_per_rank) * 4;
  const double large_bytes = others * static_cast<double>(large.floats_per_rank) * 4;
  const double slope_ms = std::max(1e-6, large_ms - small_ms);
  link.bandwidth_mb_per_s = (large_bytes - small_bytes) / 1e6 / (slope_ms / 1e3);
  link.latency_ms = std::max(0.0, small_ms - small_bytes / 1e6 / link.bandwidth_mb_per_s * 1e3);
  // The typical wait per wake-up: a program pays it at every chunk, so not
  // the fastest repetition's, and not one outlier's.
  std::vector<double> wake_waits = small.wake_wait_ms;
  wake_waits.insert(wake_waits.end(), large.wake_wait_ms.begin(), large.wake_wait_ms.end());
  if (!wake_waits.empty()) {
    auto middle = wake_waits.begin() + static_cast<std::ptrdiff_t>(wake_waits.size() / 2);
    std::nth_element(wake_waits.begin(), middle, wake_waits.end());
    link.wake_wait_ms = *middle;
  }
  link.comm_cpu_fraction =
      large_ms > 0 ? std::clamp(large.cpu_ms[large_at] / large_ms / compute_threads, 0.0, 1.0)
                   : 1.0;
  return link;
}

LinkCalibration calibrateLink(Communicator& communicator, const std::vector<int64_t>& team) {
  const auto members = static_cast<int64_t>(team.size());
  if (members < 2) {
    LinkCalibration link;
    link.compute_threads = at::get_num_threads();
    return link;
  }
  constexpr int64_t kSmall = 16 * 1024;    // floats: 64 KiB
  constexpr int64_t kLarge = 1024 * 1024;  // floats: 4 MiB
  // Small probes are cheap, so more of them; the large one sets the rate.
  LinkProbeSamples small = probeAllgather(communicator, team, kSmall, 6);
  LinkProbeSamples large = probeAllgather(communicator, team, kLarge, 3);
  teamCpuWaits(communicator, team, small, large);
  return linkFromProbes(small, large, members, at::get_num_threads());
}

LinkCalibration calibrate(Communicator& communicator, const std::vector<int64_t>& team,
                          int64_t gemm_m, int64_t gemm_k, int64_t gemm_n,
                          const std::vector<int64_t>& candidates) {
  HOSTIR_CHECK(gemm_m > 0 && gemm_k > 0 && gemm_n > 0, "calibrate: the probe GEMM [", gemm_m, ", ",
               gemm_k, "] x [", gemm_k, ", ", gemm_n, "] needs positive extents");
  LinkCalibration link = calibrateLink(communicator, team);
  calibrateGemms(link, gemm_m, gemm_k, gemm_n, candidates);
  return link;
}

ChunkChoice chooseChunks(const PipelineCost& cost, const LinkCalibration& link,
                         const std::vector<int64_t>& candidates) {
  HOSTIR_CHECK(!candidates.empty(), "chooseChunks needs at least one candidate chunk count");
  ChunkChoice choice;
  choice.inputs = link;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t chunks : candidates) {
    HOSTIR_CHECK(chunks >= 1, "chunk counts must be positive, got ", chunks);
    auto rate = link.gemm_gflops.find(chunks);
    HOSTIR_CHECK(rate != link.gemm_gflops.end() && rate->second > 0,
                 "chooseChunks needs a calibrated GEMM rate for ", chunks, " chunk(s)");
    const auto c = static_cast<double>(chunks);
    const double compute =
        cost.flopsWith(chunks) / c / (rate->second * 1e6) + cost.hostMsPerChunk();
    const double transfer = link.bandwidth_mb_per_s > 0
                                ? cost.collectives_per_chunk * link.latency_ms +
                                      cost.link_bytes / c / (link.bandwidth_mb_per_s * 1e3)
                                : 0;
    const double cpu = link.comm_cpu_fraction * transfer;
    // Each chunk's wake-ups wait for a CPU in turn (a loaded machine's).
    const double wakes = c * static_cast<double>(cost.collectives_per_chunk) * kWakesPerCollective *
                         link.wake_wait_ms;
    const double total = transfer + compute + (c - 1) * std::max(compute + cpu, transfer) + wakes;
    choice.predicted_ms[chunks] = total;
    choice.predicted_exposed_ms[chunks] = std::max(0.0, total - c * compute);
    if (total < best * 0.999) {  // prefer fewer chunks on a near tie
      best = total;
      choice.chunks = chunks;
    }
  }
  // Chunking has costs the model only estimates (host work, more, smaller
  // transfers, the OS waking each stream's thread): on a predicted gain
  // under 2 %, or under 1 ms, it is not worth it. The absolute floor is for
  // small programs on a shared machine, where a probe slowed by other
  // processes predicts a fraction of a millisecond that the chunks' thread
  // handoffs then lose several times over.
  constexpr double kMinimumGain = 0.02;
  auto single = choice.predicted_ms.find(1);
  if (choice.chunks != 1 && single != choice.predicted_ms.end() &&
      best > std::min((1.0 - kMinimumGain) * single->second, single->second - kMinimumGainMs)) {
    choice.chunks = 1;
    best = single->second;
  }
  std::ostringstream reason;
  reason.precision(3);
  reason << "predicted " << best << " ms with " << choice.chunks << " chunk(s) ("
         << choice.predicted_exposed_ms.at(choice.chunks) << " ms of it exposed communication)";
  // Against one chunk, or, when one chunk is the choice, against the best
  // chunked candidate (and whether it lost or gained too little).
  auto other = choice.predicted_ms.end();
  if (choice.chunks != 1) {
    other = choice.predicted_ms.find(1);
  } else {
    for (auto it = choice.predicted_ms.begin(); it != choice.predicted_ms.end(); ++it) {
      if (it->first != 1 && (other == choice.predicted_ms.end() || it->second < other->second)) {
        other = it;
      }
    }
  }
  if (other != choice.predicted_ms.end()) {
    reason << " vs " << other->second << " ms with " << other->first;
    if (choice.chunks == 1) {
      reason << (other->second < best ? " (the best chunked: a gain under 2 % or 1 ms is not taken)"
                                      : " (the best chunked)");
    }
  }
  // A probe whose large transfer took no longer than its small one (a
  // loaded machine's waits subtracted) measured no bandwidth: say so rather
  // than print the floor's 1e9 MB/s.
  if (link.bandwidth_mb_per_s >= kUnresolvedBandwidthMbPerS) {
    reason << "; link faster than the probe resolves (its large transfer took no longer than "
              "its small one)";
  } else {
    reason << "; link " << link.bandwidth_mb_per_s << " MB/s";
  }
  reason << " + " << link.latency_ms << " ms, transfers cost " << link.comm_cpu_fraction * 100
         << " % CPU, a wake-up waits " << link.wake_wait_ms << " ms for a CPU, GEMM "
         << gemmRateWhole(link) << ", " << link.gemm_gflops.at(choice.chunks)
         << " GFLOP/s per chunk";
  choice.reason = reason.str();
  return choice;
}

ChunkChoice agreeOnChunks(Communicator& communicator, const std::vector<int64_t>& team,
                          const PipelineCost& cost, const LinkCalibration& link,
                          const std::vector<int64_t>& candidates) {
  ChunkChoice choice = chooseChunks(cost, link, candidates);
  if (team.size() > 1) {
    at::Tensor chosen = at::full({1}, choice.chunks, at::kLong);
    CommunicationParams params{
        .type = CommunicationType::Broadcast, .team = team, .root = team.front()};
    auto work = postCollective(params, "the chunk-count agreement", communicator.deviceId(), chosen,
                               chosen, communicator);
    waitWork(work, communicator.timeout(), "the chunk-count agreement");
    const int64_t agreed = chosen.item<int64_t>();
    if (agreed != choice.chunks) {
      choice.reason = "rank " + std::to_string(team.front()) + " chose " + std::to_string(agreed) +
                      " (this rank's own model: " + choice.reason + ")";
      choice.chunks = agreed;
    }
  }
  return choice;
}

}  // namespace hostir
