// Issue 11, item 5: one rule for the timeouts read from the environment
// (HOSTIR_STREAM_TIMEOUT_S and HOSTIR_COMM_TIMEOUT_S both go through
// parseTimeoutSeconds): a plain number of seconds from 1 ms to one week;
// everything else is an error naming the variable and saying what is valid.

#include <gtest/gtest.h>

#include <string>

#include "hostir/ir/error.h"
#include "hostir/runtime/streams/stream_timeout.h"

namespace hostir::runtime {
namespace {

using std::chrono::milliseconds;

TEST(TimeoutParsing, PlainNumbersOfSeconds) {
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "60"), milliseconds(60'000));
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "0.5"), milliseconds(500));
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "1e3"), milliseconds(1'000'000));
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "0.001"), milliseconds(1));
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "604800"), milliseconds(604'800'000));
  EXPECT_EQ(parseTimeoutSeconds("HOSTIR_STREAM_TIMEOUT_S", "2.0004"), milliseconds(2000));
}

TEST(TimeoutParsing, EverythingElseIsAnErrorNamingTheVariable) {
  for (const char* bad : {"inf", "-inf", "nan", "1e16", "1e-9", "0", "-1", "0.0004", "604801",
                          "abc", "60s", " 60", "0x10", "1e400", "", "--1", "1e"}) {
    try {
      parseTimeoutSeconds("HOSTIR_COMM_TIMEOUT_S", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind(std::string("HOSTIR_COMM_TIMEOUT_S='") + bad + "'", 0), 0u)
          << message;
      EXPECT_NE(message.find("from 0.001 to 604800"), std::string::npos) << message;
    }
  }
}

TEST(TimeoutParsing, SetDefaultWaitTimeoutRejectsOutOfRange) {
  const WaitTimeout before = defaultWaitTimeout();
  EXPECT_THROW(setDefaultWaitTimeout(milliseconds(0)), Error);
  EXPECT_THROW(setDefaultWaitTimeout(milliseconds(-5)), Error);
  EXPECT_THROW(setDefaultWaitTimeout(std::chrono::hours(24 * 365)), Error);
  EXPECT_EQ(defaultWaitTimeout(), before);
}

TEST(TimeoutParsing, LongTimeoutsReadCorrectly) {
  // What used to print "timed out after -9223372036854775808 ms".
  EXPECT_EQ(describeTimeout(parseTimeoutSeconds("X", "604800")), "604800 s");
  EXPECT_EQ(describeTimeout(parseTimeoutSeconds("X", "0.25")), "250 ms");
}

}  // namespace
}  // namespace hostir::runtime
