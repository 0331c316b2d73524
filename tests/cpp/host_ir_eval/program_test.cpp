// Hand-built host programs run by the HostIrEvaluator: segments posted on
// streams and launched by id, loops over segments, preallocated outputs,
// the stream nodes, input validation and the errors a program can hit.
// Values are compared against plain ATen on the same inputs.

#include <chrono>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "host_ir_eval/host_ir_eval_test_utils.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/segment_engines.h"

namespace hostir::test {
namespace {

using SegmentTest = HostIrEvalTest;

// Posts `segment` on `inputs` and returns its outputs (fresh tensors of the
// segment outputs' ranks over the host program's extents).
std::vector<Val*> post(HostIrContainer& hic, std::unique_ptr<Fusion> segment,
                       const std::vector<Val*>& inputs) {
  std::vector<Val*> outputs;
  for (Val* output : segment->outputs()) {
    // Elementwise segments: outputs have the first input's extents.
    outputs.push_back(makeTensorOver(extentsOf(inputs.at(0)->as<TensorView>()), output->dtype()));
  }
  auto* unit = IrBuilder::create<HostUnit>(std::move(segment));
  hic.pushBackTopLevelExpr(IrBuilder::create<PostOnStream>(unit, inputs, outputs));
  return outputs;
}

TEST_F(SegmentTest, OnePostOnStream) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  Val* out = post(hic(), makeUnarySegment(2, [](TensorView* t) { return relu(t); }), {in})[0];
  hic().addOutput(out);
  EXPECT_TRUE(containsAll(hic().toString(),
                          {"PostOnStream (HostUnit 0, inputs=(T0_g_float[iS0{i0}, iS1{i1}])",
                           "HostUnit 0:", "= relu("}));

  at::Tensor t0 = at::randn({3, 5});
  std::vector<at::Tensor> outs = run({t0});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(allClose(outs[0], at::relu(t0)));
}

TEST_F(SegmentTest, TwoAndThreeSegmentsChained) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  Val* a = post(hic(), makeUnarySegment(2, [](TensorView* t) { return relu(t); }), {in})[0];
  Val* b =
      post(hic(), makeUnarySegment(2, [](TensorView* t) { return add(mul(t, 2.0), 1.0); }), {a})[0];
  // The third segment takes two inputs: b and the program input.
  auto two_input = makeSegment([](Fusion& fusion) {
    TensorView* x = makeContigTensor(2);
    TensorView* y = makeContigTensor(2);
    fusion.addInput(x);
    fusion.addInput(y);
    fusion.addOutput(sub(x, exp(y)));
  });
  Val* c = post(hic(), std::move(two_input), {b, in})[0];
  hic().addOutput(b);
  hic().addOutput(c);

  std::vector<std::string> kinds;
  for (Expr* expr : hic().topLevel()) {
    kinds.push_back(expr->opName());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"PostOnStream", "PostOnStream", "PostOnStream"}));

  at::Tensor t0 = at::randn({4, 6});
  std::vector<at::Tensor> outs = run({t0});
  ASSERT_EQ(outs.size(), 2u);
  at::Tensor expected_b = at::relu(t0) * 2 + 1;
  EXPECT_TRUE(allClose(outs[0], expected_b));
  EXPECT_TRUE(allClose(outs[1], expected_b - at::exp(t0)));
  // A second run on other sizes reuses the evaluator.
  at::Tensor t1 = at::randn({2, 9});
  outs = run({t1});
  EXPECT_TRUE(allClose(outs[1], at::relu(t1) * 2 + 1 - at::exp(t1)));
}

