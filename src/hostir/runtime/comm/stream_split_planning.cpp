#include "hostir/runtime/comm/stream_split_planning.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/axis_mapping.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/chunk_choice.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {

// The link of each team, probed once per process: it is a property of the
// machines, not of a definition.
struct LinkCache {
  std::mutex mutex;
  std::map<std::vector<int64_t>, LinkCalibration> links;
};

LinkCache& linkCache() {
  static LinkCache cache;
  return cache;
}

// HOSTIR_LINK_MODEL="MBPS:LATENCY_MS" (e.g. "62.5:0.2" for 500 Mbit/s):
// the link as the user knows it, instead of a probe (a link shared with
// other jobs, tests that need one answer). Transfers are taken to cost no
// CPU.
std::optional<LinkCalibration> linkFromEnvironment() {
  const char* value = std::getenv("HOSTIR_LINK_MODEL");
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  const std::string text(value);
  auto invalid = [&](const std::string& why) {
    return "HOSTIR_LINK_MODEL=" + text + " is not a link model (" + why +
           "); valid: MBPS:LATENCY_MS with a positive bandwidth in MB/s and a latency of 0 ms "
           "or more, e.g. 62.5:0.2 (500 Mbit/s, 0.2 ms)";
  };
  const size_t colon = text.find(':');
  HOSTIR_CHECK(colon != std::string::npos, invalid("no colon"));
  LinkCalibration link;
  try {
    size_t used = 0;
    link.bandwidth_mb_per_s = std::stod(text.substr(0, colon), &used);
    HOSTIR_CHECK(used == colon, invalid("trailing characters"));
    const std::string latency = text.substr(colon + 1);
    link.latency_ms = std::stod(latency, &used);
    HOSTIR_CHECK(used == latency.size(), invalid("trailing characters"));
  } catch (const std::logic_error&) {
    HOSTIR_THROW(invalid("not numbers"));
  }
  HOSTIR_CHECK(link.bandwidth_mb_per_s > 0 && link.latency_ms >= 0, invalid("out of range"));
  link.compute_threads = at::get_num_threads();
  return link;
}

// Every rank of the team calls it for the same teams in the same order (the
// candidates are the same on every rank), so the probes match up.
LinkCalibration linkOf(Communicator& communicator, const std::vector<int64_t>& team, bool& probed) {
  if (std::optional<LinkCalibration> link = linkFromEnvironment()) {
    return *link;
  }
  LinkCache& cache = linkCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto found = cache.links.find(team);
  if (found != cache.links.end()) {
    return found->second;
  }
  probed = true;
  return cache.links.emplace(team, calibrateLink(communicator, team)).first->second;
}

// The logical extents of a tensor's shape, when the bound inputs give them.
std::optional<std::vector<int64_t>> logicalShape(ExpressionEvaluator& ee, const TensorView* tv) {
  std::vector<int64_t> shape;
  for (const IterDomain* id : tv->shapeDomain()) {
    if (!ee.canEvaluate(id->extent())) {
      return std::nullopt;
    }
    shape.push_back(ee.evaluateInt(id->extent()));
  }
  return shape;
}

// This rank's elements of a tensor of logical `shape`.
int64_t localElements(const TensorView* tv, const std::vector<int64_t>& shape) {
  std::vector<int64_t> divisors = shardDivisors(tv);
  int64_t elements = 1;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    elements *= (shape[axis] + divisors[axis] - 1) / divisors[axis];
  }
  return elements;
}

// What one candidate costs this rank whole, and the GEMM a chunk runs.
struct CandidateSizes {
  PipelineCost cost;
  int64_t local_rows = 0;
  int64_t gemm_m = 0, gemm_k = 0, gemm_n = 0;
};

