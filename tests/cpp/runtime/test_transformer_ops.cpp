// The ops a transformer needs, run and compared with ATen: rsqrt, erf, pow,
// comparisons, where, iota/arange, mean/var/var_mean, softmax/log_softmax,
// layer norm, RMS norm, a causal mask and batched matmul over heads; the
// compositions through FusionExecutor and through HostExecutor (segmented,
// lowered to a host program).

#include <cmath>
#include <limits>
#include <sstream>

#include "hostir/host_ir/host_unit.h"
#include "hostir/runtime/compiled_segment.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using TransformerOpsAtenTest = RuntimeTest;

// --- rsqrt, erf ------------------------------------------------------------------

class NewUnaryOpTest : public RuntimeTest, public ::testing::WithParamInterface<at::ScalarType> {};

TEST_P(NewUnaryOpTest, RsqrtAndErfMatchAten) {
  at::ScalarType type = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  fusion().addInput(tv0);
  fusion().addOutput(rsqrt(tv0));
  fusion().addOutput(erf(tv0));
  at::Tensor t0 = randomTensor({5, 7}, type);
  at::Tensor positive = t0.abs() + 1;
  std::vector<at::Tensor> outs = run({positive});
  // Integers compute in float; Half computes in float and rounds.
  at::Tensor as_float =
      at::isFloatingType(type) && type != at::kHalf ? positive : positive.to(at::kFloat);
  at::ScalarType out_type = at::isFloatingType(type) ? type : at::kFloat;
  EXPECT_TRUE(allClose(outs[0], at::rsqrt(as_float).to(out_type), rtolFor(out_type), 1e-3));
  EXPECT_TRUE(allClose(outs[1], at::erf(as_float).to(out_type), rtolFor(out_type), 1e-3));
}

INSTANTIATE_TEST_SUITE_P(Types, NewUnaryOpTest,
                         ::testing::Values(at::kFloat, at::kDouble, at::kHalf, at::kInt, at::kLong),
                         [](const ::testing::TestParamInfo<at::ScalarType>& info) {
                           return toString(fromAtenType(info.param));
                         });

TEST_F(TransformerOpsAtenTest, RsqrtOfZeroNegativeAndNan) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addOutput(rsqrt(tv0));
  fusion().addOutput(erf(tv0));
  at::Tensor t0 = at::tensor({0.0F, -1.0F, std::numeric_limits<float>::quiet_NaN(), 4.0F});
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], at::rsqrt(t0)));  // inf, NaN, NaN, 0.5
  EXPECT_TRUE(std::isinf(outs[0][0].item<float>()));
  EXPECT_TRUE(allClose(outs[1], at::erf(t0)));
}

// --- pow and the comparisons ------------------------------------------------------

struct NewBinaryCase {
  std::string name;
  TensorView* (*build_tt)(TensorView*, TensorView*);
  TensorView* (*build_ts)(TensorView*, double);
  at::Tensor (*reference)(const at::Tensor&, const at::Tensor&);
};

