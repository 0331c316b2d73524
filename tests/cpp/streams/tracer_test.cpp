#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/streams/tracer.h"
#include "streams/json_reader.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using testing::JsonReader;
using testing::JsonValue;
using testing::kGenerousWait;
using testing::Signal;

std::vector<const JsonValue*> completeEvents(const JsonValue& trace) {
  std::vector<const JsonValue*> found;
  for (const JsonValue& event : trace.at("traceEvents").array) {
    if (event.at("ph").string == "X") {
      found.push_back(&event);
    }
  }
  return found;
}

TEST(Tracer, RecordsEveryExecutedWorkItemWithItsStream) {
  Tracer tracer;
  tracer.start();
  StreamPool pool(4, tracer);
  pool.stream(0).enqueue("caller work", [] {});
  pool.stream(1).enqueue("work one", [] {});
  pool.stream(2).enqueue("work two", [] {});
  pool.stream(2).waitStream(pool.stream(1));
  pool.synchronizeAll();
  tracer.stop();

  std::set<std::pair<std::string, int>> seen;
  for (const TraceEvent& event : tracer.events()) {
    seen.insert({event.name, event.stream_id});
    EXPECT_LE(event.start_us, event.end_us);
  }
  EXPECT_TRUE(seen.count({"caller work", 0}));
  EXPECT_TRUE(seen.count({"work one", 1}));
  EXPECT_TRUE(seen.count({"work two", 2}));
  EXPECT_TRUE(seen.count({"wait for event on stream 1 after 'work one'", 2}));
  EXPECT_EQ(seen.size(), 4u);
}

// What a work item releases when it ends (a compute turn) is released after
// its trace event ended: the event shows the work, not the time a thread
// woken by the release held the core.
TEST(Tracer, WorkEndsInTheTraceBeforeItsThenRuns) {
  Tracer tracer;
  tracer.start();
  StreamPool pool(2, tracer);
  std::int64_t then_us = 0;  // written by the worker, read after the sync
  auto label = std::make_shared<const std::string>("gemm");
  pool.stream(1).enqueue(
      label, [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, "compute",
      [&] {
        then_us = tracer.nowUs();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      });
  pool.synchronizeAll();
  tracer.stop();
  std::vector<TraceEvent> events = tracer.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_LE(events[0].end_us, then_us);
  EXPECT_LT(events[0].end_us - events[0].start_us, 40000) << "the trace counted the release";
}

TEST(Tracer, ThenRunsWhenTheWorkThrowsOrIsSkipped) {
  StreamPool pool(2);
  Stream& stream = pool.stream(1);
  auto label = std::make_shared<const std::string>("fails");
  std::atomic<int> released{0};
  stream.enqueue(
      label, [] { throw std::runtime_error("bad"); }, "compute", [&] { ++released; });
  stream.enqueue(
      label, [] {}, "compute", [&] { ++released; });  // skipped: the stream failed
  EXPECT_THROW(stream.synchronize(), Error);
  EXPECT_EQ(released, 2);
  ASSERT_TRUE(stream.takeFailure().has_value());
}

// A `then` that throws fails the stream like its work would, whatever it
// throws, instead of ending the process from the worker thread.
TEST(Tracer, ThenThatThrowsFailsTheStream) {
  StreamPool pool(2);
  Stream& stream = pool.stream(1);
  auto label = std::make_shared<const std::string>("release");
  stream.enqueue(
      label, [] {}, "compute", [] { throw 42; });
  EXPECT_THROW(stream.synchronize(), Error);
  std::optional<StreamFailure> failure = stream.takeFailure();
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->describe().find("release"), std::string::npos) << failure->describe();
  EXPECT_NE(failure->message.find("not derived from std::exception"), std::string::npos)
      << failure->describe();
}

TEST(Tracer, RecordsNothingWhenStopped) {
  Tracer tracer;
  StreamPool pool(4, tracer);
  pool.stream(1).enqueue("untraced", [] {});
  pool.synchronizeAll();
  EXPECT_TRUE(tracer.events().empty());
  tracer.start();
  tracer.stop();
  pool.stream(1).enqueue("untraced", [] {});
  pool.synchronizeAll();
  EXPECT_TRUE(tracer.events().empty());
}

