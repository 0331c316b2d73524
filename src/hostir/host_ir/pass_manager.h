#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hostir {

class HostIrContainer;

// A host IR pass: a named function editing a program through its Scopes.
struct HostIrPass {
  std::string name;
  std::function<void(HostIrContainer&)> run;
};

// Runs passes in a fixed order. HOSTIR_DISABLE_PASS=name skips a pass,
// HOSTIR_DUMP=passes prints the program after each, and each pass's time is
// recorded for inspection (timings()).
class HostIrPassManager {
 public:
  void add(std::string name, std::function<void(HostIrContainer&)> run);
  void run(HostIrContainer& container);

  const std::vector<HostIrPass>& passes() const {
    return passes_;
  }
  struct Timing {
    std::string name;
    std::chrono::microseconds duration;
    bool skipped;
  };
  // Of the last run().
  const std::vector<Timing>& timings() const {
    return timings_;
  }

 private:
  std::vector<HostIrPass> passes_;
  std::vector<Timing> timings_;
};

}  // namespace hostir
