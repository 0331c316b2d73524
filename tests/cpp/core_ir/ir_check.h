#pragma once

// A small FileCheck for printed IR, so a test reads like the dump it checks:
//
//   EXPECT_TRUE(irCheck(program.toString(), R"(
//     CHECK:      GetCurrentStream into Stream 0
//     CHECK:      FOR StreamIdx from 0 to minimum(i0, numberOfStreams) step 1:
//     CHECK-NEXT:   SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     CHECK-NOT:  Deallocate
//     CHECK:      } // %HostIrContainer
//   )"));
//
// Directives, one a line (other lines are ignored, so a check script can
// carry comments):
//   CHECK: P       the next line at or after the current one that contains P
//   CHECK-NEXT: P  the line right after the last matched one contains P
//   CHECK-NOT: P   no line between the last match and the next positive
//                  match (or the end) contains P
// P is a literal substring; leading and trailing spaces of P are ignored, so
// checks can be indented like the dump. A failure names the directive and
// shows the text around where it looked.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace hostir::test {

inline ::testing::AssertionResult irCheck(const std::string& text, const std::string& script) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
    }
  }
  auto trim = [](std::string s) {
    const auto first = s.find_first_not_of(" \t");
    const auto last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  };
  auto context = [&](size_t from) {
    std::string shown;
    for (size_t i = from; i < lines.size() && i < from + 6; ++i) {
      shown += "    " + std::to_string(i + 1) + ": " + lines[i] + "\n";
    }
    return shown.empty() ? std::string("    (end of text)\n") : shown;
  };

  size_t next_line = 0;                                   // where CHECK and CHECK-NOT start looking
  long last_match = -1;                                   // the line of the last positive match
  std::vector<std::pair<int, std::string>> pending_nots;  // script line, pattern
  auto failure = [&](int script_line, const std::string& directive, const std::string& why,
                     size_t at) {
    return ::testing::AssertionFailure()
           << "script line " << script_line << " (" << directive << "): " << why
           << "\n  looked from text line " << at + 1 << ":\n"
           << context(at) << "  whole text:\n"
           << text;
  };
  auto checkNots = [&](size_t until) -> ::testing::AssertionResult {
    for (const auto& [script_line, pattern] : pending_nots) {
      for (size_t i = next_line; i < until && i < lines.size(); ++i) {
        if (lines[i].find(pattern) != std::string::npos) {
          return failure(script_line, "CHECK-NOT: " + pattern,
                         "found on text line " + std::to_string(i + 1), next_line);
        }
      }
    }
    pending_nots.clear();
    return ::testing::AssertionSuccess();
  };

  std::istringstream script_in(script);
  int script_line = 0;
  for (std::string raw; std::getline(script_in, raw);) {
    ++script_line;
    const std::string line = trim(raw);
    auto directive = [&](const std::string& name) {
      return line.rfind(name, 0) == 0 ? trim(line.substr(name.size())) : std::string("\x01");
    };
    if (std::string p = directive("CHECK-NOT:"); p != "\x01") {
      pending_nots.emplace_back(script_line, p);
    } else if (std::string p = directive("CHECK-NEXT:"); p != "\x01") {
      const size_t at = static_cast<size_t>(last_match + 1);
      if (last_match < 0 || at >= lines.size() || lines[at].find(p) == std::string::npos) {
        return failure(script_line, "CHECK-NEXT: " + p, "not on the line after the last match", at);
      }
      if (auto nots = checkNots(at); !nots) {
        return nots;
      }
      last_match = static_cast<long>(at);
      next_line = at + 1;
    } else if (std::string p = directive("CHECK:"); p != "\x01") {
      size_t i = next_line;
      while (i < lines.size() && lines[i].find(p) == std::string::npos) {
        ++i;
      }
      if (i >= lines.size()) {
        return failure(script_line, "CHECK: " + p, "not found", next_line);
      }
      if (auto nots = checkNots(i); !nots) {
        return nots;
      }
      last_match = static_cast<long>(i);
      next_line = i + 1;
    }
  }
  return checkNots(lines.size());
}

}  // namespace hostir::test