TEST_F(SegmentTest, LaunchKernelById) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  int64_t relu_id = hic().addKernel(makeUnarySegment(1, [](TensorView* t) { return relu(t); }));
  int64_t neg_id = hic().addKernel(makeUnarySegment(1, [](TensorView* t) { return neg(t); }));
  ASSERT_EQ(relu_id, 0);
  ASSERT_EQ(neg_id, 1);
  TensorView* negated = makeTensorOver(extentsOf(in));
  TensorView* out = makeTensorOver(extentsOf(in));
  push(IrBuilder::create<LaunchKernel>(neg_id, std::vector<Val*>{in}, std::vector<Val*>{negated}));
  push(
      IrBuilder::create<LaunchKernel>(relu_id, std::vector<Val*>{negated}, std::vector<Val*>{out}));
  hic().addOutput(out);
  EXPECT_TRUE(containsAll(
      hic().toString(), {"LaunchKernel (kernel=1, inputs=(T0_g_float", "LaunchKernel (kernel=0"}));

  at::Tensor t0 = at::randn({17});
  EXPECT_TRUE(allClose(run({t0})[0], at::relu(-t0)));
}

// The compile stage's engine step decides a standalone kernel's engine and
// compiles it ahead, as a HostUnit's: the program records it (printed), and
// the first run compiles nothing.
TEST_F(SegmentTest, LaunchKernelsEngineIsDecidedInTheCompileStage) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  // A constant no other test uses: a kernel no earlier test compiled.
  int64_t id = hic().addKernel(
      makeUnarySegment(1, [](TensorView* t) { return add(mul(t, 1.8125), 0.4375); }));
  TensorView* out = makeTensorOver(extentsOf(in));
  push(IrBuilder::create<LaunchKernel>(id, std::vector<Val*>{in}, std::vector<Val*>{out}));
  hic().addOutput(out);
  EXPECT_FALSE(hic().kernelEngine(id).has_value());
  decideSegmentEngines(hic());
  ASSERT_TRUE(hic().kernelEngine(id).has_value());
  const SegmentEngineKind expected =
      kernelsEnabled() ? SegmentEngineKind::Kernel : SegmentEngineKind::Aten;
  EXPECT_EQ(hic().kernelEngine(id)->kind, expected) << hic().kernelEngine(id)->detail;
  EXPECT_NE(hic().toString().find("Kernel 0 (" + describe(*hic().kernelEngine(id)) + "):"),
            std::string::npos)
      << hic().toString();

  const int compiled = KernelCache::global().compiled();
  const int loaded = KernelCache::global().loadedFromDisk();
  at::Tensor t0 = at::randn({33});
  EXPECT_TRUE(allClose(run({t0})[0], t0 * 1.8125 + 0.4375));
  EXPECT_EQ(KernelCache::global().compiled(), compiled);
  EXPECT_EQ(KernelCache::global().loadedFromDisk(), loaded);
  if (expected == SegmentEngineKind::Kernel) {
    EXPECT_NE(evaluator_->segmentExecution().find("kernel 0: compiled kernel"), std::string::npos)
        << evaluator_->segmentExecution();
  }
}

TEST_F(SegmentTest, LaunchKernelOfAnUnregisteredIdIsAnError) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  hic().addKernel(makeUnarySegment(1, [](TensorView* t) { return relu(t); }));
  TensorView* out = makeTensorOver(extentsOf(in));
  push(IrBuilder::create<LaunchKernel>(3, std::vector<Val*>{in}, std::vector<Val*>{out}));
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({at::randn({4})}), {"kernel 3", "1 kernels"});
}

TEST_F(SegmentTest, ForLoopOverASegmentWritesSlices) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  auto* unit =
      IrBuilder::create<HostUnit>(makeUnarySegment(1, [](TensorView* t) { return tanh(t); }));
  TensorView* out = pipelinedLoop(in, [&](TensorView* in_slice) {
    TensorView* out_slice = makeTensorOver(extentsOf(in_slice));
    auto* post = IrBuilder::create<PostOnStream>(unit, std::vector<Val*>{in_slice},
                                                 std::vector<Val*>{out_slice});
    return LoopBody{out_slice, {post}};
  });
  hic().addOutput(out);
  std::string printed = hic().toString();
  EXPECT_TRUE(
      containsAll(printed, {"FOR StreamIdx in iStreamIdx",
                            "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )",
                            "= HirAliasSelect(", "    PostOnStream (HostUnit 0"}));

  at::Tensor t0 = at::randn({7, 33});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], at::tanh(t0)));
}

