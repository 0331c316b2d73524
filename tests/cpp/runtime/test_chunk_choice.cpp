#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <sstream>

#include "hostir/ir/error.h"
#include "hostir/runtime/comm/chunk_choice.h"

namespace hostir {
namespace {

// The sequence-parallel MLP block of the README at issue sizes, per rank on
// 2 ranks: 2 * 8 MiB over the link, 2 * 2 * 4096 * 1024 * 2048 FLOPs.
PipelineCost mlpBlock() {
  return PipelineCost{.link_bytes = 2.0 * 2048 * 1024 * 4,
                      .flops = 4.0 * 4096 * 1024 * 2048,
                      .collectives_per_chunk = 2,
                      .ops_per_chunk = 6,
                      .flops_by_chunks = {},
                      .causal_scores = {},
                      .host_instructions_per_chunk = 0};
}

// The block at hidden 256, ffn 1024 with `tokens` tokens, per rank on 2
// ranks: half the tokens' rows twice over the link.
PipelineCost smallMlpBlock(int64_t tokens) {
  return PipelineCost{.link_bytes = 2.0 * static_cast<double>(tokens / 2) * 256 * 4,
                      .flops = 4.0 * static_cast<double>(tokens) * 256 * 512,
                      .collectives_per_chunk = 2,
                      .ops_per_chunk = 6,
                      .flops_by_chunks = {},
                      .causal_scores = {},
                      .host_instructions_per_chunk = 0};
}

const std::vector<int64_t> kCandidates{1, 2, 4, 8, 16};

// The same GEMM rate at every chunk count.
std::map<int64_t, double> flatRate(double gflops) {
  std::map<int64_t, double> rates;
  for (int64_t chunks : kCandidates) {
    rates[chunks] = gflops;
  }
  return rates;
}

// ~500 Mbit/s, transfers mostly waiting, 50 GFLOP/s.
LinkCalibration slowLink() {
  return {.latency_ms = 0.3,
          .bandwidth_mb_per_s = 60,
          .comm_cpu_fraction = 0.1,
          .gemm_gflops = flatRate(50)};
}

// Loopback: a transfer is a copy by the same cores; 50 GFLOP/s.
LinkCalibration loopbackLink() {
  return {.latency_ms = 0.05,
          .bandwidth_mb_per_s = 3000,
          .comm_cpu_fraction = 1.0,
          .gemm_gflops = flatRate(50)};
}

TEST(ChunkChoice, ASlowLinkThatCostsLittleCpuIsWorthChunking) {
  LinkCalibration link = slowLink();
  ChunkChoice choice = chooseChunks(mlpBlock(), link, kCandidates);
  EXPECT_GT(choice.chunks, 1) << choice.reason;
  EXPECT_LT(choice.predicted_ms.at(choice.chunks), 0.8 * choice.predicted_ms.at(1))
      << choice.reason;
  EXPECT_EQ(choice.predicted_ms.size(), kCandidates.size());
}

TEST(ChunkChoice, ALinkAsFastAsMemoryIsNotChunked) {
  // Loopback: a transfer is a memory copy by the cores that compute.
  LinkCalibration link = loopbackLink();
  EXPECT_EQ(chooseChunks(mlpBlock(), link, kCandidates).chunks, 1);
}

TEST(ChunkChoice, GemmsThatRunFasterInChunksAreChunkedEvenOverLoopback) {
  // Loopback, but the CPU runs a quarter-size GEMM 1.6x faster per FLOP
  // (cache): chunking pays for the compute alone.
  LinkCalibration link = loopbackLink();
  link.gemm_gflops = {{1, 60}, {2, 75}, {4, 96}, {8, 98}, {16, 97}};
  ChunkChoice choice = chooseChunks(mlpBlock(), link, kCandidates);
  EXPECT_GE(choice.chunks, 4) << choice.reason;
}

TEST(ChunkChoice, WorkThatOnlyTheWholeProgramDoesIsChunkedAway) {
  // Loopback, as in ALinkAsFastAsMemoryIsNotChunked, but the unchunked
  // program computes a quarter more (causal attention without a query
  // loop reads every key): chunking pays for what it skips.
  LinkCalibration link = loopbackLink();
  PipelineCost cost = mlpBlock();
  cost.flops_by_chunks[1] = 1.25 * cost.flops;
  ChunkChoice choice = chooseChunks(cost, link, kCandidates);
  EXPECT_GT(choice.chunks, 1) << choice.reason;
  EXPECT_GT(choice.predicted_ms.at(1), 1.2 * chooseChunks(mlpBlock(), link, {1}).predicted_ms.at(1))
      << choice.reason;
}

TEST(ChunkChoice, ThePredictedExposureIsTheTransferNoComputeHides) {
  // One chunk hides nothing: its exposure is the whole transfer (2
  // collectives' latency + 16 MiB at 60 MB/s). In chunks, the compute of
  // one chunk hides the next one's transfer, and the reason says how much
  // stays exposed.
  LinkCalibration link = slowLink();
  link.comm_cpu_fraction = 0;
  ChunkChoice choice = chooseChunks(mlpBlock(), link, kCandidates);
  const double transfer_ms = 2 * 0.3 + mlpBlock().link_bytes / (60 * 1e3);
  EXPECT_NEAR(choice.predicted_exposed_ms.at(1), transfer_ms, 1e-9);
  ASSERT_GT(choice.chunks, 1) << choice.reason;
  EXPECT_LT(choice.predicted_exposed_ms.at(choice.chunks), 0.3 * transfer_ms) << choice.reason;
  std::ostringstream expected;
  expected.precision(3);
  expected << "(" << choice.predicted_exposed_ms.at(choice.chunks)
           << " ms of it exposed communication)";
  EXPECT_NE(choice.reason.find(expected.str()), std::string::npos) << choice.reason;
}

TEST(ChunkChoice, ANearTieIsNotChunked) {
  // Loopback, GEMMs barely faster in chunks: the model's best beats one
  // chunk by under 2 %, not enough to chunk.
  LinkCalibration link = loopbackLink();
  link.gemm_gflops = {{1, 100}, {2, 101}, {4, 101}, {8, 101}, {16, 101}};
  ChunkChoice choice = chooseChunks(mlpBlock(), link, kCandidates);
  EXPECT_EQ(choice.chunks, 1) << choice.reason;
  EXPECT_LT(choice.predicted_ms.at(2), choice.predicted_ms.at(1));
  // The reason says what one chunk was weighed against, and why it won.
  EXPECT_NE(choice.reason.find("with 1 chunk(s) ("), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find("(the best chunked: a gain under 2 % or 1 ms is not taken)"),
            std::string::npos)
      << choice.reason;
}

TEST(ChunkChoice, AGainUnderAMillisecondIsNotChunked) {
  // A small block (tokens 256, hidden 256, ffn 1024 per rank on 2 ranks) on
  // a link slow enough that chunking wins well over 2 %, but less than 1 ms.
  PipelineCost small_block = smallMlpBlock(256);
  LinkCalibration link{.latency_ms = 0.01,
                       .bandwidth_mb_per_s = 400,
                       .comm_cpu_fraction = 0.1,
                       .gemm_gflops = flatRate(50)};
  ChunkChoice choice = chooseChunks(small_block, link, kCandidates);
  EXPECT_EQ(choice.chunks, 1) << choice.reason;
  double best_chunked = choice.predicted_ms.at(2);
  for (int64_t chunks : kCandidates) {
    if (chunks > 1) {
      best_chunked = std::min(best_chunked, choice.predicted_ms.at(chunks));
    }
  }
  EXPECT_LT(best_chunked, 0.9 * choice.predicted_ms.at(1)) << choice.reason;
  EXPECT_GT(best_chunked, choice.predicted_ms.at(1) - kMinimumGainMs) << choice.reason;
  // The same block ten times longer gains more than 1 ms: chunked.
  small_block.link_bytes *= 10;
  small_block.flops *= 10;
  EXPECT_GT(chooseChunks(small_block, link, kCandidates).chunks, 1);
}

TEST(ChunkChoice, TheReasonComparesWithOneChunkOrTheBestChunkedOne) {
  // Loopback, flat rates: one chunk wins outright; the reason names the
  // best chunked count and its (worse) prediction.
  ChunkChoice single = chooseChunks(mlpBlock(), loopbackLink(), kCandidates);
  ASSERT_EQ(single.chunks, 1) << single.reason;
  auto best_chunked =
      std::min_element(std::next(single.predicted_ms.begin()), single.predicted_ms.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  std::ostringstream expected;
  expected.precision(3);
  expected << " vs " << best_chunked->second << " ms with " << best_chunked->first
           << " (the best chunked); link";
  EXPECT_NE(single.reason.find(expected.str()), std::string::npos) << single.reason;
  // A slow link: chunked wins, compared with one chunk.
  ChunkChoice chunked = chooseChunks(mlpBlock(), slowLink(), kCandidates);
  ASSERT_GT(chunked.chunks, 1) << chunked.reason;
  std::ostringstream against_one;
  against_one.precision(3);
  against_one << " vs " << chunked.predicted_ms.at(1) << " ms with 1; link";
  EXPECT_NE(chunked.reason.find(against_one.str()), std::string::npos) << chunked.reason;
}

TEST(ChunkChoice, ManyChunksCostTheirPerChunkOverheads) {
  // Tiny compute, a high-latency link: every extra chunk adds two
  // latencies and host work, which the overlap cannot repay.
  PipelineCost small{.link_bytes = 4096,
                     .flops = 1e5,
                     .collectives_per_chunk = 2,
                     .ops_per_chunk = 6,
                     .flops_by_chunks = {},
                     .causal_scores = {},
                     .host_instructions_per_chunk = 0};
  LinkCalibration link{.latency_ms = 5,
                       .bandwidth_mb_per_s = 100,
                       .comm_cpu_fraction = 0.1,
                       .gemm_gflops = flatRate(50)};
  EXPECT_EQ(chooseChunks(small, link, kCandidates).chunks, 1);
}

TEST(ChunkChoice, TheReasonNamesTheInputs) {
  const std::string reason = chooseChunks(mlpBlock(), slowLink(), kCandidates).reason;
  EXPECT_NE(reason.find("MB/s"), std::string::npos) << reason;
  EXPECT_NE(reason.find("GFLOP/s"), std::string::npos) << reason;
}

TEST(ChunkChoice, TheWholeGemmRateIsTheOneChunkRate) {
  // Without 1 among the candidates the fewest chunks' rate was printed as
  // "GFLOP/s whole".
  LinkCalibration link = slowLink();
  link.gemm_gflops = {{2, 81}, {4, 93}};
  const std::string chunked_only = chooseChunks(mlpBlock(), link, {2, 4}).reason;
  EXPECT_EQ(chunked_only.find("whole"), std::string::npos) << chunked_only;
  EXPECT_NE(chunked_only.find("GEMM 81 GFLOP/s with 2 chunks (1 not tried)"), std::string::npos)
      << chunked_only;
  link.gemm_gflops[1] = 77;
  const std::string with_one = chooseChunks(mlpBlock(), link, {1, 2, 4}).reason;
  EXPECT_NE(with_one.find("GEMM 77 GFLOP/s whole"), std::string::npos) << with_one;
}

TEST(ChunkChoice, TheHostCostIsTheMeasuredTimePerHostInstruction) {
  // No link, no FLOPs: C chunks cost C times the host's walk of one chunk,
  // 0.56 µs per host instruction (bench_host_overhead) -- not the fixed
  // 50 µs per op of before (0.3 ms per chunk of the MLP against 16 µs).
  PipelineCost cost{.link_bytes = 0,
                    .flops = 0,
                    .collectives_per_chunk = 2,
                    .ops_per_chunk = 6,
                    .flops_by_chunks = {},
                    .causal_scores = {},
                    .host_instructions_per_chunk = 28};
  LinkCalibration link{.gemm_gflops = flatRate(50)};
  ChunkChoice choice = chooseChunks(cost, link, kCandidates);
  for (int64_t chunks : kCandidates) {
    EXPECT_NEAR(choice.predicted_ms.at(chunks), static_cast<double>(chunks) * 28 * 0.56e-3, 1e-12)
        << chunks;
  }
  // A cost that does not count its instructions: kHostInstructionsPerOp per op.
  cost.host_instructions_per_chunk = 0;
  EXPECT_NEAR(cost.hostMsPerChunk(), 6 * kHostInstructionsPerOp * 0.56e-3, 1e-12);
}

TEST(ChunkChoice, RejectsNoCandidatesAndAnUncalibratedRate) {
  LinkCalibration link{.gemm_gflops = flatRate(50)};
  EXPECT_THROW(chooseChunks(mlpBlock(), link, {}), Error);
  EXPECT_THROW(chooseChunks(mlpBlock(), LinkCalibration{}, kCandidates), Error);
  EXPECT_THROW(chooseChunks(mlpBlock(), link, {0}), Error);
}

// Loopback probes on 2 ranks: 64 KiB in 0.1 ms and 4 MiB in 2.1 ms (about
// 2 GB/s), each repetition's CPU half its wall time.
LinkProbeSamples probes(int64_t floats, std::vector<double> wall_ms) {
  std::vector<double> cpu_ms;
  for (double wall : wall_ms) {
    cpu_ms.push_back(wall / 2);
  }
  return {.floats_per_rank = floats,
          .wall_ms = std::move(wall_ms),
          .cpu_ms = std::move(cpu_ms),
          .cpu_wait_ms = {},
          .wake_wait_ms = {}};
}

// `samples` with each repetition's wait for a CPU and wait per wake-up.
LinkProbeSamples waited(LinkProbeSamples samples, std::vector<double> cpu_wait_ms,
                        std::vector<double> wake_wait_ms) {
  samples.cpu_wait_ms = std::move(cpu_wait_ms);
  samples.wake_wait_ms = std::move(wake_wait_ms);
  return samples;
}

constexpr int64_t kSmallProbe = 16 * 1024;
constexpr int64_t kLargeProbe = 1024 * 1024;

TEST(ChunkChoice, TheLinkModelIsTheFastestProbeOfEachSize) {
  LinkCalibration quiet = linkFromProbes(probes(kSmallProbe, {0.1, 0.1, 0.1}),
                                         probes(kLargeProbe, {2.1, 2.1, 2.1}), 2, 1);
  EXPECT_NEAR(quiet.bandwidth_mb_per_s, (4.0 * kLargeProbe - 4.0 * kSmallProbe) / 1e6 / 2e-3, 1e-6);
  EXPECT_NEAR(quiet.comm_cpu_fraction, 0.5, 1e-12);
  // On a loaded machine most repetitions are slowed; the undisturbed one
  // still gives the same model (a median of 3 would have read 6.3 ms here,
  // a link three times slower).
  LinkCalibration loaded = linkFromProbes(probes(kSmallProbe, {0.9, 0.1, 0.4, 0.7, 1.2, 0.3}),
                                          probes(kLargeProbe, {6.3, 9.0, 2.1}), 2, 1);
  EXPECT_DOUBLE_EQ(loaded.bandwidth_mb_per_s, quiet.bandwidth_mb_per_s);
  EXPECT_DOUBLE_EQ(loaded.latency_ms, quiet.latency_ms);
  EXPECT_DOUBLE_EQ(loaded.comm_cpu_fraction, quiet.comm_cpu_fraction);
}

TEST(ChunkChoice, SlowedProbesDoNotMakeASmallLoopbackProgramChunk) {
  // tokens 1024, hidden 256, ffn 1024 on 2 ranks: 2 * 512 KiB over the link.
  PipelineCost small_block = smallMlpBlock(1024);
  LinkCalibration link = linkFromProbes(probes(kSmallProbe, {0.1, 0.3, 0.1, 0.2, 0.1, 0.4}),
                                        probes(kLargeProbe, {40.0, 2.1, 35.0}), 2, 1);
  link.gemm_gflops = flatRate(50);
  EXPECT_EQ(chooseChunks(small_block, link, kCandidates).chunks, 1);
  // What the median read from the same probes (0.1 and 35 ms: a link of 128 MB/s) does chunk:
  // the case this guards against.
  LinkCalibration median_read =
      linkFromProbes(probes(kSmallProbe, {0.1}), probes(kLargeProbe, {35.0}), 2, 1);
  median_read.gemm_gflops = flatRate(50);
  EXPECT_GT(chooseChunks(small_block, median_read, kCandidates).chunks, 1);
}

TEST(ChunkChoice, TheLinkTimeIsTheWallTimeLessTheWaitForACpu) {
  LinkCalibration quiet = linkFromProbes(probes(kSmallProbe, {0.1, 0.1, 0.1}),
                                         probes(kLargeProbe, {2.1, 2.1, 2.1}), 2, 1);
  // Every repetition slowed, the fastest by 30 ms that a thread of the
  // team spent waiting for a CPU: the fastest alone would read a link 15x
  // slower than it is.
  LinkProbeSamples small = waited(probes(kSmallProbe, {1.3, 4.1, 2.2}), {1.2, 4.0, 2.1}, {});
  LinkProbeSamples large = waited(probes(kLargeProbe, {32.1, 45.1, 40.1}), {30, 43, 38}, {});
  for (auto* samples : {&small, &large}) {
    for (size_t i = 0; i < samples->wall_ms.size(); ++i) {
      samples->cpu_ms[i] = (samples->wall_ms[i] - samples->cpu_wait_ms[i]) / 2;
    }
  }
  LinkCalibration loaded = linkFromProbes(small, large, 2, 1);
  EXPECT_NEAR(loaded.bandwidth_mb_per_s, quiet.bandwidth_mb_per_s, 1e-6);
  EXPECT_NEAR(loaded.latency_ms, quiet.latency_ms, 1e-9);
  // The CPU share is of the link's time, not of the wall time.
  EXPECT_NEAR(loaded.comm_cpu_fraction, 0.5, 1e-12);
  EXPECT_EQ(loaded.wake_wait_ms, 0);
}

TEST(ChunkChoice, ALoadedMachinesWakeUpsKeepASmallBlockUnchunked) {
  // What the probe read on 2 loaded cores (load average 8-12) over
  // loopback: the fastest repetitions' link, less the waits it saw, still
  // 42 MB/s with a quarter of its time on a CPU, and every wake-up waiting
  // 2.8-9 ms for a CPU. The block at tokens 256, hidden 256, ffn 1024 then
  // ran 1.4-3x slower chunked.
  PipelineCost small_block = smallMlpBlock(256);
  const auto loadedLink = [](std::vector<double> wake_wait_ms) {
    LinkProbeSamples small = probes(kSmallProbe, {1.0, 1.3, 1.1});
    LinkProbeSamples large = probes(kLargeProbe, {100.0, 130.0, 110.0});
    large.cpu_ms = {25.0, 30.0, 28.0};
    const std::vector<double> no_waits(3, 0.0);
    const std::vector<double> first(wake_wait_ms.begin(), wake_wait_ms.begin() + 3);
    const std::vector<double> rest(wake_wait_ms.begin() + 3, wake_wait_ms.end());
    LinkCalibration link =
        linkFromProbes(waited(small, no_waits, first), waited(large, no_waits, rest), 2, 1);
    link.gemm_gflops = flatRate(50);
    return link;
  };
  LinkCalibration loaded = loadedLink({3.6, 2.8, 9.0, 4.4, 7.2, 3.1});
  EXPECT_NEAR(loaded.bandwidth_mb_per_s, 41.7, 0.1);
  EXPECT_NEAR(loaded.wake_wait_ms, 4.4, 1e-12);  // the median
  ChunkChoice choice = chooseChunks(small_block, loaded, kCandidates);
  EXPECT_EQ(choice.chunks, 1) << choice.reason;
  EXPECT_NE(choice.reason.find("a wake-up waits 4.4 ms for a CPU"), std::string::npos)
      << choice.reason;
  // The same link on a quiet machine, but for one slow wake-up: the link
  // alone argues for chunking (what the model did before it priced the
  // wake-ups), and one outlier does not flip that.
  LinkCalibration quiet = loadedLink({0.01, 0.01, 0.01, 15.0, 0.01, 0.01});
  EXPECT_NEAR(quiet.wake_wait_ms, 0.01, 1e-12);
  EXPECT_GT(chooseChunks(small_block, quiet, kCandidates).chunks, 1);
  // At the sizes over ~500 Mbit/s the overlap still pays on the
  // loaded machine, with fewer chunks than on a quiet one.
  LinkCalibration slow = slowLink();
  EXPECT_EQ(chooseChunks(mlpBlock(), slow, kCandidates).chunks, 16);
  slow.wake_wait_ms = quiet.wake_wait_ms;
  EXPECT_EQ(chooseChunks(mlpBlock(), slow, kCandidates).chunks, 16);
  slow.wake_wait_ms = loaded.wake_wait_ms;
  const int64_t loaded_chunks = chooseChunks(mlpBlock(), slow, kCandidates).chunks;
  EXPECT_GT(loaded_chunks, 1);
  EXPECT_LT(loaded_chunks, 16);
}

TEST(ChunkChoice, TheGemmRateIsTheFastestTiming) {
  // 1 GFLOP in 10 ms: 100 GFLOP/s, however slow the other timing was.
  EXPECT_DOUBLE_EQ(gemmGflopsFromTimes(1e9, {10.0}), 100);
  EXPECT_DOUBLE_EQ(gemmGflopsFromTimes(1e9, {35.0, 10.0}), 100);
  // Where compute is shorter than the transfer, a slowed timing read as the
  // rate makes compute look long enough to hide more of it: the small
  // block's GEMMs timed 0.5 and 1.75 ms against 3 ms of transfer.
  PipelineCost small_block = smallMlpBlock(256);
  LinkCalibration link{.latency_ms = 0.01,
                       .bandwidth_mb_per_s = small_block.link_bytes / 1e3 / 3.0,
                       .comm_cpu_fraction = 0.15,
                       .gemm_gflops = {}};
  link.gemm_gflops = flatRate(gemmGflopsFromTimes(small_block.flops, {1.75, 0.5}));
  ChunkChoice fastest = chooseChunks(small_block, link, kCandidates);
  EXPECT_EQ(fastest.chunks, 1) << fastest.reason;
  link.gemm_gflops = flatRate(small_block.flops / 1.75 / 1e6);
  ChunkChoice slowed = chooseChunks(small_block, link, kCandidates);
  EXPECT_GT(slowed.chunks, 1) << slowed.reason;
  EXPECT_THROW(gemmGflopsFromTimes(1e9, {}), Error);
}

TEST(ChunkChoice, TheLinkModelRejectsMissingProbes) {
  EXPECT_THROW(linkFromProbes(probes(kSmallProbe, {}), probes(kLargeProbe, {2.1}), 2, 1), Error);
  EXPECT_THROW(linkFromProbes(probes(kSmallProbe, {0.1}), probes(kLargeProbe, {2.1}), 1, 1), Error);
  EXPECT_THROW(linkFromProbes(probes(kLargeProbe, {0.1}), probes(kSmallProbe, {2.1}), 2, 1), Error);
  // A CPU wait for some repetitions but not all.
  EXPECT_THROW(linkFromProbes(waited(probes(kSmallProbe, {0.1, 0.2}), {0.05}, {}),
                              probes(kLargeProbe, {2.1}), 2, 1),
               Error);
  EXPECT_THROW(linkFromProbes(probes(kSmallProbe, {0.1}),
                              waited(probes(kLargeProbe, {2.1}), {}, {0.01, 0.02}), 2, 1),
               Error);
}

// A probe that could not tell its large transfer from its small one (a
// loaded machine) says so; it printed "4.13e+09 MB/s" (the floor's value).
TEST(ChunkChoice, AnUnresolvedLinkIsNamedNotPrintedAsABandwidth) {
  LinkCalibration link = loopbackLink();
  link.bandwidth_mb_per_s = 4.13e9;
  ChunkChoice choice = chooseChunks(smallMlpBlock(256), link, kCandidates);
  EXPECT_NE(choice.reason.find("link faster than the probe resolves"), std::string::npos)
      << choice.reason;
  EXPECT_EQ(choice.reason.find("MB/s"), std::string::npos) << choice.reason;
  const std::string measured = chooseChunks(smallMlpBlock(256), loopbackLink(), kCandidates).reason;
  EXPECT_NE(measured.find("; link 3e+03 MB/s"), std::string::npos) << measured;
}

}  // namespace
}  // namespace hostir
