#include "core_ir/ir_check.h"

#include <gtest/gtest.h>

namespace hostir::test {
namespace {

const char* kText = R"(%HostIrContainer { (T0) -> (T1) :
  GetCurrentStream into Stream 0
  FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    Synchronize Stream 0
  SetCurrentStream to Stream 0
} // %HostIrContainer
)";

TEST(IrCheck, OrderedChecksAndNextLines) {
  EXPECT_TRUE(irCheck(kText, R"(
    CHECK:      GetCurrentStream into Stream 0
    CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
    CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
    CHECK-NEXT:   Synchronize Stream 0
    CHECK:      } // %HostIrContainer
  )"));
}

TEST(IrCheck, FailsOnAMissingLineNamingTheDirective) {
  auto result = irCheck(kText, "CHECK: Deallocate\n");
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("script line 1 (CHECK: Deallocate): not found"),
            std::string::npos)
      << result.message();
}

TEST(IrCheck, ChecksAreOrdered) {
  EXPECT_FALSE(irCheck(kText, "CHECK: Synchronize\nCHECK: GetCurrentStream\n"));
}

TEST(IrCheck, NextMustBeTheVeryNextLine) {
  EXPECT_FALSE(irCheck(kText, "CHECK: GetCurrentStream\nCHECK-NEXT: SetCurrentStream\n"));
}

TEST(IrCheck, NotForbidsTheTextBetweenTwoMatches) {
  EXPECT_TRUE(irCheck(kText, "CHECK: FOR\nCHECK-NOT: Deallocate\nCHECK: } //\n"));
  auto result = irCheck(kText, "CHECK: GetCurrentStream\nCHECK-NOT: Synchronize\nCHECK: } //\n");
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("found on text line 5"), std::string::npos)
      << result.message();
  // A trailing CHECK-NOT covers the rest of the text.
  EXPECT_FALSE(irCheck(kText, "CHECK: FOR\nCHECK-NOT: SetCurrentStream to Stream 0\n"));
}

}  // namespace
}  // namespace hostir::test