TEST_F(SegmentTest, PreallocatedOutputsAreWrittenInPlace) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  Val* a = post(hic(), makeUnarySegment(2, [](TensorView* t) { return sigmoid(t); }), {in})[0];
  TensorView* b = add(a->as<TensorView>(), 3.0);  // a fusion op run directly
  push(b->definition());
  hic().addOutput(a);
  hic().addOutput(b);

  at::Tensor t0 = at::randn({5, 4});
  at::Tensor buf_a = at::full({5, 4}, -7.0);
  at::Tensor buf_b = at::full({5, 4}, -7.0);
  std::vector<at::Tensor> outs = run({t0}, {buf_a, buf_b});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].data_ptr(), buf_a.data_ptr());
  EXPECT_EQ(outs[1].data_ptr(), buf_b.data_ptr());
  EXPECT_TRUE(allClose(buf_a, at::sigmoid(t0)));
  EXPECT_TRUE(allClose(buf_b, at::sigmoid(t0) + 3));

  // A buffer of the wrong shape is refused, naming the output.
  EXPECT_HOSTIR_ERROR(run({t0}, {at::empty({5, 3}), buf_b}), {"T"});
  EXPECT_HOSTIR_ERROR(run({t0}, {buf_a}), {"2 outputs but 1 preallocated"});
}

TEST_F(SegmentTest, PreallocatedOutputOfAPipelinedLoop) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(in, [](TensorView* in_slice) {
    TensorView* out_slice = mul(in_slice, in_slice);
    return LoopBody{out_slice, {out_slice->definition()}};
  });
  hic().addOutput(out);
  at::Tensor t0 = at::randn({6, 8});
  at::Tensor buffer = at::zeros({6, 8});
  std::vector<at::Tensor> outs = run({t0}, {buffer});
  EXPECT_EQ(outs[0].data_ptr(), buffer.data_ptr());
  EXPECT_TRUE(allClose(buffer, t0 * t0));
  // Without a buffer, the program's Allocate provides one.
  outs = run({t0});
  EXPECT_NE(outs[0].data_ptr(), buffer.data_ptr());
  EXPECT_TRUE(allClose(outs[0], t0 * t0));
}

// --- streams -----------------------------------------------------------------

// The events the global tracer records while `body` runs.
std::vector<runtime::TraceEvent> traced(const std::function<void()>& body) {
  runtime::Tracer& tracer = runtime::Tracer::global();
  tracer.start();
  body();
  tracer.stop();
  return tracer.events();
}

// Whether a traced item is a stream's wait (named after what it waits for).
bool isWait(const runtime::TraceEvent& event) {
  return event.name.rfind("wait for", 0) == 0;
}

// The streams (trace tids) of the work items whose label contains `part`;
// with `waits`, of the waits instead.
std::set<int> tidsOf(const std::vector<runtime::TraceEvent>& events, const std::string& part,
                     bool waits = false) {
  std::set<int> tids;
  for (const auto& event : events) {
    if (isWait(event) == waits && event.name.find(part) != std::string::npos) {
      tids.insert(event.stream_id);
    }
  }
  return tids;
}

using StreamTest = HostIrEvalTest;

TEST_F(StreamTest, WorkRunsOnTheCallerStreamByDefault) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* out = exp(in);
  push(out->definition());
  hic().addOutput(out);
  HostIrEvaluator& hie = evaluator();
  at::Tensor t0 = at::randn({8});
  std::vector<at::Tensor> outs;
  auto events = traced([&] { outs = hie.run({t0}); });
  EXPECT_TRUE(allClose(outs[0], at::exp(t0)));
  EXPECT_EQ(tidsOf(events, "= exp("), std::set<int>{0});
  EXPECT_EQ(hie.streamPool().createdStreamCount(), 1u);
}

