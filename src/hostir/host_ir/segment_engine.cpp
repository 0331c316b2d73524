#include "hostir/host_ir/segment_engine.h"

#include <array>
#include <utility>

namespace hostir {

namespace {
constexpr std::array<std::pair<SegmentEngineKind, const char*>, 3> kWords = {{
    {SegmentEngineKind::Kernel, "kernel"},
    {SegmentEngineKind::GemmWithPostOps, "gemm_post_ops"},
    {SegmentEngineKind::Aten, "aten"},
}};
}  // namespace

std::string engineWord(SegmentEngineKind kind) {
  for (const auto& [value, word] : kWords) {
    if (value == kind) {
      return word;
    }
  }
  return "?";
}

std::optional<SegmentEngineKind> engineKindNamed(const std::string& word) {
  for (const auto& [value, spelled] : kWords) {
    if (word == spelled) {
      return value;
    }
  }
  return std::nullopt;
}

std::string engineWords() {
  std::string words;
  for (const auto& [value, word] : kWords) {
    words += (words.empty() ? "" : ", ") + std::string(word);
  }
  return words;
}

std::string describe(const SegmentEngine& engine) {
  switch (engine.kind) {
    case SegmentEngineKind::Kernel: return "compiled kernel " + engine.detail;
    case SegmentEngineKind::GemmWithPostOps: return "GEMM with post-ops: " + engine.detail;
    case SegmentEngineKind::Aten: return "ATen: " + engine.detail;
  }
  return "?";
}

}  // namespace hostir
