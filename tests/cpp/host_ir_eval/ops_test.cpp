// Fusion ops run directly by the HostIrEvaluator, at the top level and inside
// stream-pipelined loops that write slices of a larger buffer in place;
// Allocate and Deallocate inside and outside loops. Values are compared
// against plain ATen on the same inputs.

#include "host_ir_eval/host_ir_eval_test_utils.h"

namespace hostir::test {
namespace {

// --- every op at the top level, with and without a preallocated output --------

struct OpCase {
  std::string name;
  // Creates the program inputs (adding them to the current container) and
  // returns the op's output.
  std::function<TensorView*(Fusion&)> build;
  std::vector<std::vector<int64_t>> input_sizes;
  std::function<at::Tensor(const std::vector<at::Tensor>&)> reference;
};

void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

TensorView* input(Fusion& fusion, int64_t rank) {
  TensorView* tv = makeContigTensor(rank);
  fusion.addInput(tv);
  return tv;
}

std::vector<OpCase> opCases() {
  return {
      {"set",
       [](Fusion& f) { return set(input(f, 2)); },
       {{3, 4}},
       [](const auto& t) { return t[0].clone(); }},
      {"unary",
       [](Fusion& f) { return gelu(input(f, 2)); },
       {{3, 4}},
       [](const auto& t) { return at::gelu(t[0]); }},
      {"cast",
       [](Fusion& f) { return castOp(DataType::Double, input(f, 1)); },
       {{5}},
       [](const auto& t) { return t[0].to(at::kDouble); }},
      {"binary",
       [](Fusion& f) {
         TensorView* a = input(f, 2);
         TensorView* b = makeTensorOver(extentsOf(a));
         f.addInput(b);
         return maximum(a, b);
       },
       {{3, 4}, {3, 4}},
       [](const auto& t) { return at::maximum(t[0], t[1]); }},
      {"binary_scalar",
       [](Fusion& f) { return div(input(f, 2), 4.0); },
       {{3, 4}},
       [](const auto& t) { return t[0] / 4; }},
      {"reduction",
       [](Fusion& f) {
         return sum(input(f, 3), {0, 2});
       },
       {{2, 3, 4}},
       [](const auto& t) {
         return at::sum(t[0], at::IntArrayRef{0, 2});
       }},
      {"reduction_max",
       [](Fusion& f) { return max(input(f, 2), {1}); },
       {{3, 4}},
       [](const auto& t) { return at::amax(t[0], at::IntArrayRef{1}); }},
      {"broadcast",
       [](Fusion& f) {
         return broadcast(input(f, 1), {true, false});
       },
       {{5}},
       [](const auto& t) { return t[0].unsqueeze(0); }},
      {"matmul",
       [](Fusion& f) {
         TensorView* a = input(f, 2);
         TensorView* b = input(f, 2);
         return matmul(a, b);
       },
       {{3, 4}, {4, 5}},
       [](const auto& t) { return at::matmul(t[0], t[1]); }},
      {"linear",
       [](Fusion& f) {
         TensorView* x = input(f, 2);
         TensorView* w = input(f, 2);
         TensorView* b = input(f, 1);
         return linear(x, w, b);
       },
       {{3, 4}, {6, 4}, {6}},
       [](const auto& t) { return at::linear(t[0], t[1], t[2]); }},
      {"select",
       [](Fusion& f) { return select(input(f, 2), 1, 2); },
       {{3, 4}},
       [](const auto& t) { return t[0].select(1, 2); }},
      {"slice",
       [](Fusion& f) { return slice(input(f, 2), 0, 1, 3); },
       {{4, 5}},
       [](const auto& t) { return t[0].slice(0, 1, 3); }},
      {"permute",
       [](Fusion& f) {
         return permute(input(f, 3), {2, 0, 1});
       },
       {{2, 3, 4}},
       [](const auto& t) {
         return t[0].permute({2, 0, 1});
       }},
      {"reshape",
       [](Fusion& f) {
         return reshape(input(f, 2), {2, -1});
       },
       {{4, 3}},
       [](const auto& t) {
         return t[0].reshape({2, 6});
       }},
      {"full",
       [](Fusion& f) {
         TensorView* like = input(f, 2);
         return full(extentsOf(like), IrBuilder::create<Scalar>(1.5), DataType::Float);
       },
       {{2, 3}},
       [](const auto& t) { return at::full(t[0].sizes(), 1.5); }},
  };
}

class TopLevelOpTest : public HostIrEvalTest, public ::testing::WithParamInterface<OpCase> {};

TEST_P(TopLevelOpTest, MatchesAtenWithAndWithoutPreallocatedOutput) {
  const OpCase& op = GetParam();
  TensorView* out = op.build(hic());
  push(out->definition());
  hic().addOutput(out);

  std::vector<at::Tensor> inputs;
  for (const auto& sizes : op.input_sizes) {
    inputs.push_back(at::randn(sizes));
  }
  at::Tensor expected = op.reference(inputs);

  std::vector<at::Tensor> outs = run(inputs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(allClose(outs[0], expected, 1e-5, 1e-5));

  // Into a buffer the caller gives: the program writes it, no copy after.
  at::Tensor buffer = at::full(expected.sizes(), -3.0, expected.options());
  outs = run(inputs, {buffer});
  EXPECT_EQ(outs[0].data_ptr(), buffer.data_ptr());
  EXPECT_TRUE(allClose(buffer, expected, 1e-5, 1e-5));
  // The inputs are untouched.
  EXPECT_TRUE(allClose(op.reference(inputs), expected, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(EveryOp, TopLevelOpTest, ::testing::ValuesIn(opCases()),
                         [](const auto& info) { return info.param.name; });

// --- HirAliasSelect feeding ops that write slices in place --------------------

struct SliceCase {
  std::string name;
  // Builds the body on in_slice ([M, K] of the input [i0, M, K]); may add
  // program inputs after the sliced one.
  std::function<TensorView*(Fusion&, TensorView* in_slice)> body;
  std::vector<std::vector<int64_t>> extra_input_sizes;
  std::function<at::Tensor(const at::Tensor& in, const std::vector<at::Tensor>& extra)> reference;
};

void PrintTo(const SliceCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<SliceCase> sliceCases() {
  return {
      {"matmul",
       [](Fusion& f, TensorView* s) {
         TensorView* w = input(f, 2);
         return matmul(s, w);
       },
       {{6, 5}},
       [](const at::Tensor& in, const auto& e) { return at::matmul(in, e[0]); }},
      {"linear",
       [](Fusion& f, TensorView* s) {
         TensorView* w = input(f, 2);
         TensorView* b = input(f, 1);
         return linear(s, w, b);
       },
       {{7, 6}, {7}},
       [](const at::Tensor& in, const auto& e) { return at::linear(in, e[0], e[1]); }},
      {"binary",
       [](Fusion& f, TensorView* s) {
         TensorView* b = makeTensorOver({extentsOf(s)[1]});
         f.addInput(b);
         return mul(s, b);  // broadcast over the rows
       },
       {{6}},
       [](const at::Tensor& in, const auto& e) { return in * e[0]; }},
      {"reduction",
       [](Fusion&, TensorView* s) { return sum(s, {1}); },
       {},
       [](const at::Tensor& in, const auto&) { return at::sum(in, at::IntArrayRef{2}); }},
      {"set",
       [](Fusion&, TensorView* s) { return set(s); },
       {},
       [](const at::Tensor& in, const auto&) { return in.clone(); }},
  };
}

class AliasSelectTest : public HostIrEvalTest, public ::testing::WithParamInterface<SliceCase> {};

TEST_P(AliasSelectTest, OpWritesOutputSlicesInPlace) {
  const SliceCase& op = GetParam();
  TensorView* in = makeContigTensor(3);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(in, [&](TensorView* in_slice) {
    TensorView* out_slice = op.body(hic(), in_slice);
    return LoopBody{out_slice, {out_slice->definition()}};
  });
  hic().addOutput(out);

  // The printed program is the classic pattern.
  std::string printed = hic().toString();
  EXPECT_TRUE(containsAll(
      printed,
      {" = ALLOCATE(mem_type=", "GetCurrentStream into Stream", "FOR StreamIdx in iStreamIdx",
       "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )", "    Synchronize Stream",
       "= HirAliasSelect( T0_g_float", "axis = iS", "index = StreamIdx )"}))
      << printed;

  at::Tensor t_in = at::randn({5, 4, 6});
  std::vector<at::Tensor> inputs{t_in};
  std::vector<at::Tensor> extra;
  for (const auto& sizes : op.extra_input_sizes) {
    extra.push_back(at::randn(sizes));
    inputs.push_back(extra.back());
  }
  at::Tensor expected = op.reference(t_in, extra);

  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/3);
  std::vector<at::Tensor> outs = hie.run(inputs);
  EXPECT_TRUE(allClose(outs[0], expected, 1e-4, 1e-5));
  EXPECT_TRUE(outs[0].is_contiguous());

  at::Tensor buffer = at::full(expected.sizes(), -3.0);
  outs = hie.run(inputs, {buffer});
  EXPECT_EQ(outs[0].data_ptr(), buffer.data_ptr());
  EXPECT_TRUE(allClose(buffer, expected, 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Ops, AliasSelectTest, ::testing::ValuesIn(sliceCases()),
                         [](const auto& info) { return info.param.name; });

// --- Allocate and Deallocate --------------------------------------------------

using AllocationTest = HostIrEvalTest;

// An intermediate allocated inside the loop body is a fresh buffer each
// iteration: iterations on different streams (concurrent: no Synchronize of
// the caller's stream in the body) must not share it.
TEST_F(AllocationTest, AllocateInsideTheLoopIsFreshEachIteration) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* out = pipelinedLoop(
      in,
      [&](TensorView* in_slice) {
        TensorView* tmp = mul(in_slice, 2.0);
        auto* alloc = IrBuilder::create<Allocate>(tmp, MemoryType::Global, false);
        TensorView* out_slice = add(exp(tmp), 1.0);
        return LoopBody{out_slice,
                        {alloc, tmp->definition(), out_slice->definition()->input(0)->definition(),
                         out_slice->definition(), IrBuilder::create<Deallocate>(tmp)}};
      },
      /*allocate_out=*/true, /*sync_with_caller=*/false);
  hic().addOutput(out);
  EXPECT_TRUE(containsAll(hic().toString(), {"    T", "= ALLOCATE(", "    Deallocate T"}));
  at::Tensor t0 = at::randn({32, 4096});
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/4);
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<at::Tensor> outs = hie.run({t0});
    EXPECT_TRUE(allClose(outs[0], at::exp(t0 * 2) + 1, 1e-5, 1e-5));
  }
}

// A loop intermediate without an Allocate (its op allocates it) is also a
// fresh buffer per iteration; the last iteration's value stays visible after
// the loop.
TEST_F(AllocationTest, LoopIntermediatesAreFreshEachIteration) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* tmp = nullptr;
  TensorView* out = pipelinedLoop(
      in,
      [&](TensorView* in_slice) {
        tmp = sub(in_slice, 0.25);
        TensorView* out_slice = tanh(tmp);
        return LoopBody{out_slice, {tmp->definition(), out_slice->definition()}};
      },
      /*allocate_out=*/true, /*sync_with_caller=*/false);
  hic().addOutput(out);
  hic().addOutput(tmp);
  at::Tensor t0 = at::randn({32, 4096});
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/4);
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<at::Tensor> outs = hie.run({t0});
    EXPECT_TRUE(allClose(outs[0], at::tanh(t0 - 0.25), 1e-5, 1e-5));
    EXPECT_TRUE(allClose(outs[1], t0[31] - 0.25));
  }
}

// A buffer allocated before the loop, written slice by slice through
// HirAliasSelect and read whole after it on the caller's stream.
TEST_F(AllocationTest, AllocateOutsideTheLoopWrittenBySlices) {
  TensorView* in = makeContigTensor(2);
  hic().addInput(in);
  TensorView* scaled = makeTensorOver(extentsOf(in));
  push(IrBuilder::create<Allocate>(scaled, MemoryType::Global, /*zero_init=*/true));
  TensorView* out = pipelinedLoop(in, [&](TensorView* in_slice) {
    TensorView* scaled_slice = mul(in_slice, 3.0);
    auto* alias = IrBuilder::create<HirAliasSelect>(scaled, scaled_slice, 0, streamIdx());
    TensorView* out_slice = neg(scaled_slice);
    return LoopBody{out_slice, {alias, scaled_slice->definition(), out_slice->definition()}};
  });
  TensorView* total = sum(scaled, {0, 1});
  push(total->definition());
  hic().addOutput(out);
  hic().addOutput(scaled);
  hic().addOutput(total);

  at::Tensor t0 = at::randn({9, 10});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], -3 * t0));
  EXPECT_TRUE(allClose(outs[1], 3 * t0));
  EXPECT_TRUE(allClose(outs[2], at::sum(3 * t0), 1e-4, 1e-4));
}