TEST_F(StreamTest, GetAndSetCurrentStream) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  auto* worker = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{2}));
  TensorView* on_worker = neg(in);
  TensorView* on_caller = add(on_worker, 1.0);
  push(get_caller);
  push(IrBuilder::create<SetCurrentStream>(worker));
  push(on_worker->definition());
  push(IrBuilder::create<SetCurrentStream>(get_caller->stream()));
  push(IrBuilder::create<Synchronize>(worker));
  push(on_caller->definition());
  hic().addOutput(on_caller);
  EXPECT_TRUE(containsAll(
      hic().toString(),
      {"GetCurrentStream into Stream", "SetCurrentStream to Stream 2", "Synchronize Stream 2"}));

  HostIrEvaluator& hie = evaluator();
  at::Tensor t0 = at::randn({16});
  std::vector<at::Tensor> outs;
  auto events = traced([&] { outs = hie.run({t0}); });
  EXPECT_TRUE(allClose(outs[0], 1 - t0));
  // IR stream 2 is pool stream 3; GetCurrentStream got the caller's, 0.
  EXPECT_EQ(tidsOf(events, "= neg("), std::set<int>{3});
  EXPECT_EQ(tidsOf(events, "= add("), std::set<int>{0});
  EXPECT_EQ(hie.streamPool().createdStreamCount(), 2u);
}

TEST_F(StreamTest, SameIndexSameStreamDistinctIndicesDistinctStreams) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(in, [](TensorView* in_slice) {
    TensorView* out_slice = abs(in_slice);
    return LoopBody{out_slice, {out_slice->definition()}};
  });
  hic().addOutput(out);
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/3);
  at::Tensor t0 = at::randn({8, 5});
  std::vector<at::Tensor> outs;
  auto events = traced([&] { outs = hie.run({t0}); });
  EXPECT_TRUE(allClose(outs[0], at::abs(t0)));
  // 8 iterations over StreamIdx % 3: pool streams 1..3, plus the caller's.
  EXPECT_EQ(hie.streamPool().createdStreamCount(), 4u);
  std::vector<int> abs_tids;
  for (const auto& event : events) {
    if (!isWait(event) && event.name.find("= abs(") != std::string::npos) {
      abs_tids.push_back(event.stream_id);
    }
  }
  ASSERT_EQ(abs_tids.size(), 8u);
  // Each stream runs its iterations in order; iteration i runs on i % 3 + 1.
  std::multiset<int> per_stream(abs_tids.begin(), abs_tids.end());
  EXPECT_EQ(per_stream.count(1), 3u);
  EXPECT_EQ(per_stream.count(2), 3u);
  EXPECT_EQ(per_stream.count(3), 2u);
  // A second run maps the same indices to the same streams: no new ones.
  hie.run({t0});
  EXPECT_EQ(hie.streamPool().createdStreamCount(), 4u);
}

TEST_F(StreamTest, UnboundPlainStreamIsAnError) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  push(IrBuilder::create<SetCurrentStream>(IrBuilder::create<Stream>()));
  TensorView* out = relu(in);
  push(out->definition());
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({at::randn({3})}),
                      {"Stream", "is not bound", "GetCurrentStream or give it an index"});
}

// Blocks a stream's worker until the test opens the gate.
struct Gate {
  std::promise<void> opened;
  std::shared_future<void> future = opened.get_future().share();
  void enqueueOn(runtime::Stream& stream) {
    std::shared_future<void> f = future;
    stream.enqueue("test gate", [f] {
      ASSERT_EQ(f.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    });
  }
};

// Stream A reads what stream B wrote; B is held back by a gate, so without the
// Synchronize, A would read the buffer before B fills it.
TEST_F(StreamTest, SynchronizeOrdersWorkAcrossStreams) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  auto* stream_a = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{0}));
  auto* stream_b = IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}));
  TensorView* x = add(in, 1.0);  // the host allocates x; B fills it
  TensorView* y = mul(x, 2.0);   // A reads it
  push(get_caller);
  push(IrBuilder::create<SetCurrentStream>(stream_b));
  push(x->definition());
  push(IrBuilder::create<SetCurrentStream>(stream_a));
  push(IrBuilder::create<Synchronize>(stream_b));
  push(y->definition());
  push(IrBuilder::create<SetCurrentStream>(get_caller->stream()));
  push(IrBuilder::create<Synchronize>(stream_a));
  hic().addOutput(y);

  HostIrEvaluator& hie = evaluator();
  for (int attempt = 0; attempt < 3; ++attempt) {
    Gate gate;
    gate.enqueueOn(hie.streamPool().stream(2));  // IR stream 1 = B
    at::Tensor t0 = at::randn({4096});
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      gate.opened.set_value();
    });
    std::vector<at::Tensor> outs = hie.run({t0});
    opener.join();
    EXPECT_TRUE(allClose(outs[0], (t0 + 1) * 2));
  }
}

