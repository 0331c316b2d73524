#include "hostir/host_ir/printing.h"

#include <sstream>

namespace hostir {

std::string valListString(const std::vector<Val*>& vals) {
  std::stringstream ss;
  for (size_t i = 0; i < vals.size(); ++i) {
    ss << (i ? ", " : "") << vals[i]->toInlineString();
  }
  return ss.str();
}

std::string indentLines(const std::string& text, int indent) {
  const std::string pad(2 * static_cast<size_t>(indent), ' ');
  std::stringstream in(text);
  std::stringstream out;
  std::string line;
  while (std::getline(in, line)) {
    out << (line.empty() ? "" : pad) << line << "\n";
  }
  return out.str();
}

}  // namespace hostir
