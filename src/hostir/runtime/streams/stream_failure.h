#pragma once

#include <cstdint>
#include <string>

namespace hostir::runtime {

// What went wrong on a stream: the work that threw (by its label, e.g. the
// failed expr's printed form), the stream it ran on and the error's text.
// `sequence` orders failures across all streams, so the caller is told about
// the first one (later failures are often consequences of it).
struct StreamFailure {
  int stream_id = 0;
  std::string work_label;
  std::string message;
  std::uint64_t sequence = 0;

  // "<message> (stream 2 failed running 'T2 = add(T0, T1)')": the cause first,
  // the label on one line, at most 160 characters.
  std::string describe() const;
};

// Builds a failure stamped with the next global sequence number.
StreamFailure makeStreamFailure(int stream_id, std::string work_label, std::string message);

}  // namespace hostir::runtime