// Stream A's work waits for a signal that only work on stream B gives: the
// run completes only if the evaluator's streams really run concurrently.
TEST_F(StreamTest, StreamsRunConcurrently) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(in, [](TensorView* in_slice) {
    TensorView* out_slice = sqrt(abs(in_slice));
    return LoopBody{out_slice,
                    {out_slice->definition()->input(0)->definition(), out_slice->definition()}};
  });
  hic().addOutput(out);
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/2);
  std::promise<void> b_started;
  std::shared_future<void> signal = b_started.get_future().share();
  hie.streamPool().stream(1).enqueue("A waits for B", [signal] {
    if (signal.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      HOSTIR_THROW("stream B never ran while A waited: streams are serialized");
    }
  });
  hie.streamPool().stream(2).enqueue("B signals A", [&b_started] { b_started.set_value(); });
  at::Tensor t0 = at::randn({4, 10});
  std::vector<at::Tensor> outs = hie.run({t0});
  EXPECT_TRUE(allClose(outs[0], at::sqrt(at::abs(t0))));
}

// A tiny op (cheaper than a hand-off, Stream::enqueueCheap) after a GEMM on
// the same stream must wait for it: the host runs it only when the stream is
// idle, and here the stream's worker still has the GEMM.
TEST_F(StreamTest, CheapOpWaitsForTheGemmBeforeItOnItsStream) {
  TensorView* in = makeContigTensor(3);
  TensorView* weight = makeContigTensor(2);
  hic().addInput(in);
  hic().addInput(weight);
  TensorView* out = pipelinedLoop(
      in,
      [&](TensorView* in_slice) {
        TensorView* product = matmul(in_slice, weight);
        TensorView* out_slice = add(product, 1.0);
        return LoopBody{out_slice, {product->definition(), out_slice->definition()}};
      },
      /*allocate_out=*/true, /*sync_with_caller=*/false);
  hic().addOutput(out);
  HostIrEvaluator& hie = evaluator();
  for (int attempt = 0; attempt < 20; ++attempt) {
    at::Tensor a = at::randn({8, 64, 64});
    at::Tensor w = at::randn({64, 64});
    std::vector<at::Tensor> outs = hie.run({a, w});
    // K = 64 products of unit normals: float32 sums in another order (another
    // GEMM kernel or blocking, e.g. on AVX2) differ by up to ~1e-4 near 0,
    // where rtol does not help; the GEMM missed or half done is off by ~8.
    ASSERT_TRUE(allClose(outs[0], at::matmul(a, w) + 1, 1e-5, 1e-4)) << "attempt " << attempt;
  }
}

// --- errors ------------------------------------------------------------------

using ErrorTest = HostIrEvalTest;

TEST_F(ErrorTest, InputsAreValidated) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = relu(in);
  push(out->definition());
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({}), {"host program", "1"});
  EXPECT_HOSTIR_ERROR(run({at::randn({3})}), {"T0_g_float[iS0{i0}, iS1{i1}]", "rank"});
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 4}).to(at::kDouble)}),
                      {"T0_g_float[iS0{i0}, iS1{i1}]", "float"});
  EXPECT_HOSTIR_ERROR(run({at::randn({4, 3}).t()}), {"T0_g_float[iS0{i0}, iS1{i1}]", "contiguous"});
  // Still usable.
  at::Tensor t0 = at::randn({2, 2});
  EXPECT_TRUE(allClose(run({t0})[0], at::relu(t0)));
}