TEST_F(AllocationTest, ZeroInitAllocateOutput) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* zeros_out = makeTensorOver(extentsOf(in), DataType::Double);
  push(IrBuilder::create<Allocate>(zeros_out, MemoryType::Global, /*zero_init=*/true));
  hic().addOutput(zeros_out);
  std::vector<at::Tensor> outs = run({at::randn({6})});
  EXPECT_TRUE(allClose(outs[0], at::zeros({6}, at::kDouble)));
}

TEST_F(AllocationTest, DeallocateDropsTheBinding) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* tmp = relu(in);
  TensorView* out = add(tmp, 1.0);
  push(tmp->definition());
  push(out->definition());
  push(IrBuilder::create<Deallocate>(tmp));
  hic().addOutput(out);
  at::Tensor t0 = at::randn({100});
  EXPECT_TRUE(allClose(run({t0})[0], at::relu(t0) + 1));
}

TEST_F(AllocationTest, UseAfterDeallocateIsAnError) {
  TensorView* in = makeContigTensor(1);
  hic().addInput(in);
  TensorView* tmp = relu(in);
  TensorView* out = add(tmp, 1.0);
  push(tmp->definition());
  push(IrBuilder::create<Deallocate>(tmp));
  push(out->definition());
  hic().addOutput(out);
  EXPECT_HOSTIR_ERROR(
      run({at::randn({4})}),
      {tmp->toInlineString(), "before the host program computes or allocates it", "= add("});
}

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

