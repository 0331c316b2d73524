#pragma once

#include <optional>
#include <string>

namespace hostir {

// Which engine runs a segment, decided in the compile stage and recorded on
// its HostUnit (runtime/segment_engines.h decides it: the choice needs the
// kernels layer), so that `hostir lower` and the host IR text say what runs.
enum class SegmentEngineKind {
  Kernel,           // one compiled kernel; detail: its hash and target
  GemmWithPostOps,  // one oneDNN matmul with post-ops; detail: the epilogue
  Aten,             // op by op through ATen; detail: why not a kernel
};

struct SegmentEngine {
  SegmentEngineKind kind = SegmentEngineKind::Aten;
  std::string detail;

  bool operator==(const SegmentEngine&) const = default;
};

// "kernel", "gemm_post_ops", "aten": the words of the textual host IR.
std::string engineWord(SegmentEngineKind kind);
std::optional<SegmentEngineKind> engineKindNamed(const std::string& word);
std::string engineWords();

// For a reader: "compiled kernel <detail>", "GEMM with post-ops: <detail>",
// "ATen: <detail>".
std::string describe(const SegmentEngine& engine);

}  // namespace hostir