TEST_F(ErrorTest, FailureOnAWorkerStreamNamesTheExprAndTheEvaluatorStaysUsable) {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);  // its rows are not tied to a's columns
  hic().addInput(a);
  hic().addInput(b);
  push(IrBuilder::create<SetCurrentStream>(
      IrBuilder::create<Stream>(IrBuilder::create<Scalar>(int64_t{1}))));
  TensorView* product = matmul(a, b);
  push(product->definition());
  hic().addOutput(product);

  HostIrEvaluator& hie = evaluator();
  std::string message = errorMessage([&] { hie.run({at::randn({2, 3}), at::randn({4, 5})}); });
  EXPECT_TRUE(containsAll(message, {"= matmul(", "T0_g_float[iS0{i0}, iS1{i1}]", "stream 2 failed",
                                    "cannot be multiplied"}));
  // Everything after the failure is dropped; a second run works.
  at::Tensor x = at::randn({2, 3});
  at::Tensor y = at::randn({3, 5});
  std::vector<at::Tensor> outs = hie.run({x, y});
  EXPECT_TRUE(allClose(outs[0], at::matmul(x, y), 1e-4, 1e-5));
}

TEST_F(ErrorTest, UseBeforeComputeNamesTheTensor) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* never = makeTensorOver(extentsOf(in));
  TensorView* out = add(in, never);
  push(out->definition());
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({at::randn({3})}), {never->toInlineString(),
                                              "before the host program computes or allocates it"});
}

TEST_F(ErrorTest, OutputNeverComputed) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* out = makeTensorOver(extentsOf(in));
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({at::randn({3})}), {"was never computed or allocated"});
}

TEST_F(ErrorTest, CommunicationWithoutACommunicator) {
  TensorView* in = makeContigTensor(1);
  TensorView* out = makeTensorOver(extentsOf(in));
  hic().addInput(in);
  push(IrBuilder::create<Allocate>(out, MemoryType::Global, false));
  auto* comm = IrBuilder::create<Communication>(
      in, out, CommunicationParams{.type = CommunicationType::Allgather, .team = {0}});
  push(comm);
  push(IrBuilder::create<Wait>(comm));
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(run({at::randn({3})}),
                      {"Communication", "has no Communicator", "HostIrEvaluatorParams"});
}

// --- tracing -----------------------------------------------------------------

TEST_F(StreamTest, TraceShowsLoopBodyOnSeveralStreams) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(in, [](TensorView* in_slice) {
    TensorView* out_slice = sigmoid(in_slice);
    return LoopBody{out_slice, {out_slice->definition()}};
  });
  hic().addOutput(out);
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/2);
  runtime::Tracer& tracer = runtime::Tracer::global();
  tracer.start();
  at::Tensor t0 = at::randn({6, 32});
  std::vector<at::Tensor> outs = hie.run({t0});
  tracer.stop();
  EXPECT_TRUE(allClose(outs[0], at::sigmoid(t0)));

  std::string path = ::testing::TempDir() + "host_ir_eval_trace.json";
  tracer.write(path);
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string json = text.str();
  EXPECT_TRUE(containsAll(json, {"\"traceEvents\"", "\"ph\":\"X\"", "sigmoid"}));

  // The body's op, labelled with its printed form, ran on both worker streams.
  std::set<int> tids = tidsOf(tracer.events(), "= sigmoid(");
  EXPECT_EQ(tids, (std::set<int>{1, 2}));
  for (int tid : tids) {
    EXPECT_NE(json.find("\"tid\":" + std::to_string(tid)), std::string::npos) << json;
  }
  // Synchronize waits are traced too, on the worker streams that wait.
  std::set<int> waits = tidsOf(tracer.events(), "wait for", /*waits=*/true);
  EXPECT_TRUE(waits.count(1) != 0 && waits.count(2) != 0);
}

}  // namespace
}  // namespace hostir::test