// Two streams overlap for sure (each waits for the other to have started),
// and the JSON shows it: two "X" events on distinct tids whose intervals
// intersect.
TEST(Tracer, JsonIsValidChromeTraceShowingOverlapOnDistinctTids) {
  Tracer tracer;
  tracer.setProcessId(7);
  tracer.start();
  StreamPool pool(4, tracer);
  Signal one_started;
  Signal two_started;
  pool.stream(1).enqueue("compute \"chunk\" 0", [&] {
    one_started.raise();
    HOSTIR_CHECK(two_started.waitFor(kGenerousWait), "no overlap");
  });
  pool.stream(2).enqueue("receive chunk 1\n", [&] {
    two_started.raise();
    HOSTIR_CHECK(one_started.waitFor(kGenerousWait), "no overlap");
  });
  pool.synchronizeAll();
  tracer.stop();

  const JsonValue trace = JsonReader::parse(tracer.toJson());
  const auto events = completeEvents(trace);
  ASSERT_EQ(events.size(), 2u);
  std::set<int> tids;
  for (const JsonValue* event : events) {
    EXPECT_EQ(event->at("pid").number, 7);
    EXPECT_TRUE(event->has("ts"));
    EXPECT_TRUE(event->has("dur"));
    EXPECT_TRUE(event->has("name"));
    tids.insert(static_cast<int>(event->at("tid").number));
  }
  EXPECT_EQ(tids, (std::set<int>{1, 2}));
  std::set<std::string> names{events[0]->at("name").string, events[1]->at("name").string};
  // Names are one line; the whole label (escaped newline included) is in
  // the event's args.
  EXPECT_EQ(names, (std::set<std::string>{"compute \"chunk\" 0", "receive chunk 1"}));
  for (const JsonValue* event : events) {
    if (event->at("name").string == "receive chunk 1") {
      EXPECT_EQ(event->at("args").at("detail").string, "receive chunk 1\n");
    }
  }

  const double start_a = events[0]->at("ts").number;
  const double end_a = start_a + events[0]->at("dur").number;
  const double start_b = events[1]->at("ts").number;
  const double end_b = start_b + events[1]->at("dur").number;
  EXPECT_LE(std::max(start_a, start_b), std::min(end_a, end_b)) << "the intervals do not overlap";

  // Each stream's row is named.
  std::set<std::string> row_names;
  for (const JsonValue& event : trace.at("traceEvents").array) {
    if (event.at("ph").string == "M" && event.at("name").string == "thread_name") {
      row_names.insert(event.at("args").at("name").string);
    }
  }
  EXPECT_EQ(row_names, (std::set<std::string>{"stream 1", "stream 2"}));
}

TEST(Tracer, WritesTheJsonToAFile) {
  Tracer tracer;
  tracer.start();
  StreamPool pool(4, tracer);
  pool.callerStream().enqueue("caller work", [] {});
  pool.synchronizeAll();
  tracer.stop();

  const std::string path = ::testing::TempDir() + "hostir_tracer_test.json";
  tracer.write(path);
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  const JsonValue trace = JsonReader::parse(contents.str());
  ASSERT_EQ(completeEvents(trace).size(), 1u);
  EXPECT_EQ(completeEvents(trace)[0]->at("name").string, "caller work");
  std::remove(path.c_str());

  EXPECT_THROW(tracer.write("/nonexistent-dir/trace.json"), Error);
}

TEST(Tracer, StartClearsEarlierEvents) {
  Tracer tracer;
  tracer.start();
  tracer.record(TraceEvent{"old", 1, 0, 1});
  tracer.start();
  EXPECT_TRUE(tracer.events().empty());
}

TEST(Tracer, JsonFromAnEventOnHoldsThatEventAndTheLaterOnes) {
  // A stretch of a longer trace (hostir.trace inside HOSTIR_TRACE).
  Tracer tracer;
  tracer.start();
  tracer.record(TraceEvent{"before", 1, 0, 1});
  const std::size_t first = tracer.eventCount();
  tracer.record(TraceEvent{"inside", 2, 1, 2});
  tracer.record(TraceEvent{"also inside", 1, 2, 3});
  ASSERT_EQ(tracer.eventCount(), 3u);
  // (completeEvents points into the parsed value: keep it alive.)
  const JsonValue stretch = JsonReader::parse(tracer.toJson(first));
  std::vector<std::string> names;
  for (const JsonValue* event : completeEvents(stretch)) {
    names.push_back(event->at("name").string);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"inside", "also inside"}));
  const JsonValue whole = JsonReader::parse(tracer.toJson());
  EXPECT_EQ(completeEvents(whole).size(), 3u);
  const JsonValue past_the_end = JsonReader::parse(tracer.toJson(7));
  EXPECT_TRUE(completeEvents(past_the_end).empty());
}

