#pragma once

#include <string>

#include <gtest/gtest.h>

#include "hostir/ir/error.h"

namespace hostir {

// Runs `statement`, expecting a hostir::Error whose message contains every
// given fragment.
#define EXPECT_HOSTIR_ERROR(statement, ...)                                    \
  do {                                                                         \
    try {                                                                      \
      statement;                                                               \
      ADD_FAILURE() << "expected hostir::Error from: " #statement;             \
    } catch (const ::hostir::Error& error) {                                   \
      for (const std::string& fragment : {__VA_ARGS__}) {                      \
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) \
            << "message lacks \"" << fragment << "\":\n"                       \
            << error.what();                                                   \
      }                                                                        \
    }                                                                          \
  } while (false)

}  // namespace hostir