// Nested loops: the inner loop's intermediates are fresh in every iteration
// of the outer loop too (not only in the first). Iterations run concurrently
// (no Synchronize of the caller's stream in the body), so a shared buffer
// shows as wrong values.
TEST_F(AllocationTest, NestedLoopIntermediatesAreFreshEachIteration) {
  TensorView* in = makeContigTensor(3);  // [outer, inner, K]
  hic().addInput(in);
  Val* outer_index = namedInt("i_outer");
  auto* outer = IrBuilder::create<ForLoop>(outer_index, in->axis(0));
  std::vector<Val*> row_extents{in->shapeDomain()[1]->extent(), in->shapeDomain()[2]->extent()};
  TensorView* in_rows = makeTensorOver(row_extents);
  TensorView* out = makeTensorOver(extentsOf(in));
  TensorView* out_rows = makeTensorOver(row_extents);
  push(IrBuilder::create<Allocate>(out, MemoryType::Global, false));
  auto* get_caller = IrBuilder::create<GetCurrentStream>();
  push(get_caller);
  outer->body().push_back(IrBuilder::create<HirAliasSelect>(in, in_rows, 0, outer_index));
  outer->body().push_back(IrBuilder::create<HirAliasSelect>(out, out_rows, 0, outer_index));

  Val* index = streamIdx();
  auto* inner = IrBuilder::create<ForLoop>(index, in->axis(1));
  auto* worker = IrBuilder::create<Stream>(mod(index, namedInt(kNumberOfStreams)));
  TensorView* in_slice = makeTensorOver({row_extents[1]});
  TensorView* tmp = mul(in_slice, 2.0);
  TensorView* out_slice = exp(tmp);
  for (Expr* e : std::vector<Expr*>{
           IrBuilder::create<SetCurrentStream>(worker),
           IrBuilder::create<HirAliasSelect>(in_rows, in_slice, 0, index),
           IrBuilder::create<HirAliasSelect>(out_rows, out_slice, 0, index), tmp->definition(),
           out_slice->definition(), IrBuilder::create<SetCurrentStream>(get_caller->stream()),
           IrBuilder::create<Synchronize>(worker)}) {
    inner->body().push_back(e);
  }
  outer->body().push_back(inner);
  push(outer);
  hic().addOutput(out);

  at::Tensor t0 = at::randn({2, 8, 1 << 18});
  HostIrEvaluator& hie = evaluator(/*number_of_streams=*/4);
  for (int attempt = 0; attempt < 3; ++attempt) {
    EXPECT_TRUE(allClose(hie.run({t0})[0], at::exp(t0 * 2), 1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace hostir::test
