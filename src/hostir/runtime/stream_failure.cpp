#include "hostir/runtime/stream_failure.h"

#include <atomic>
#include <utility>

namespace hostir::runtime {

std::string StreamFailure::describe() const {
  return "stream " + std::to_string(stream_id) + " failed running '" + work_label + "': " + message;
}

StreamFailure makeStreamFailure(int stream_id, std::string work_label, std::string message) {
  static std::atomic<std::uint64_t> next_sequence{1};
  return StreamFailure{stream_id, std::move(work_label), std::move(message),
                       next_sequence.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace hostir::runtime