std::optional<CandidateSizes> sizesOf(ExpressionEvaluator& ee,
                                      const StreamSplitCandidate& candidate) {
  std::optional<std::vector<int64_t>> gathered = logicalShape(ee, candidate.gathered);
  if (!gathered || gathered->size() != 2) {
    return std::nullopt;
  }
  const int64_t devices = shardDivisors(candidate.gathered).at(0);
  const int64_t rows = (*gathered)[0];
  const int64_t cols = (*gathered)[1];
  CandidateSizes sizes;
  sizes.local_rows = (rows + devices - 1) / devices;
  // Each rank receives every other rank's rows.
  sizes.cost.link_bytes = static_cast<double>((devices - 1) * sizes.local_rows * cols *
                                              dataTypeSize(candidate.gathered->dtype()));
  for (const Expr* gemm : candidate.gemms) {
    const TensorView* out = tensorOutput(gemm);
    std::optional<std::vector<int64_t>> out_shape = logicalShape(ee, out);
    if (!out_shape) {
      return std::nullopt;
    }
    const int64_t out_elements = localElements(out, *out_shape);
    sizes.cost.flops += 2.0 * static_cast<double>(out_elements) * static_cast<double>(cols);
    if (gemm == candidate.gemms.front()) {
      sizes.gemm_m = rows;
      sizes.gemm_k = cols;
      sizes.gemm_n = std::max<int64_t>(1, out_elements / std::max<int64_t>(1, rows));
    }
  }
  sizes.cost.collectives_per_chunk = 1;
  sizes.cost.ops_per_chunk = static_cast<int64_t>(candidate.gemms.size());
  if (const Expr* tail = candidate.tail_contraction) {
    // The tail's GEMM contracts this rank's slice of K into a partial sum of
    // the whole output, whose rows are then reduce-scattered chunk by chunk.
    const auto* a = tail->input(0)->as<TensorView>();
    const TensorView* out = tensorOutput(tail);
    std::optional<std::vector<int64_t>> a_shape = logicalShape(ee, a);
    std::optional<std::vector<int64_t>> out_shape = logicalShape(ee, out);
    if (!a_shape || !out_shape) {
      return std::nullopt;
    }
    const int64_t local_k =
        (a_shape->back() + shardDivisors(a).back() - 1) / shardDivisors(a).back();
    int64_t partial_elements = 1;
    for (int64_t extent : *out_shape) {
      partial_elements *= extent;
    }
    sizes.cost.flops += 2.0 * static_cast<double>(partial_elements) * static_cast<double>(local_k);
    sizes.cost.link_bytes += static_cast<double>(partial_elements / devices * (devices - 1) *
                                                 dataTypeSize(out->dtype()));
    sizes.cost.collectives_per_chunk = 2;
    sizes.cost.ops_per_chunk += 1 + candidate.tail_pointwise_ops;
  }
  return sizes;
}

// The GEMM rate of this rank for [m, k] x [k, n] with m up to `max_rows`,
// within a few milliseconds. The operands are made once at `max_rows` (the
// smallest candidate chunk's rows) and their leading rows used: one warm-up
// GEMM of 64 rows (packing, page faults) also says how many rows take ~4 ms,
// and that many (at most `max_rows`) are timed twice (gemmGflopsFromTimes
// reads the faster). Probing every candidate at its full size, as `hostir
// sp-mlp --chunks auto` does, costs seconds at the sizes; the
// per-chunk rate varies far less than the link term across candidates.
// Doubling the rows from 64, as this did before, timed every size on the
// way three times: 48-73 ms of planning on an AVX2 core, not 30-50
// (docs/performance.md, "Planning time on AVX2").
double probeGemmGflops(int64_t max_rows, int64_t k, int64_t n) {
  constexpr double kEnoughMs = 4;
  const at::Tensor a = probeOperand(max_rows, k);
  const at::Tensor b = probeOperand(k, n);
  const at::Tensor c = at::empty({max_rows, n});
  auto timedGemm = [&](int64_t rows) {
    at::Tensor out = c.narrow(0, 0, rows);
    const auto start = std::chrono::steady_clock::now();
    at::matmul_out(out, a.narrow(0, 0, rows), b);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  const int64_t warm_rows = std::min<int64_t>(64, max_rows);
  const double warm_ms = timedGemm(warm_rows);
  int64_t rows = warm_rows;
  while (rows < max_rows && warm_ms * static_cast<double>(rows) / warm_rows < kEnoughMs) {
    rows = std::min(2 * rows, max_rows);
  }
  const std::vector<double> times{timedGemm(rows), timedGemm(rows)};
  return gemmGflopsFromTimes(2.0 * static_cast<double>(rows * k * n), times);
}

}  // namespace

