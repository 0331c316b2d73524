#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "streams/signal.h"

namespace hostir::runtime {
namespace {

using testing::kGenerousWait;
using testing::Signal;

// A's work after waiting for B's event sees what B wrote before the event.
// The data is plain (not atomic): under ThreadSanitizer a missing
// happens-before edge would also be reported as a race.
TEST(Event, WorkAfterWaitObservesEarlierWritesOfTheOtherStream) {
  StreamPool pool;
  for (int round = 0; round < 20; ++round) {
    std::vector<int> produced;
    std::vector<int> observed;
    Stream& producer = pool.stream(1);
    Stream& consumer = pool.stream(2);
    producer.enqueue("produce", [&produced, round] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      produced.assign(100, round);
    });
    consumer.waitEvent(producer.recordEvent());
    consumer.enqueue("consume", [&] { observed = produced; });
    pool.synchronizeAll();
    EXPECT_EQ(observed, std::vector<int>(100, round));
  }
}

// Enqueueing a wait never blocks the host: the host gets past waitEvent and
// the consumer's enqueue while the producer is still blocked on the host.
TEST(Event, WaitBlocksTheStreamNotTheHost) {
  StreamPool pool;
  Signal host_released_producer;
  int value = 0;
  int seen = -1;
  Stream& producer = pool.stream(1);
  Stream& consumer = pool.stream(2);
  producer.enqueue("blocked producer", [&] {
    HOSTIR_CHECK(host_released_producer.waitFor(kGenerousWait), "host never released us");
    value = 42;
  });
  consumer.waitStream(producer);
  consumer.enqueue("consume", [&] { seen = value; });
  host_released_producer.raise();  // reached only if the calls above returned
  pool.synchronizeAll();
  EXPECT_EQ(seen, 42);
}

TEST(Event, CompletesOnlyAfterEarlierWork) {
  StreamPool pool;
  Signal release;
  Stream& stream = pool.stream(1);
  stream.enqueue("held", [&] { release.waitFor(kGenerousWait); });
  Event event = stream.recordEvent();
  EXPECT_FALSE(event.isComplete());
  release.raise();
  event.synchronize();
  EXPECT_TRUE(event.isComplete());
  EXPECT_FALSE(event.failure().has_value());
  pool.synchronizeAll();
}

TEST(Event, DescribesWhereItWasRecorded) {
  StreamPool pool;
  Stream& stream = pool.stream(3);
  EXPECT_EQ(stream.recordEvent().describe(), "event on stream 3 (recorded before any work)");
  stream.enqueue("T2 = add(T0, T1)", [] {});
  EXPECT_EQ(stream.recordEvent().describe(), "event on stream 3 after 'T2 = add(T0, T1)'");
  pool.synchronizeAll();
}

TEST(Event, UnrecordedEventIsComplete) {
  Event event;
  EXPECT_TRUE(event.isComplete());
  EXPECT_NO_THROW(event.synchronize(std::chrono::milliseconds(1)));
  StreamPool pool;
  bool ran = false;
  pool.stream(1).waitEvent(event);
  pool.stream(1).enqueue("after", [&] { ran = true; });
  pool.synchronizeAll();
  EXPECT_TRUE(ran);
}

}  // namespace
}  // namespace hostir::runtime
