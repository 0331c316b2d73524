#pragma once

// Shared helpers for the lowering tests: render a host program's structure
// (node kinds, loop nesting, which streams) so tests can assert it as a list
// of strings, and run a fusion through HostExecutor on several stream counts
// comparing every result against ATen.

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

// The stream a GetCurrentStream of `scope` (or an enclosing scope) defines.
inline const Stream* callerStreamOf(const Scope& scope) {
  for (const Expr* expr : scope) {
    if (const auto* get = dynamic_cast<const GetCurrentStream*>(expr)) {
      return get->stream();
    }
  }
  return nullptr;
}

// "caller" for the stream GetCurrentStream returned, "worker" for
// `Stream ( StreamIdx % numberOfStreams )`, otherwise its printed form.
inline std::string streamRole(const Stream* stream, const Stream* caller) {
  if (stream == caller) {
    return "caller";
  }
  if (stream->toInlineString() == "Stream ( StreamIdx % numberOfStreams )") {
    return "worker";
  }
  return stream->toInlineString();
}

// One string per expr of `scope`: its node kind, a loop as
// "ForLoop{kind,kind,...}" (recursively). With `streams`, the stream ops name
// their stream: "SetCurrentStream(worker)", "Synchronize(caller)".
inline std::string describeExpr(const Expr* expr, bool streams, const Stream* caller);

inline std::vector<std::string> describeScope(const Scope& scope, bool streams,
                                              const Stream* caller) {
  std::vector<std::string> out;
  for (const Expr* expr : scope) {
    out.push_back(describeExpr(expr, streams, caller));
  }
  return out;
}

inline std::string describeExpr(const Expr* expr, bool streams, const Stream* caller) {
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    std::string text = "ForLoop{";
    bool first = true;
    for (const std::string& inner : describeScope(loop->body(), streams, caller)) {
      text += (first ? "" : ",") + inner;
      first = false;
    }
    return text + "}";
  }
  if (streams) {
    if (const auto* set = dynamic_cast<const SetCurrentStream*>(expr)) {
      return std::string("SetCurrentStream(") + streamRole(set->stream(), caller) + ")";
    }
    if (const auto* sync = dynamic_cast<const Synchronize*>(expr)) {
      return std::string("Synchronize(") + streamRole(sync->stream(), caller) + ")";
    }
  }
  return expr->opName();
}

// Node kinds of the top level, loops with their bodies.
inline std::vector<std::string> structure(const HostIrContainer& hic) {
  return describeScope(hic.topLevel(), /*streams=*/false, nullptr);
}

// The same with the stream of every SetCurrentStream / Synchronize.
inline std::vector<std::string> structureWithStreams(const HostIrContainer& hic) {
  return describeScope(hic.topLevel(), /*streams=*/true, callerStreamOf(hic.topLevel()));
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
// must match `expected` (from ATen) and the runs must agree bit for bit.
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
        EXPECT_TRUE(at::equal(outputs[i], first[i])) << "output " << i << " differs from 1 stream";
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

// The main stream loop of the issue-4 structure: worker stream first, back
// to the caller's stream and a Synchronize of the worker at the end.
inline void expectMainLoopStreams(const ForLoop* loop, const Stream* caller) {
  ASSERT_GE(loop->body().size(), 3u);
  std::vector<Expr*> body = loop->body().toVector();
  auto* first = dynamic_cast<SetCurrentStream*>(body.front());
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(streamRole(first->stream(), caller), "worker");
  auto* back = dynamic_cast<SetCurrentStream*>(body[body.size() - 2]);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->stream(), caller);
  auto* sync = dynamic_cast<Synchronize*>(body.back());
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(streamRole(sync->stream(), caller), "worker");
  EXPECT_EQ(loop->index()->toInlineString(), "StreamIdx");
}

}  // namespace hostir::test
