#pragma once

// Shared helpers for the compiler-side IR tests (no ATen).

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/ir/tensor_view.h"

namespace hostir::test {

// Whether `text` contains every string of `parts`; on failure says which one
// is missing and shows the whole text.
inline ::testing::AssertionResult containsAll(const std::string& text,
                                              std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    if (text.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "missing \"" << part << "\" in message:\n" << text;
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs `statement`, expects a hostir::Error and returns its message ("" and a
// test failure when nothing or something else is thrown).
template <typename F>
std::string errorMessage(F&& statement) {
  try {
    statement();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected hostir::Error, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected hostir::Error, nothing was thrown";
  return "";
}

// EXPECT_HOSTIR_ERROR(stmt, {"part1", "part2"}): stmt throws hostir::Error
// whose message contains every part.
#define EXPECT_HOSTIR_ERROR(statement, ...)                                               \
  do {                                                                                    \
    std::string hostir_test_message = ::hostir::test::errorMessage([&]() { statement; }); \
    if (!hostir_test_message.empty()) {                                                   \
      EXPECT_TRUE(::hostir::test::containsAll(hostir_test_message, __VA_ARGS__));         \
    }                                                                                     \
  } while (false)

// An integer constant in the current fusion.
inline Scalar* constant(int64_t value) {
  return IrBuilder::create<Scalar>(value);
}

// A free integer symbol in the current fusion.
inline Scalar* symbol() {
  return IrBuilder::create<Scalar>(DataType::Int64);
}

// The constant value of an extent; fails the test when it is not constant.
inline int64_t constExtent(const IterDomain* id) {
  const auto* scalar = dynamic_cast<const Scalar*>(id->extent());
  EXPECT_TRUE(scalar != nullptr && scalar->isConstInt())
      << id->toInlineString() << " has no constant extent";
  return scalar != nullptr && scalar->isConstInt() ? scalar->constInt() : -1;
}

// Shape (logical axes without reductions) as printed IterDomains.
inline std::vector<std::string> shapeStrings(const TensorView* tv) {
  std::vector<std::string> result;
  for (IterDomain* id : tv->shapeDomain()) {
    result.push_back(id->toInlineString());
  }
  return result;
}

// Base fixture: a fresh fusion made current for the test.
class IrTest : public ::testing::Test {
 protected:
  Fusion fusion_;
  FusionGuard guard_{&fusion_};
};

}  // namespace hostir::test
