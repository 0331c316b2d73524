// Differential fuzzing (issue 11): random fusions lowered and run through
// HostExecutor, compared with the same computation in plain ATen.
//
// The smoke run (ctest) runs a fixed range of seeds, whatever the machine's
// speed (a time budget let a slow machine test fewer programs and still
// pass). The long run is the same test with more programs:
//   HOSTIR_FUZZ_PROGRAMS=10000 HOSTIR_FUZZ_FIRST_SEED=1000
//     build/tests/test_fuzz --gtest_filter=Fuzz.DifferentialAgainstAten
// (tests/fuzz/long_run.sh). A program that the lowering rejects with a
// hostir::Error (an unsupported Stream pattern) counts as rejected, not as
// a failure, and the rejections are listed by message; a program that
// lowers must run and match. Failures print the seed and the program.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include "fuzz/fuzz_generator.h"
#include "hostir/runtime/host_executor.h"

namespace hostir::fuzz {
namespace {

int64_t envInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text == nullptr || *text == '\0' ? fallback : std::strtoll(text, nullptr, 10);
}

enum class Outcome { kMatched, kRejected, kFailed };

struct Result {
  Outcome outcome = Outcome::kMatched;
  std::string message;
};

// Within the rounding the program's float32 evaluation may carry
// (rounding_bound.h), not a fixed tolerance.
bool closeEnough(const at::Tensor& actual, const at::Tensor& expected,
                 const at::Tensor& tolerance) {
  return actual.sizes() == expected.sizes() && actual.scalar_type() == expected.scalar_type() &&
         roundingExcess(actual, expected, tolerance) <= 1;
}

// The program's inputs in fusion order: its tensors and its scalars.
std::vector<PolymorphicValue> runInputs(const FuzzProgram& program) {
  std::vector<PolymorphicValue> values;
  size_t tensor = 0;
  size_t scalar = 0;
  for (const Val* input : program.fusion->inputs()) {
    if (input->isA<TensorView>()) {
      values.emplace_back(program.inputs.at(tensor++));
    } else {
      values.emplace_back(program.scalar_inputs.at(scalar++));
    }
  }
  return values;
}

Result runProgram(const FuzzProgram& program) {
  std::unique_ptr<HostExecutor> executor;
  try {
    executor = std::make_unique<HostExecutor>(
        *program.fusion, HostIrEvaluatorParams{.number_of_streams = program.number_of_streams});
  } catch (const Error& error) {
    std::string message = error.what();
    return {Outcome::kRejected, message.substr(0, message.find('\n'))};
  }
  try {
    std::vector<at::Tensor> buffers;
    if (program.preallocate_outputs) {
      for (const at::Tensor& expected : program.expected) {
        buffers.push_back(at::full_like(expected, -77.0));
      }
    }
    for (int run = 0; run < 2; ++run) {  // a second run reuses the lowered program
      std::vector<at::Tensor> outputs = executor->run(runInputs(program), buffers);
      if (outputs.size() != program.expected.size()) {
        return {Outcome::kFailed, "wrong number of outputs"};
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (!closeEnough(outputs[i], program.expected[i], program.tolerance[i])) {
          const bool same_sizes = outputs[i].sizes() == program.expected[i].sizes();
          std::ostringstream ss;
          ss << "output " << i << " differs (run " << run << "): max |diff| = "
             << (same_sizes ? (outputs[i] - program.expected[i]).abs().max().item<double>() : -1.0)
             << ", "
             << (same_sizes ? roundingExcess(outputs[i], program.expected[i], program.tolerance[i])
                            : -1.0)
             << "x the rounding allowed, sizes " << outputs[i].sizes() << " vs "
             << program.expected[i].sizes();
          return {Outcome::kFailed, ss.str()};
        }
        if (program.preallocate_outputs && !outputs[i].is_same(buffers[i])) {
          return {Outcome::kFailed, "output " + std::to_string(i) + " is not the given buffer"};
        }
      }
    }
    // An input given as the buffer of an output of its shape (issue 22):
    // rejected before anything is written, never zeros or a half-read input.
    if (program.preallocate_outputs && !program.inputs.empty() && program.inputs[0].numel() > 0 &&
        program.inputs[0].sizes() == program.expected[0].sizes()) {
      buffers[0] = program.inputs[0];
      try {
        executor->run(runInputs(program), buffers);
        return {Outcome::kFailed, "an output aliasing input 0 was accepted"};
      } catch (const Error& error) {
        if (std::string(error.what()).rfind("an output buffer aliases an input", 0) != 0) {
          return {Outcome::kFailed, std::string("aliasing gave: ") + error.what()};
        }
      }
    }
  } catch (const std::exception& error) {
    return {Outcome::kFailed, std::string("run threw: ") + error.what()};
  }
  return {};
}

TEST(Fuzz, DifferentialAgainstAten) {
  const int64_t programs = envInt("HOSTIR_FUZZ_PROGRAMS", 300);
  const int64_t first_seed = envInt("HOSTIR_FUZZ_FIRST_SEED", 1);
  const auto start = std::chrono::steady_clock::now();

  int64_t matched = 0;
  int64_t rejected = 0;
  int64_t failed = 0;
  std::map<std::string, int64_t> rejections;
  int64_t ran = 0;
  for (int64_t seed = first_seed; seed < first_seed + programs; ++seed) {
    GeneratorOptions options;
    options.runtime_slices = true;
    options.frontend_ops = true;
    FuzzProgram program = Generator(static_cast<uint64_t>(seed), std::move(options)).generate();
    Result result = runProgram(program);
    ++ran;
    switch (result.outcome) {
      case Outcome::kMatched: ++matched; break;
      case Outcome::kRejected:
        ++rejected;
        ++rejections[result.message];
        break;
      case Outcome::kFailed:
        ++failed;
        ADD_FAILURE() << "seed " << seed << ": " << result.message << "\nprogram:\n"
                      << program.description << "\nfusion:\n"
                      << program.fusion->toString();
        break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fuzz: " << ran << " programs (seeds " << first_seed << ".." << first_seed + ran - 1
            << ") in " << seconds << " s: " << matched << " matched ATen, " << rejected
            << " rejected by the lowering, " << failed << " failed\n";
  for (const auto& [message, count] : rejections) {
    std::cout << "  rejected " << count << "x: " << message << "\n";
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(ran, programs);
  // Most programs must get through the lowering, or the fuzzer tests little.
  EXPECT_GE(matched * 4, ran * 3) << "too many rejections";
}

// The smoke run's seeds draw every op of nvFuser's frontend in the pool
// (issue 41: new ops are in the fuzzer's op pool), each more than once.
TEST(Fuzz, TheSmokeRunDrawsEveryFrontendOp) {
  std::vector<std::string> ops = {"pad columns",     "cat on axis",     "index_select",
                                  "take_along_axis", "scatter -0.25",   "cumsum",
                                  "where(a > b",     "scatter_add",     "index_add",
                                  "complex product", "nextafter(a, b)", "fmod of"};
  for (const IntegerOp& op : integerOps()) {
    ops.push_back(std::string(op.name) + " of two integer inputs");
  }
  std::map<std::string, int64_t> drawn;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    GeneratorOptions options;
    options.runtime_slices = true;
    options.frontend_ops = true;
    const std::string description = Generator(seed, std::move(options)).generate().description;
    for (const std::string& op : ops) {
      drawn[op] += description.find(op) != std::string::npos ? 1 : 0;
    }
  }
  for (const std::string& op : ops) {
    EXPECT_GE(drawn[op], 2) << op << " is drawn by " << drawn[op] << " of seeds 1..300";
  }
}

}  // namespace
}  // namespace hostir::fuzz