TEST(Tracer, AStretchStartsAndStopsATraceOrLeavesARecordingOneGoing) {
  // (The TSan build of this suite may run at the same time: a file of its own.)
  const std::string path =
      ::testing::TempDir() + "hostir_stretch_test." + std::to_string(::getpid()) + ".json";
  auto written_names = [&] {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    const JsonValue trace = JsonReader::parse(text.str());
    std::vector<std::string> names;
    for (const JsonValue* event : completeEvents(trace)) {
      names.push_back(event->at("name").string);
    }
    return names;
  };
  // Not recording: the stretch records, then stops.
  Tracer tracer;
  Tracer::Stretch alone = tracer.beginStretch();
  EXPECT_TRUE(tracer.isEnabled());
  tracer.record(TraceEvent{"alone", 1, 0, 1});
  EXPECT_EQ(tracer.endStretch(alone, path), 1u);
  EXPECT_FALSE(tracer.isEnabled());
  EXPECT_EQ(written_names(), (std::vector<std::string>{"alone"}));
  // Recording (HOSTIR_TRACE): the stretch is its own events, the trace goes on whole.
  tracer.start();
  tracer.record(TraceEvent{"before", 1, 0, 1});
  Tracer::Stretch inside = tracer.beginStretch();
  tracer.record(TraceEvent{"inside", 1, 1, 2});
  EXPECT_EQ(tracer.endStretch(inside, path), 1u);
  EXPECT_TRUE(tracer.isEnabled());
  tracer.record(TraceEvent{"after", 1, 2, 3});
  EXPECT_EQ(written_names(), (std::vector<std::string>{"inside"}));
  EXPECT_EQ(tracer.eventCount(), 3u);
  std::remove(path.c_str());
}

TEST(Tracer, EnvironmentVariableNamesTheOutput) {
  const char* saved = std::getenv("HOSTIR_TRACE");
  const std::string restore = saved ? saved : "";
  setenv("HOSTIR_TRACE", "/tmp/run.json", 1);
  EXPECT_EQ(Tracer::requestedPath(), std::optional<std::string>("/tmp/run.json"));
  unsetenv("HOSTIR_TRACE");
  EXPECT_FALSE(Tracer::requestedPath().has_value());
  if (saved) {
    setenv("HOSTIR_TRACE", restore.c_str(), 1);
  }
}

}  // namespace
}  // namespace hostir::runtime

namespace hostir::runtime {
namespace {

TEST(TracerFiles, EachRankOfAJobWritesItsOwnFile) {
  EXPECT_EQ(Tracer::pathForRank("trace.json", std::nullopt), "trace.json");
  EXPECT_EQ(Tracer::pathForRank("trace.json", 1), "trace.rank1.json");
  EXPECT_EQ(Tracer::pathForRank("out/t-{rank}.json", 3), "out/t-3.json");
  EXPECT_EQ(Tracer::pathForRank("trace", 0), "trace.rank0");
}

TEST(TracerFiles, LongLabelsGetShortNamesWithTheWholeTextInArgs) {
  Tracer tracer;
  tracer.start();
  const std::string label =
      "T7_l_float[iS29{( minimum(( ( StreamIdx * i30 ) + i30 ), i27) )}]\n" + std::string(300, 'x');
  tracer.record(TraceEvent{label, 1, 0, 5, "compute"});
  tracer.record(TraceEvent{"short", 1, 5, 6, "wait"});
  tracer.stop();
  const std::string json = tracer.toJson();
  EXPECT_NE(
      json.find("\"name\":\"T7_l_float[iS29{( minimum(( ( StreamIdx * i30 ) + i30 ), i27...\""),
      std::string::npos)
      << json;
  EXPECT_NE(json.find("\"detail\":\"T7_l_float"), std::string::npos) << json;
  EXPECT_NE(json.find("\"cat\":\"wait\",\"name\":\"short\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"process_name\""), std::string::npos) << json;
}

}  // namespace
}  // namespace hostir::runtime
