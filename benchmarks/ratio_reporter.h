#pragma once

#include <benchmark/benchmark.h>

#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <utility>

namespace hostir::bench {

// Console reporter that also prints, for every benchmark named
// "<Subject>/<args>" with a matching "<Baseline>/<args>", the ratio of their
// real times: the figure our performance targets are stated in.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter(std::string subject, std::string baseline)
      : subject_(std::move(subject)), baseline_(std::move(baseline)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) {
        continue;
      }
      std::string name = run.benchmark_name();
      auto slash = name.find('/');
      std::string family = name.substr(0, slash);
      std::string args = slash == std::string::npos ? "" : name.substr(slash);
      times_[args][family] = run.GetAdjustedRealTime();
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::cout << "\nratio " << subject_ << " / " << baseline_ << " (real time):\n";
    for (const auto& [args, families] : times_) {
      auto subject = families.find(subject_);
      auto baseline = families.find(baseline_);
      if (subject != families.end() && baseline != families.end()) {
        std::cout << "  " << std::left << std::setw(28) << args << std::fixed
                  << std::setprecision(3) << subject->second / baseline->second << "\n";
      }
    }
  }

 private:
  std::string subject_;
  std::string baseline_;
  std::map<std::string, std::map<std::string, double>> times_;
};

// main() for a benchmark program comparing `subject` against `baseline`.
inline int runWithRatios(int argc, char** argv, const std::string& subject,
                         const std::string& baseline) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter(subject, baseline);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace hostir::bench
