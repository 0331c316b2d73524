#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hostir {

// `text` on one line: each run of spaces, tabs and newlines becomes one
// space, none at either end; past `limit` characters it is cut, ending in
// "...". How an expr's printed form (which wraps over lines) is named in an
// error message or a trace label.
inline std::string oneLine(std::string_view text, std::size_t limit = std::string::npos) {
  std::string line;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = !line.empty();
      continue;
    }
    if (space) {
      line += ' ';
      space = false;
    }
    line += c;
  }
  if (line.size() > limit && limit >= 3) {
    line = line.substr(0, limit - 3) + "...";
  }
  return line;
}

}  // namespace hostir
