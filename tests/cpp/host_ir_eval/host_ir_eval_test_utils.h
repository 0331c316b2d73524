#pragma once

// Shared helpers for the HostIrEvaluator tests: a fixture that builds a host
// program by hand in a HostIrContainer and hands it to an evaluator, plus
// builders for the recurring pieces (segment fusions, the stream-pipelined
// loop of docs/design.md "Notation").

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {

// The named loop-index / stream-count scalars of the host program.
inline Val* namedInt(const char* name) {
  return IrBuilder::create<Scalar>(std::string(name), DataType::Int64);
}

// A segment fusion built by `build` (called with the fusion current; it adds
// inputs and outputs itself).
inline std::unique_ptr<Fusion> makeSegment(const std::function<void(Fusion&)>& build) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  build(*fusion);
  return fusion;
}

// A one-input, one-output segment: out = op(in), `in` of rank `rank`.
inline std::unique_ptr<Fusion> makeUnarySegment(int64_t rank,
                                                const std::function<TensorView*(TensorView*)>& op) {
  return makeSegment([&](Fusion& fusion) {
    TensorView* in = makeContigTensor(rank);
    fusion.addInput(in);
    fusion.addOutput(op(in));
  });
}

// Builds a host program in hic_ (current in the test body), then runs it.
class HostIrEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::manual_seed(0);
  }

  HostIrContainer& hic() {
    return *hic_;
  }

  void push(Expr* expr) {
    hic_->pushBackTopLevelExpr(expr);
  }

  // Moves the program into an evaluator; build everything before calling.
  HostIrEvaluator& evaluator(int number_of_streams = 4) {
    HOSTIR_ASSERT(hic_ != nullptr, "evaluator() called twice");
    evaluator_ = std::make_unique<HostIrEvaluator>(
        std::move(hic_), HostIrEvaluatorParams{.number_of_streams = number_of_streams});
    return *evaluator_;
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs,
                              const std::vector<at::Tensor>& outputs = {}) {
    if (evaluator_ == nullptr) {
      evaluator();
    }
    return evaluator_->run(inputs, outputs);
  }

  // Appends the classic stream-pipelined loop over axis 0 of `in` (extent
  // in->axis(0)->extent()) to the top level and returns `out`, a tensor of
  // [i0] + out_slice's shape:
  //   out = ALLOCATE(...)                      (unless `allocate_out` is false)
  //   GetCurrentStream into caller
  //   FOR StreamIdx in iStreamIdx{i0}:
  //     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
  //     Synchronize caller                     (unless `sync_with_caller` is false)
  //     in_slice = HirAliasSelect(in, axis 0, StreamIdx)
  //     out_slice = HirAliasSelect(out, axis 0, StreamIdx)
  //     out_slice = body(in_slice)            (the exprs `body` created)
  //     SetCurrentStream to caller
  //     Synchronize Stream ( StreamIdx % numberOfStreams )
  // `body` builds ops on the slice (a TensorView of in's shape minus axis 0)
  // and returns out_slice with the exprs to run, in order (the ops, and any
  // Allocate of an intermediate). Note that `Synchronize caller` makes each
  // iteration wait for the previous ones (the caller's stream waited for
  // them); without it, iterations on distinct streams run concurrently.
  struct LoopBody {
    TensorView* out_slice;
    std::vector<Expr*> exprs;
  };
  TensorView* pipelinedLoop(TensorView* in,
                            const std::function<LoopBody(TensorView* in_slice)>& body,
                            bool allocate_out = true, bool sync_with_caller = true) {
    std::vector<Val*> slice_extents;
    for (size_t axis = 1; axis < in->shapeDomain().size(); ++axis) {
      slice_extents.push_back(in->shapeDomain()[axis]->extent());
    }
    TensorView* in_slice = makeTensorOver(slice_extents, in->dtype());
    LoopBody built = body(in_slice);
    std::vector<Val*> out_extents{in->axis(0)->extent()};
    for (Val* extent : extentsOf(built.out_slice)) {
      out_extents.push_back(extent);
    }
    TensorView* out = makeTensorOver(out_extents, built.out_slice->dtype());

    if (allocate_out) {
      push(IrBuilder::create<Allocate>(out, MemoryType::Global, false));
    }
    auto* get_caller = IrBuilder::create<GetCurrentStream>();
    push(get_caller);
    Stream* caller = get_caller->stream();

    Val* index = streamIdx();
    auto* id = IrBuilder::create<IterDomain>(in->axis(0)->extent(), IterType::Iteration,
                                             ParallelType::Stream);
    auto* loop = IrBuilder::create<ForLoop>(index, id);
    auto* worker = IrBuilder::create<Stream>(mod(index, namedInt(kNumberOfStreams)));

    Scope& scope = loop->body();
    scope.push_back(IrBuilder::create<SetCurrentStream>(worker));
    if (sync_with_caller) {
      scope.push_back(IrBuilder::create<Synchronize>(caller));
    }
    scope.push_back(IrBuilder::create<HirAliasSelect>(in, in_slice, 0, index));
    scope.push_back(IrBuilder::create<HirAliasSelect>(out, built.out_slice, 0, index));
    for (Expr* expr : built.exprs) {
      scope.push_back(expr);
    }
    scope.push_back(IrBuilder::create<SetCurrentStream>(caller));
    scope.push_back(IrBuilder::create<Synchronize>(worker));
    push(loop);
    last_loop_ = loop;
    return out;
  }

  // The loop index of pipelinedLoop, for loop bodies that need it (a loop
  // binds this Val, not every Scalar spelled StreamIdx).
  Val* streamIdx() {
    if (stream_idx_ == nullptr) {
      stream_idx_ = namedInt(kStreamIdx);
    }
    return stream_idx_;
  }

  std::unique_ptr<HostIrContainer> hic_ = std::make_unique<HostIrContainer>();
  FusionGuard guard_{hic_.get()};
  std::unique_ptr<HostIrEvaluator> evaluator_;
  ForLoop* last_loop_ = nullptr;  // the loop pipelinedLoop built last
  Val* stream_idx_ = nullptr;
};

}  // namespace hostir::test