CalibratedStreamSplitPlanner::CalibratedStreamSplitPlanner(Communicator& communicator,
                                                           const Fusion& fusion,
                                                           std::vector<at::Tensor> inputs)
    : communicator_(communicator), fusion_(fusion), inputs_(std::move(inputs)) {}

std::vector<StreamSplitDecision> CalibratedStreamSplitPlanner::decide(
    const std::vector<StreamSplitCandidate>& candidates) {
  const auto start = std::chrono::steady_clock::now();
  ExpressionEvaluator ee;
  for (size_t i = 0; i < inputs_.size() && i < fusion_.inputs().size(); ++i) {
    const auto* tv = dynamic_cast<const TensorView*>(fusion_.inputs()[i]);
    if (tv != nullptr && inputs_[i].defined()) {
      // Uneven shards (torch.chunk's) can disagree on a shared extent from
      // this rank's view (0 rows here, 1 in a full tensor): the sizes only
      // price the candidates, so the first binding stands and the run's
      // agreement checks the inputs.
      try {
        ee.bindTensor(tv, inputs_[i]);
      } catch (const Error&) {
      }
    }
  }
  bool probed = false;
  double probe_ms = 0;
  std::vector<StreamSplitDecision> decisions(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const StreamSplitCandidate& candidate = candidates[i];
    if (!candidate.not_chunkable.empty()) {
      decisions[i].reason = candidate.not_chunkable;
      continue;
    }
    const std::vector<int64_t> team = shardingOf(candidate.gathered).mesh->vector();
    // A rank that cannot size the candidate (it holds none of the inputs
    // that give the sizes) offers only 1 chunk: rank 0's choice wins anyway.
    std::optional<CandidateSizes> sizes = sizesOf(ee, candidate);
    std::vector<int64_t> chunk_counts{1};
    for (int64_t chunks : {2, 4, 8, 16}) {
      if (sizes && chunks <= sizes->local_rows) {
        chunk_counts.push_back(chunks);
      }
    }
    const auto probe_start = std::chrono::steady_clock::now();
    const bool probed_before = probed;
    LinkCalibration link = linkOf(communicator_, team, probed);
    if (probed && !probed_before) {
      probe_ms +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - probe_start)
              .count();
    }
    PipelineCost cost;
    if (sizes) {
      const double gflops = probeGemmGflops(
          std::max<int64_t>(1, sizes->gemm_m / chunk_counts.back()), sizes->gemm_k, sizes->gemm_n);
      for (int64_t chunks : chunk_counts) {
        link.gemm_gflops[chunks] = gflops;
      }
      cost = sizes->cost;
    } else {
      link.gemm_gflops[1] = 1;
    }
    ChunkChoice choice = agreeOnChunks(communicator_, team, cost, link, chunk_counts);
    decisions[i] = {choice.chunks, choice.reason, choice.predicted_ms};
    largest_chunks_ = std::max(largest_chunks_, choice.chunks);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream summary;
  summary << std::fixed << std::setprecision(1) << describeStreamSplits(candidates, decisions)
          << "planning took " << ms - probe_ms << " ms";
  if (probed) {
    summary << ", plus " << probe_ms << " ms for the link's probe (once per process and team)";
  }
  summary << "\n";
  report_ = summary.str();
  return decisions;
}

}  // namespace hostir
