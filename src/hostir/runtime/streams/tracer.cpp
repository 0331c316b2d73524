#include "hostir/runtime/streams/tracer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <utility>

#include "hostir/ir/error.h"

namespace hostir::runtime {
namespace {

void appendJsonString(std::ostringstream& out, const std::string& text) {
  out << '"';
  for (const char c : text) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\t': out << "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out << escaped;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

void writeGlobalTraceAtExit() {
  const auto path = Tracer::requestedPath();
  if (!path) {
    return;
  }
  // Exceptions must not escape an exit handler; report and carry on.
  try {
    Tracer::global().write(*path);
  } catch (const std::exception& error) {
    std::cerr << "hostir: could not write HOSTIR_TRACE: " << error.what() << "\n";
  }
}

}  // namespace

// Times count from the steady clock's epoch (boot), which every process on
// a machine shares, so the traces of several ranks line up side by side.
// Under a launcher the trace's pid is the rank (lanes read "rank 1", and the
// ranks' files merge side by side); alone, the OS process id.
Tracer::Tracer()
    : epoch_(std::chrono::steady_clock::time_point{}),
      process_id_(launchRank().value_or(static_cast<int>(getpid()))) {}

Tracer& Tracer::global() {
  // Never destroyed: stream workers of static pools may still record while
  // the process exits.
  static Tracer* const tracer = [] {
    auto* created = new Tracer();
    if (requestedPath()) {
      created->start();
      std::atexit(writeGlobalTraceAtExit);
    }
    return created;
  }();
  return *tracer;
}

std::optional<std::string> Tracer::requestedPath() {
  const char* path = std::getenv("HOSTIR_TRACE");
  if (path == nullptr || *path == '\0') {
    return std::nullopt;
  }
  return pathForRank(path, launchRank());
}

std::optional<int> Tracer::launchRank() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    const char* text = std::getenv(name);
    if (text != nullptr && *text != '\0') {
      char* end = nullptr;
      const long rank = std::strtol(text, &end, 10);
      if (*end == '\0' && rank >= 0) {
        return static_cast<int>(rank);
      }
    }
  }
  return std::nullopt;
}

std::string Tracer::pathForRank(const std::string& path, std::optional<int> rank) {
  if (!rank) {
    return path;
  }
  const std::string number = std::to_string(*rank);
  if (auto placeholder = path.find("{rank}"); placeholder != std::string::npos) {
    return path.substr(0, placeholder) + number + path.substr(placeholder + 6);
  }
  const std::string suffix = ".json";
  if (path.size() > suffix.size() && path.ends_with(suffix)) {
    return path.substr(0, path.size() - suffix.size()) + ".rank" + number + suffix;
  }
  return path + ".rank" + number;
}

void Tracer::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  enabled_.store(true, std::memory_order_release);
}

void Tracer::stop() {
  enabled_.store(false, std::memory_order_release);
}

void Tracer::setLaneName(int lane, std::string name) {
  std::lock_guard<std::mutex> lock(mutex_);
  lane_names_[lane] = std::move(name);
}

void Tracer::setProcessId(int pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  process_id_ = pid;
}

std::int64_t Tracer::nowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               epoch_)
      .count();
}

void Tracer::record(TraceEvent event) {
  if (!isEnabled()) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<TraceEvent> Tracer::events(std::size_t first_event) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {events_.begin() + static_cast<std::ptrdiff_t>(std::min(first_event, events_.size())),
          events_.end()};
}

std::size_t Tracer::eventCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

std::string Tracer::toJson(std::size_t first_event) const {
  std::vector<TraceEvent> snapshot;
  std::map<int, std::string> lane_names;
  int pid = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto first = static_cast<std::ptrdiff_t>(std::min(first_event, events_.size()));
    snapshot.assign(events_.begin() + first, events_.end());
    lane_names = lane_names_;
    pid = process_id_;
  }
  std::ostringstream out;
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  auto separate = [&] {
    out << (first ? "\n" : ",\n");
    first = false;
  };
  // Name each stream's row; "thread_name" metadata is what both viewers read.
  std::set<int> streams;
  for (const TraceEvent& event : snapshot) {
    streams.insert(event.stream_id);
  }
  for (const int stream : streams) {
    separate();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << stream
        << ",\"args\":{\"name\":";
    auto named = lane_names.find(stream);
    appendJsonString(out, named != lane_names.end() ? named->second
                          : stream == 0             ? "stream 0 (caller)"
                                                    : "stream " + std::to_string(stream));
    out << "}}";
  }
  separate();
  out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"args\":{\"name\":";
  appendJsonString(out, launchRank() ? "rank " + std::to_string(*launchRank()) : "hostir");
  out << "}}";
  for (const TraceEvent& event : snapshot) {
    separate();
    out << "{\"ph\":\"X\",\"cat\":";
    appendJsonString(out, event.category);
    out << ",\"name\":";
    // A short name (an expr's first line can be hundreds of characters);
    // the whole label is in the event's args.
    constexpr std::size_t kMaxName = 60;
    std::string name = event.name.substr(0, event.name.find('\n'));
    const bool shortened = name.size() > kMaxName || name.size() < event.name.size();
    if (name.size() > kMaxName) {
      name = name.substr(0, kMaxName) + "...";
    }
    appendJsonString(out, name);
    if (shortened) {
      out << ",\"args\":{\"detail\":";
      appendJsonString(out, event.name);
      out << "}";
    }
    out << ",\"pid\":" << pid << ",\"tid\":" << event.stream_id << ",\"ts\":" << event.start_us
        << ",\"dur\":" << (event.end_us - event.start_us) << "}";
  }
  out << "\n]}\n";
  return out.str();
}

Tracer::Stretch Tracer::beginStretch() {
  if (isEnabled()) {
    return {.was_recording = true, .first_event = eventCount()};
  }
  start();
  return {};
}

std::size_t Tracer::endStretch(const Stretch& stretch, const std::string& path) {
  if (!stretch.was_recording) {
    stop();
  }
  const std::size_t recorded = eventCount();
  write(path, stretch.first_event);
  return recorded - std::min(stretch.first_event, recorded);
}

std::vector<TraceEvent> Tracer::endStretch(const Stretch& stretch) {
  if (!stretch.was_recording) {
    stop();
  }
  return events(stretch.first_event);
}

void Tracer::write(const std::string& path, std::size_t first_event) const {
  std::ofstream file(path, std::ios::out | std::ios::trunc);
  HOSTIR_CHECK(file.is_open(), "cannot open trace file '", path, "' for writing");
  file << toJson(first_event);
  file.close();
  HOSTIR_CHECK(!file.fail(), "failed writing trace file '", path, "'");
}

}  // namespace hostir::runtime
