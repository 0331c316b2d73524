#include "hostir/runtime/streams/stream_failure.h"

#include <atomic>
#include <utility>

namespace hostir::runtime {

std::string StreamFailure::describe() const {
  // The cause first; the work after it, on one line: a label is an expr's
  // printed form, which can span lines and run long.
  std::string label;
  bool space = false;
  for (char c : work_label) {  // on one line: the printed form of an expr wraps
    if (c == '\n' || c == ' ') {
      space = !label.empty();
      continue;
    }
    if (space) {
      label += ' ';
      space = false;
    }
    label += c;
  }
  constexpr std::size_t kLabelLimit = 160;
  if (label.size() > kLabelLimit) {
    label = label.substr(0, kLabelLimit - 3) + "...";
  }
  return message + " (stream " + std::to_string(stream_id) + " failed running '" + label + "')";
}

StreamFailure makeStreamFailure(int stream_id, std::string work_label, std::string message) {
  static std::atomic<std::uint64_t> next_sequence{1};
  return StreamFailure{stream_id, std::move(work_label), std::move(message),
                       next_sequence.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace hostir::runtime
