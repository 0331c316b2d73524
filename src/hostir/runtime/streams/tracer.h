#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hostir::runtime {

// One executed work item: what ran, on which stream, and when (microseconds
// of the machine's steady clock, shared by every process on it).
struct TraceEvent {
  std::string name;
  int stream_id = 0;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  // "compute", "communication" or "wait": what a timeline colours apart.
  std::string category = "compute";
};

// Records every work item the stream runtime executes and writes them as
// Chrome trace / Perfetto JSON ("traceEvents", complete events "ph":"X",
// tid = stream id), so chrome://tracing or ui.perfetto.dev shows one row per
// stream and the overlap between them. Thread-safe; recording while disabled
// costs one atomic load.
class Tracer {
 public:
  Tracer();

  // The tracer streams use unless given another. If HOSTIR_TRACE=path.json is
  // set when it is first used, it starts enabled and writes to that path when
  // the process exits.
  static Tracer& global();

  // The path HOSTIR_TRACE asks for, if any, for this process: in a
  // launched job (RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID set) each rank
  // writes its own file, `{rank}` in the path replaced by the rank or
  // `.rankN` put before `.json` (trace.json -> trace.rank1.json).
  static std::optional<std::string> requestedPath();
  static std::string pathForRank(const std::string& path, std::optional<int> rank);
  // This process's rank in a launched job, if any.
  static std::optional<int> launchRank();

  // start() clears earlier events and begins recording; stop() ends it and
  // keeps the events for events(), toJson() and write().
  void start();
  void stop();
  bool isEnabled() const {
    return enabled_.load(std::memory_order_acquire);
  }

  // The trace's "pid": defaults to the rank in a launched job (launchRank()),
  // else the OS process id, so the ranks' traces merge side by side.
  void setProcessId(int pid);

  // Names the row of `lane` (a stream id, or another lane such as a link's
  // in-flight collectives); rows without a name are "stream N".
  void setLaneName(int lane, std::string name);

  std::int64_t nowUs() const;
  void record(TraceEvent event);

  std::vector<TraceEvent> events(std::size_t first_event = 0) const;
  std::size_t eventCount() const;
  // The events from the `first_event`-th on (0: all), so that a stretch of
  // a run can be written while a longer trace goes on recording.
  std::string toJson(std::size_t first_event = 0) const;
  // Throws hostir::Error if the file cannot be written.
  void write(const std::string& path, std::size_t first_event = 0) const;

  // A stretch of a run to trace on its own (`hostir sp-mlp --trace`,
  // Python's hostir.trace). Inside a trace already recording (HOSTIR_TRACE,
  // an enclosing stretch) it neither clears nor stops it: the stretch is the
  // events recorded between its begin and its end.
  struct Stretch {
    bool was_recording = false;
    std::size_t first_event = 0;
  };
  Stretch beginStretch();
  // Stops recording unless it was before the stretch began, and writes the
  // stretch's events to `path`; returns how many there are. Throws
  // hostir::Error if the file cannot be written.
  std::size_t endStretch(const Stretch& stretch, const std::string& path);
  // Stops recording unless it was before the stretch began, and returns the
  // stretch's events (Executor::runMeasuringExposure reads them).
  std::vector<TraceEvent> endStretch(const Stretch& stretch);

 private:
  const std::chrono::steady_clock::time_point epoch_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  std::map<int, std::string> lane_names_;
  int process_id_;
};

}  // namespace hostir::runtime
