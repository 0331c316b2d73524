#pragma once

#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/options.h"

namespace hostir {

// Throws hostir::Error when HOSTIR_DISABLE_PASS names a pass not in
// `pass_names`, or HOSTIR_DUMP a stage that is not dumped, listing the valid
// ones.
void validatePassOptions(const std::vector<std::string>& pass_names);

// Whether every pipeline runs its verifier after each pass: in debug builds,
// and with HOSTIR_VERIFY=1 (the tests set it).
bool isVerifierEnabled();

// A named pass over a program of type P (Fusion or HostIrContainer).
template <typename P>
struct Pass {
  std::string name;
  std::function<void(P&)> run;
};

// Runs passes in a fixed order, one way for every stage (the stages' passes
// are registered in host_ir/passes/pass_registry.h, which builds the
// pipelines): HOSTIR_DISABLE_PASS=name skips a pass; HOSTIR_DUMP=passes prints the
// program after each ("=== after pass NAME:"); the verifier, when set and
// enabled, checks the whole program after each pass and names the pass that
// broke it; each pass is timed (timings()).
template <typename P>
class PassPipeline {
 public:
  // `known_names`: every pass of every stage, so that HOSTIR_DISABLE_PASS may
  // name a pass of a stage that runs later; empty: this pipeline's passes.
  explicit PassPipeline(std::vector<std::string> known_names = {})
      : known_names_(std::move(known_names)) {}

  void add(std::string name, std::function<void(P&)> run) {
    passes_.push_back({std::move(name), std::move(run)});
  }
  // Checks a whole program; throws naming the first broken invariant.
  void setVerifier(std::function<void(const P&)> verifier) {
    verifier_ = std::move(verifier);
  }

  void run(P& program) {
    std::vector<std::string> names = known_names_;
    if (names.empty()) {
      for (const Pass<P>& pass : passes_) {
        names.push_back(pass.name);
      }
    }
    validatePassOptions(names);
    timings_.clear();
    const bool verify = verifier_ != nullptr && isVerifierEnabled();
    for (const Pass<P>& pass : passes_) {
      if (isPassDisabled(pass.name)) {
        timings_.push_back({pass.name, std::chrono::microseconds(0), true});
        continue;
      }
      auto start = std::chrono::steady_clock::now();
      pass.run(program);
      auto stop = std::chrono::steady_clock::now();
      timings_.push_back(
          {pass.name, std::chrono::duration_cast<std::chrono::microseconds>(stop - start), false});
      if (isDumpEnabled("passes")) {
        std::cout << "=== after pass " << pass.name << ":\n" << program.toString() << std::flush;
      }
      if (verify) {
        try {
          verifier_(program);
        } catch (const Error& error) {
          HOSTIR_THROW("the program is broken after pass ", pass.name,
                       " (an internal error; please report it): ", error.what());
        }
      }
    }
  }

  const std::vector<Pass<P>>& passes() const {
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
  std::vector<std::string> known_names_;
  std::vector<Pass<P>> passes_;
  std::function<void(const P&)> verifier_;
  std::vector<Timing> timings_;
};

}  // namespace hostir