std::vector<NewBinaryCase> newBinaryCases() {
  return {
      {"pow", [](TensorView* a, TensorView* b) { return pow(a, b); },
       [](TensorView* a, double b) { return pow(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b); }},
      {"eq", [](TensorView* a, TensorView* b) { return eq(a, b); },
       [](TensorView* a, double b) { return eq(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }},
      {"ne", [](TensorView* a, TensorView* b) { return ne(a, b); },
       [](TensorView* a, double b) { return ne(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::ne(a, b); }},
      {"lt", [](TensorView* a, TensorView* b) { return lt(a, b); },
       [](TensorView* a, double b) { return lt(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }},
      {"le", [](TensorView* a, TensorView* b) { return le(a, b); },
       [](TensorView* a, double b) { return le(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); }},
      {"gt", [](TensorView* a, TensorView* b) { return gt(a, b); },
       [](TensorView* a, double b) { return gt(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }},
      {"ge", [](TensorView* a, TensorView* b) { return ge(a, b); },
       [](TensorView* a, double b) { return ge(a, b); },
       [](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); }},
  };
}

class NewBinaryOpTest
    : public RuntimeTest,
      public ::testing::WithParamInterface<std::tuple<NewBinaryCase, at::ScalarType>> {};

// Tensor with a broadcast tensor of another dtype, and tensor with a Python
// number: values, dtype (Bool for comparisons, promoted for pow) and NaNs.
TEST_P(NewBinaryOpTest, MatchesAten) {
  const auto& [op, type] = GetParam();
  TensorView* tv0 = makeContigTensor(2, fromAtenType(type));
  TensorView* tv1 = makeConcreteTensor({1, 6}, DataType::Float);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(op.build_tt(tv0, tv1));
  fusion().addOutput(op.build_ts(tv0, 2.0));
  at::Tensor t0 = randomTensor({4, 6}, type);
  at::Tensor t1 = at::randn({1, 6});
  if (at::isFloatingType(type)) {
    t0[0][0] = std::numeric_limits<float>::quiet_NaN();
    t0[1] = t1[0];  // equal elements for eq/le/ge
  }
  std::vector<at::Tensor> outs = run({t0, t1});
  EXPECT_TRUE(allClose(outs[0], op.reference(t0, t1), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(
      outs[1], op.reference(t0, at::scalar_tensor(2.0, at::kDouble).to(at::result_type(t0, 2.0))),
      1e-5, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Types, NewBinaryOpTest,
                         ::testing::Combine(::testing::ValuesIn(newBinaryCases()),
                                            ::testing::Values(at::kFloat, at::kDouble, at::kLong)),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_" +
                                  toString(fromAtenType(std::get<1>(info.param)));
                         });

TEST_F(TransformerOpsAtenTest, IntegerPowStaysInteger) {
  TensorView* tv0 = makeContigTensor(1, DataType::Int64);
  fusion().addInput(tv0);
  fusion().addOutput(pow(tv0, 3));
  fusion().addOutput(pow(2, tv0));
  at::Tensor t0 = at::arange(6, at::kLong);
  std::vector<at::Tensor> outs = run({t0});
  EXPECT_TRUE(allClose(outs[0], at::pow(t0, 3), 0, 0));
  EXPECT_TRUE(allClose(outs[1], at::pow(2, t0), 0, 0));
}

// --- where --------------------------------------------------------------------------

TEST_F(TransformerOpsAtenTest, WhereTensorsBroadcastAndPromote) {
  TensorView* cond = makeConcreteTensor({4, 1}, DataType::Bool);
  TensorView* a = makeConcreteTensor({1, 5}, DataType::Int32);
  TensorView* b = makeContigTensor(1, DataType::Double);
  fusion().addInput(cond);
  fusion().addInput(a);
  fusion().addInput(b);
  fusion().addOutput(where(cond, a, b));
  fusion().addOutput(where(cond, a, 7));
  fusion().addOutput(where(cond, 0.5, b));
  at::Tensor tc = at::tensor({1, 0, 1, 0}).to(at::kBool).reshape({4, 1});
  at::Tensor ta = at::randint(-5, 5, {1, 5}, at::kInt);
  at::Tensor tb = at::randn({5}, at::kDouble);
  std::vector<at::Tensor> outs = run({tc, ta, tb});
  EXPECT_TRUE(allClose(outs[0], at::where(tc, ta.to(at::kDouble), tb)));
  EXPECT_TRUE(allClose(outs[1], at::where(tc, ta, at::scalar_tensor(7, at::kInt)), 0, 0));
  EXPECT_TRUE(allClose(outs[2], at::where(tc, at::scalar_tensor(0.5, at::kDouble), tb)));
}

TEST_F(TransformerOpsAtenTest, WhereKeepsNansOfTheSelectedOperand) {
  TensorView* x = makeContigTensor(1);
  fusion().addInput(x);
  fusion().addOutput(where(gt(x, 0.0), x, 0.0));
  at::Tensor t = at::tensor({1.0F, -2.0F, std::numeric_limits<float>::quiet_NaN(), 3.0F});
  std::vector<at::Tensor> outs = run({t});
  // NaN > 0 is false: the NaN element takes the other operand, 0.
  EXPECT_TRUE(allClose(outs[0], at::tensor({1.0F, 0.0F, 0.0F, 3.0F}), 0, 0));
}

// --- iota, arange ---------------------------------------------------------------------

TEST_F(TransformerOpsAtenTest, IotaAndArangeMatchTorchArange) {
  TensorView* x = makeContigTensor(1);
  fusion().addInput(x);
  Val* n = x->axis(0)->extent();
  Scalar* start = scalarInput(DataType::Int64);
  fusion().addOutput(iota(n, start, IrBuilder::create<Scalar>(int64_t{3}), DataType::Int32));
  fusion().addOutput(
      iota(n, IrBuilder::create<Scalar>(0.5), IrBuilder::create<Scalar>(0.1), DataType::Float));
  fusion().addOutput(arange(start, n, IrBuilder::create<Scalar>(int64_t{2})));
  std::vector<at::Tensor> outs = run({at::randn({9}), int64_t{2}});
  EXPECT_TRUE(allClose(outs[0], at::arange(2, 2 + 9 * 3, 3, at::kInt), 0, 0));
  EXPECT_TRUE(allClose(outs[1], at::arange(0.5, 0.5 + 9 * 0.1 - 0.05, 0.1, at::kFloat)));
  EXPECT_TRUE(allClose(outs[2], at::arange(2, 9, 2, at::kLong), 0, 0));
}

// --- mean, var, var_mean -----------------------------------------------------------------

TEST_F(TransformerOpsAtenTest, MeanVarVarMeanMatchAten) {
  TensorView* x = makeContigTensor(3);
  fusion().addInput(x);
  fusion().addOutput(mean(x, {0, 2}));
  fusion().addOutput(var(x, {-1}));                                      // unbiased
  fusion().addOutput(var(x, {1}, /*correction=*/0, /*keep_dim=*/true));  // population
  auto [v, m] = varMean(x, {0, 1}, 1, true);
  fusion().addOutput(v);
  fusion().addOutput(m);
  at::Tensor t = at::randn({3, 4, 5}) * 3 + 1;
  std::vector<at::Tensor> outs = run({t});
  EXPECT_TRUE(allClose(outs[0], at::mean(t, at::IntArrayRef{0, 2})));
  EXPECT_TRUE(allClose(outs[1], at::var(t, at::IntArrayRef{-1}, /*unbiased=*/true)));
  EXPECT_TRUE(
      allClose(outs[2], at::var(t, at::IntArrayRef{1}, /*unbiased=*/false, /*keepdim=*/true)));
  auto [ev, em] =
      at::var_mean(t, at::IntArrayRef{0, 1}, c10::optional<int64_t>(1), /*keepdim=*/true);
  EXPECT_TRUE(allClose(outs[3], ev));
  EXPECT_TRUE(allClose(outs[4], em));
}

// --- softmax, log_softmax --------------------------------------------------------------------

TEST_F(TransformerOpsAtenTest, SoftmaxAndLogSoftmaxMatchAtenAndAreStable) {
  TensorView* x = makeContigTensor(3);
  fusion().addInput(x);
  fusion().addOutput(softmax(x, -1));
  fusion().addOutput(softmax(x, 0));
  fusion().addOutput(logSoftmax(x, 1));
  // Large logits: exp without the max subtracted would overflow to inf.
  at::Tensor t = at::randn({2, 3, 8}) * 50 + 1000;
  std::vector<at::Tensor> outs = run({t});
  EXPECT_TRUE(allClose(outs[0], at::softmax(t, -1)));
  EXPECT_TRUE(allClose(outs[1], at::softmax(t, 0)));
  EXPECT_TRUE(allClose(outs[2], at::log_softmax(t, 1), 1e-5, 1e-4));
  EXPECT_FALSE(outs[0].isnan().any().item<bool>());
}

TEST_F(TransformerOpsAtenTest, SoftmaxOfDouble) {
  TensorView* x = makeContigTensor(2, DataType::Double);
  fusion().addInput(x);
  fusion().addOutput(softmax(x, 1));
  at::Tensor t = at::randn({4, 16}, at::kDouble);
  EXPECT_TRUE(allClose(run({t})[0], at::softmax(t, 1), 1e-12, 1e-12));
}

// --- layer norm, RMS norm ---------------------------------------------------------------------

TEST_F(TransformerOpsAtenTest, LayerNormMatchesAten) {
  TensorView* x = makeContigTensor(3);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  TensorView* w2 = makeContigTensor(2);
  fusion().addInput(x);
  fusion().addInput(w);
  fusion().addInput(b);
  fusion().addInput(w2);
  fusion().addOutput(layerNorm(x, 1, w, b));
  fusion().addOutput(layerNorm(x, 1));
  fusion().addOutput(layerNorm(x, 2, w2, nullptr, 1e-3));
  at::Tensor t = at::randn({2, 5, 16}) * 4 + 2;
  at::Tensor tw = at::randn({16});
  at::Tensor tb = at::randn({16});
  at::Tensor tw2 = at::randn({5, 16});
  std::vector<at::Tensor> outs = run({t, tw, tb, tw2});
  EXPECT_TRUE(allClose(outs[0], at::layer_norm(t, {16}, tw, tb), 1e-4, 1e-5));
  EXPECT_TRUE(allClose(outs[1], at::layer_norm(t, {16}), 1e-4, 1e-5));
  EXPECT_TRUE(allClose(outs[2], at::layer_norm(t, {5, 16}, tw2, {}, 1e-3), 1e-4, 1e-5));
}

TEST_F(TransformerOpsAtenTest, RmsNormMatchesReference) {
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  fusion().addInput(x);
  fusion().addInput(w);
  fusion().addInput(b);
  fusion().addOutput(rmsNorm(x, 1, w));
  fusion().addOutput(rmsNorm(x, 1, w, b, 1e-5));
  at::Tensor t = at::randn({6, 32});
  at::Tensor tw = at::randn({32});
  at::Tensor tb = at::randn({32});
  std::vector<at::Tensor> outs = run({t, tw, tb});
  auto reference = [&](double eps) {
    return t * at::rsqrt(t.pow(2).mean({-1}, /*keepdim=*/true) + eps) * tw;
  };
  EXPECT_TRUE(allClose(outs[0], reference(1e-6), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(outs[1], reference(1e-5) + tb, 1e-5, 1e-5));
}

// --- causal attention ---------------------------------------------------------------------------

// softmax(where(mask, q @ k^T * scale, -inf)) @ v over a heads axis, the mask
// from causalMask (iota + ge), against the same math in ATen.
void buildCausalAttention(Fusion& fusion, double scale) {
  TensorView* q = makeContigTensor(3);   // [h, s, d]
  TensorView* kt = makeContigTensor(3);  // [h, d, s]
  TensorView* v = makeContigTensor(3);   // [h, s, d]
  fusion.addInput(q);
  fusion.addInput(kt);
  fusion.addInput(v);
  TensorView* scores = mul(matmul(q, kt), scale);  // [h, s, s]
  TensorView* mask = causalMask(q->axis(1)->extent(), kt->axis(2)->extent());
  TensorView* masked = where(mask, scores, -INFINITY);
  fusion.addOutput(masked);
  fusion.addOutput(matmul(softmax(masked, -1), v));
}

std::vector<at::Tensor> causalAttentionReference(const at::Tensor& q, const at::Tensor& kt,
                                                 const at::Tensor& v, double scale) {
  int64_t s = q.size(1);
  at::Tensor scores = at::matmul(q, kt) * scale;
  at::Tensor mask = at::ones({s, s}, at::kBool).tril();
  at::Tensor masked = scores.masked_fill(mask.logical_not(), -INFINITY);
  return {masked, at::matmul(at::softmax(masked, -1), v)};
}

TEST_F(TransformerOpsAtenTest, CausalMaskMatchesTril) {
  Scalar* offset = scalarInput(DataType::Int64);
  TensorView* x = makeContigTensor(2);
  fusion().addInput(x);
  fusion().addOutput(causalMask(x->axis(0)->extent(), x->axis(1)->extent(), offset));
  std::vector<at::Tensor> outs = run({int64_t{3}, at::randn({4, 9})});
  // Query i (at position 3 + i) sees keys 0..3+i: tril with diagonal 3.
  EXPECT_TRUE(allClose(outs[0], at::ones({4, 9}, at::kBool).tril(3), 0, 0));
}

TEST_F(TransformerOpsAtenTest, MaskedSoftmaxAttentionMatchesAten) {
  const double scale = 1.0 / std::sqrt(8.0);
  buildCausalAttention(fusion(), scale);
  at::Tensor q = at::randn({2, 6, 8});
  at::Tensor kt = at::randn({2, 8, 6});
  at::Tensor v = at::randn({2, 6, 8});
  std::vector<at::Tensor> outs = run({q, kt, v});
  std::vector<at::Tensor> expected = causalAttentionReference(q, kt, v, scale);
  EXPECT_TRUE(allClose(outs[0], expected[0], 1e-5, 1e-5));
  EXPECT_TRUE(allClose(outs[1], expected[1], 1e-5, 1e-5));
}

TEST_F(TransformerOpsAtenTest, BatchedMatmulOverHeads) {
  TensorView* q = makeContigTensor(3);
  TensorView* kt = makeContigTensor(3);
  fusion().addInput(q);
  fusion().addInput(kt);
  TensorView* scores = matmul(q, kt);
  ASSERT_EQ(scores->shapeDomain().size(), 3u);
  EXPECT_EQ(scores->shapeDomain()[0]->extent(), q->axis(0)->extent());
  EXPECT_EQ(scores->shapeDomain()[1]->extent(), q->axis(1)->extent());
  EXPECT_EQ(scores->shapeDomain()[2]->extent(), kt->axis(2)->extent());
  fusion().addOutput(scores);
  at::Tensor tq = at::randn({4, 5, 8});
  at::Tensor tk = at::randn({4, 8, 5});
  EXPECT_TRUE(allClose(run({tq, tk})[0], at::matmul(tq, tk), 1e-5, 1e-5));
}

// --- through the host lowering -------------------------------------------------------------------

// Every HostUnit of the executor's program runs as a compiled kernel (or
// through ATen only because HOSTIR_KERNELS=aten, the *.aten variant): no op
// of the transformer sends its segment to the ATen fallback, and the run
// before really ran each kernel (no call fell back to ATen at run time).
void expectEveryHostUnitCompiles(Executor& executor) {
  const HostIrContainer& program = executor.hostProgram();
  ASSERT_FALSE(program.hostUnits().empty()) << program.toString();
  for (const HostUnit* unit : program.hostUnits()) {
    std::string how = describeSegmentExecution(*unit->fusion());
    EXPECT_TRUE(how.rfind("compiled kernel", 0) == 0 || how == "ATen (HOSTIR_KERNELS=aten)")
        << unit->toInlineString() << ": " << how;
  }
  if (!kernelsEnabled()) {
    return;
  }
  std::istringstream report(executor.segmentExecution());
  size_t lines = 0;
  for (std::string line; std::getline(report, line); ++lines) {
    EXPECT_NE(line.find(": compiled kernel"), std::string::npos) << line;
    EXPECT_NE(line.find("; ran it 1 time"), std::string::npos) << line;
    EXPECT_EQ(line.find("fell back"), std::string::npos) << line;
  }
  EXPECT_EQ(lines, program.hostUnits().size()) << executor.segmentExecution();
}

// The compositions segmented and lowered to a host program (matmul a host
// node of its own; the pointwise ops, reductions, where and iota between
// the matmuls merge into HostUnits, each one compiled kernel), run by the
// HostIrEvaluator on streams.
TEST_F(TransformerOpsAtenTest, AttentionRunsThroughHostExecutor) {
  const double scale = 0.25;
  buildCausalAttention(fusion(), scale);
  HostExecutor executor(fusion());
  at::Tensor q = at::randn({2, 7, 16});
  at::Tensor kt = at::randn({2, 16, 7});
  at::Tensor v = at::randn({2, 7, 16});
  std::vector<at::Tensor> outs = executor.run({q, kt, v});
  std::vector<at::Tensor> expected = causalAttentionReference(q, kt, v, scale);
  EXPECT_TRUE(allClose(outs[0], expected[0], 1e-5, 1e-5));
  EXPECT_TRUE(allClose(outs[1], expected[1], 1e-5, 1e-5));
  std::string program = executor.hostProgram().toString();
  EXPECT_TRUE(containsAll(program, {"= where(", "= max(", "= sum(", "= matmul("})) << program;
  expectEveryHostUnitCompiles(executor);
}

TEST_F(TransformerOpsAtenTest, LayerNormAndGeluRunThroughHostExecutor) {
  TensorView* x = makeContigTensor(2);
  TensorView* w = makeContigTensor(1);
  TensorView* b = makeContigTensor(1);
  fusion().addInput(x);
  fusion().addInput(w);
  fusion().addInput(b);
  TensorView* y = layerNorm(x, 1, w, b);
  fusion().addOutput(mul(y, pow(add(erf(mul(y, M_SQRT1_2)), 1.0), 1.0)));
  fusion().addOutput(logSoftmax(rmsNorm(x, 1), 0));
  HostExecutor executor(fusion());
  at::Tensor t = at::randn({8, 32});
  at::Tensor tw = at::randn({32});
  at::Tensor tb = at::randn({32});
  std::vector<at::Tensor> outs = executor.run({t, tw, tb});
  at::Tensor ln = at::layer_norm(t, {32}, tw, tb);
  EXPECT_TRUE(allClose(outs[0], ln * (at::erf(ln * M_SQRT1_2) + 1), 1e-4, 1e-5));
  at::Tensor rms = t * at::rsqrt(t.pow(2).mean({-1}, true) + 1e-6);
  EXPECT_TRUE(allClose(outs[1], at::log_softmax(rms, 0), 1e-5, 1e-5));
  expectEveryHostUnitCompiles(executor);
}

}  // namespace
}  // namespace hostir::test
