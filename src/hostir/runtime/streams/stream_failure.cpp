#include "hostir/runtime/streams/stream_failure.h"

#include <atomic>
#include <utility>

#include "hostir/ir/one_line.h"

namespace hostir::runtime {

std::string StreamFailure::describe() const {
  // The cause first; the work after it, on one line (a label is an expr's
  // printed form, which can span lines and run long).
  std::string label = oneLine(work_label, 160);
  return message + " (stream " + std::to_string(stream_id) + " failed running '" + label + "')";
}

StreamFailure makeStreamFailure(int stream_id, std::string work_label, std::string message) {
  static std::atomic<std::uint64_t> next_sequence{1};
  return StreamFailure{stream_id, std::move(work_label), std::move(message),
                       next_sequence.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace hostir::runtime
