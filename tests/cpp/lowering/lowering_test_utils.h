#pragma once

// Shared helpers for the lowering tests: find exprs of a kind in a host
// program (for the structural assertions the printed program cannot express;
// the rest is checked on toString() with irCheck, core_ir/ir_check.h), and run
// a fusion through HostExecutor on several stream counts comparing every
// result against ATen.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/lowering.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {

// in -> set -> set -> out added to `fusion` (the one being built), both sets
// on `chunks` Stream chunks of the rows: the intermediate is produced and
// consumed in the stream loop, so buffer shrinking makes it a ring.
inline void addTwoSetsOnStreamChunks(Fusion& fusion, int64_t chunks) {
  TensorView* in = makeContigTensor(2);
  fusion.addInput(in);
  TensorView* mid = set(in);
  TensorView* out = set(mid);
  for (TensorView* tv : {mid, out}) {
    tv->split(0, chunks, /*inner_split=*/false);
    tv->axis(0)->parallelize(ParallelType::Stream);
  }
  fusion.addOutput(out);
}

// All exprs of the program, loop bodies included.
inline std::vector<const Expr*> allExprs(const Scope& scope) {
  std::vector<const Expr*> out;
  for (const Expr* expr : scope) {
    out.push_back(expr);
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      std::vector<const Expr*> inner = allExprs(loop->body());
      out.insert(out.end(), inner.begin(), inner.end());
    }
  }
  return out;
}

template <typename T>
std::vector<const T*> exprsOfKind(const HostIrContainer& hic) {
  std::vector<const T*> out;
  for (const Expr* expr : allExprs(hic.topLevel())) {
    if (const auto* typed = dynamic_cast<const T*>(expr)) {
      out.push_back(typed);
    }
  }
  return out;
}

// The loops over causal query tiles (index `QueryTile`, causal_key_ranges.h)
// anywhere in `hic`.
inline int64_t queryTileLoops(const HostIrContainer& hic) {
  int64_t count = 0;
  for (const ForLoop* loop : exprsOfKind<ForLoop>(hic)) {
    const auto* index = dynamic_cast<const Scalar*>(loop->index());
    count += index != nullptr && index->symbol() == kQueryTile ? 1 : 0;
  }
  return count;
}

// The top-level loops, in order.
inline std::vector<const ForLoop*> topLevelLoops(const HostIrContainer& hic) {
  std::vector<const ForLoop*> loops;
  for (const Expr* expr : hic.topLevel()) {
    if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
      loops.push_back(loop);
    }
  }
  return loops;
}

// Stream counts every numeric check runs with.
inline const std::vector<int>& streamCounts() {
  static const std::vector<int> counts{1, 2, 4};
  return counts;
}

// Runs `fusion` through HostExecutor with 1, 2 and 4 streams; every output
// must match `expected` (from ATen). A second run with the same stream count
// must agree bit for bit (same ISA, threads and chunks: docs/reliability.md,
// "Bitwise reproducibility"); runs with other stream counts agree within the
// same tolerance, not bitwise: the stream count sets each op's thread budget,
// and a GEMM library may sum in another order under another thread count
// (OpenBLAS and ATen's fallbacks on AVX2 do). A wrong chunk, a missed sync or
// a stale buffer is off by the values' own size, far above the tolerance.
inline void expectMatchesAtenValues(const Fusion& fusion,
                                    const std::vector<PolymorphicValue>& inputs,
                                    const std::vector<at::Tensor>& expected, double rtol = 1e-5,
                                    double atol = 1e-6) {
  std::vector<at::Tensor> first;
  for (int streams : streamCounts()) {
    SCOPED_TRACE("numberOfStreams = " + std::to_string(streams));
    HostExecutor executor(fusion, HostIrEvaluatorParams{.number_of_streams = streams});
    std::vector<at::Tensor> outputs = executor.run(inputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_TRUE(allClose(outputs[i], expected[i], rtol, atol)) << "output " << i;
    }
    // A second run reuses the lowered program.
    std::vector<at::Tensor> again = executor.run(inputs);
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_TRUE(at::equal(again[i], outputs[i])) << "second run, output " << i;
    }
    if (first.empty()) {
      first = outputs;
    } else {
      for (size_t i = 0; i < outputs.size(); ++i) {
        EXPECT_TRUE(allClose(outputs[i], first[i], rtol, atol))
            << "output " << i << " differs from 1 stream";
      }
    }
  }
}

inline void expectMatchesAten(const Fusion& fusion, const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& expected, double rtol = 1e-5,
                              double atol = 1e-6) {
  std::vector<PolymorphicValue> values(inputs.begin(), inputs.end());
  expectMatchesAtenValues(fusion, values, expected, rtol, atol);
}

// Runs a lowered program with 1, 2 and 4 streams (each from a fresh clone).
inline void expectProgramMatchesAten(const HostIrContainer& hic,
                                     const std::vector<at::Tensor>& inputs,
                                     const std::vector<at::Tensor>& expected) {
  for (int streams : streamCounts()) {
    SCOPED_TRACE("numberOfStreams = " + std::to_string(streams));
    HostIrEvaluator evaluator(hic.clone(), HostIrEvaluatorParams{.number_of_streams = streams});
    std::vector<at::Tensor> outputs = evaluator.run(inputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_TRUE(allClose(outputs[i], expected[i])) << "output " << i;
    }
  }
}

// Expects `body` to throw hostir::Error whose message contains every part.
inline void expectErrorContaining(const std::function<void()>& body,
                                  const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "expected hostir::Error";
  } catch (const Error& error) {
    std::string message = error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "message lacks \"" << part << "\":\n"
                                                       << message;
    }
  }
}

}  // namespace hostir::test
