// hostir's backward fusions against torch autograd on the same inputs, in
// float32 and float64, through the host executor (compiled kernels, or ATen
// in the .aten variant; the harness: grads_vs_torch.h).

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/grads_vs_torch.h"
#include "hostir/autodiff/differentiate.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/host_executor.h"
#include "lowering/lowering_test_utils.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using DifferentiateTest = GradsVsTorchTest;

TEST_P(DifferentiateTest, EveryUnaryOp) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = input(fusion, 2);
  TensorView* positive = add(abs(x), 0.5);
  TensorView* y = add(mul(tanh(x), sigmoid(x)), exp(mul(x, 0.3)));
  y = add(y, div(log(positive), sqrt(positive)));
  y = add(y, mul(relu(x), gelu(x)));
  y = add(y, sub(rsqrt(positive), erf(neg(x))));
  y = add(y, geluDerivative(x));
  fusion.addOutput(y);
  auto reference = [](const std::vector<at::Tensor>& in) {
    at::Tensor x = in[0];
    at::Tensor positive = x.abs() + 0.5;
    return std::vector<at::Tensor>{(x.tanh() * x.sigmoid() + (x * 0.3).exp()) +
                                   positive.log() / positive.sqrt() + x.relu() * at::gelu(x) +
                                   (positive.rsqrt() - (-x).erf()) +
                                   at::gelu_backward(at::ones_like(x), x)};
  };
  expectGradsMatchTorch(fusion, reference, {at::randn({6, 9}, options())});
}

TEST_P(DifferentiateTest, BinaryOpsBroadcastAndSumBack) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = input(fusion, 2);
  TensorView* b = input(fusion, 1);
  TensorView* c = input(fusion, {-1, 1});
  TensorView* positive = add(abs(a), 1.0);
  TensorView* y = sub(mul(a, b), div(c, add(abs(b), 1.0)));
  y = add(y, maximum(a, c));
  y = add(y, minimum(b, a));
  y = add(y, pow(positive, b));
  y = add(y, pow(a, 3));
  fusion.addOutput(y);
  auto reference = [](const std::vector<at::Tensor>& in) {
    const at::Tensor &a = in[0], &b = in[1], &c = in[2];
    at::Tensor y = a * b - c / (b.abs() + 1.0);
    y = y + at::maximum(a, c) + at::minimum(b, a);
    return std::vector<at::Tensor>{y + at::pow(a.abs() + 1.0, b) + a.pow(3)};
  };
  expectGradsMatchTorch(
      fusion, reference,
      {at::randn({5, 7}, options()), at::randn({7}, options()), at::randn({5, 1}, options())});
}

// fmod's grads are torch's: 1 for the dividend, -trunc(a / b) for the
// divisor (broadcast here, so summed back); "no gradient rule" before.
TEST_P(DifferentiateTest, FmodGivesBothOperandsTorchsGrads) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = input(fusion, 2);
  TensorView* b = input(fusion, 1);
  TensorView* divisor = add(abs(b), 0.5);
  fusion.addOutput(fmod(mul(a, 4.0), divisor));
  auto reference = [](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{at::fmod(in[0] * 4.0, in[1].abs() + 0.5)};
  };
  expectGradsMatchTorch(fusion, reference,
                        {at::randn({5, 7}, options()), at::randn({7}, options())});
}

TEST_P(DifferentiateTest, ReductionsAndNormalizations) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = input(fusion, 2);
  TensorView* weight = input(fusion, 1);
  TensorView* bias = input(fusion, 1);
  fusion.addOutput(sum(mul(x, x), {1}));
  fusion.addOutput(max(x, {0}));
  fusion.addOutput(softmax(x, -1));
  fusion.addOutput(logSoftmax(x, 0));
  fusion.addOutput(layerNorm(x, 1, weight, bias));
  fusion.addOutput(rmsNorm(x, 1, weight));
  fusion.addOutput(var(x, {1}, 1, /*keep_dim=*/true));
  auto reference = [](const std::vector<at::Tensor>& in) {
    const at::Tensor &x = in[0], &w = in[1], &b = in[2];
    at::Tensor rms = x * at::rsqrt((x * x).mean({1}, true) + 1e-6) * w;
    return std::vector<at::Tensor>{(x * x).sum({1}),
                                   std::get<0>(x.max(0)),
                                   x.softmax(-1),
                                   x.log_softmax(0),
                                   at::layer_norm(x, {x.size(1)}, w, b),
                                   rms,
                                   x.var({1}, true, true)};
  };
  expectGradsMatchTorch(
      fusion, reference,
      {at::randn({6, 10}, options()), at::randn({10}, options()), at::randn({10}, options())});
}

TEST_P(DifferentiateTest, MatmulsOfEveryRankAndLinear) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* a = input(fusion, 3);       // [2, 4, 5]
  TensorView* b = input(fusion, 2);       // [5, 3]
  TensorView* v = input(fusion, 1);       // [5]
  TensorView* x = input(fusion, 3);       // [2, 4, 5]
  TensorView* weight = input(fusion, 2);  // [6, 5]
  TensorView* bias = input(fusion, 1);    // [6]
  fusion.addOutput(matmul(a, b));
  fusion.addOutput(matmul(a, v));
  fusion.addOutput(matmul(v, b));
  fusion.addOutput(matmul(v, v));
  fusion.addOutput(linear(x, weight, bias));
  fusion.addOutput(linear(v, weight));
  auto reference = [](const std::vector<at::Tensor>& in) {
    return std::vector<at::Tensor>{at::matmul(in[0], in[1]),        at::matmul(in[0], in[2]),
                                   at::matmul(in[2], in[1]),        at::matmul(in[2], in[2]),
                                   at::linear(in[3], in[4], in[5]), at::linear(in[2], in[4])};
  };
  expectGradsMatchTorch(
      fusion, reference,
      {at::randn({2, 4, 5}, options()), at::randn({5, 3}, options()), at::randn({5}, options()),
       at::randn({2, 4, 5}, options()), at::randn({6, 5}, options()), at::randn({6}, options())});
}

TEST_P(DifferentiateTest, ViewsSelectAndWhere) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = input(fusion, {4, 6});
  TensorView* y = input(fusion, {4, 6});
  fusion.addOutput(permute(mul(x, y), {1, 0}));
  fusion.addOutput(reshape(x, {3, 8}));
  fusion.addOutput(select(y, 0, 2));
  fusion.addOutput(where(gt(x, y), x, mul(y, 2.0)));
  auto reference = [](const std::vector<at::Tensor>& in) {
    const at::Tensor &x = in[0], &y = in[1];
    return std::vector<at::Tensor>{(x * y).permute({1, 0}), x.reshape({3, 8}), y.select(0, 2),
                                   at::where(x > y, x, y * 2.0)};
  };
  expectGradsMatchTorch(fusion, reference,
                        {at::randn({4, 6}, options()), at::randn({4, 6}, options())});
}

// A causal attention head and a GELU MLP: the ops of a transformer layer.
TEST_P(DifferentiateTest, CausalAttentionAndMlp) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = input(fusion, 2);   // [T, H]
  TensorView* wq = input(fusion, 2);  // [H, D]
  TensorView* wk = input(fusion, 2);
  TensorView* w1 = input(fusion, 2);  // [F, H]
  TensorView* w2 = input(fusion, 2);  // [H, F]
  TensorView* q = matmul(x, wq);
  TensorView* k = matmul(x, wk);
  Val* tokens = x->getLogicalDomain()[0]->extent();
  TensorView* scores = mul(matmul(q, permute(k, {1, 0})), 0.5);
  TensorView* probs = softmax(where(causalMask(tokens, tokens), scores, -INFINITY), -1);
  TensorView* attended = add(x, matmul(probs, x));
  fusion.addOutput(linear(gelu(linear(attended, w1)), w2));
  auto reference = [](const std::vector<at::Tensor>& in) {
    const at::Tensor& x = in[0];
    at::Tensor scores = at::matmul(at::matmul(x, in[1]), at::matmul(x, in[2]).t()) * 0.5;
    const int64_t t = x.size(0);
    at::Tensor mask = at::ones({t, t}, at::kBool).tril();
    at::Tensor probs = at::where(mask, scores, -INFINITY).softmax(-1);
    at::Tensor attended = x + at::matmul(probs, x);
    return std::vector<at::Tensor>{at::linear(at::gelu(at::linear(attended, in[3])), in[4])};
  };
  expectGradsMatchTorch(
      fusion, reference,
      {at::randn({8, 6}, options()), at::randn({6, 4}, options()), at::randn({6, 4}, options()),
       at::randn({12, 6}, options()), at::randn({6, 12}, options())});
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DifferentiateTest, ::testing::Values(at::kFloat, at::kDouble),
                         dtypeName);

// --- what is saved, and what the backward reads --------------------------

int64_t countOf(const Fusion& fusion, const std::function<bool(const Expr*)>& is_kind) {
  int64_t count = 0;
  for (const Expr* expr : fusion.exprs()) {
    count += is_kind(expr) ? 1 : 0;
  }
  return count;
}

TEST(DifferentiateSave, GemmOutputsAreSavedAndPointwiseOpsRecomputed) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* w1 = makeContigTensor(2);
  TensorView* w2 = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addInput(w1);
  fusion.addInput(w2);
  fusion.addOutput(linear(gelu(linear(x, w1)), w2));
  auto isLinear = [](const Expr* expr) { return expr->isA<LinearOp>(); };
  auto isGelu = [](const Expr* expr) {
    return expr->isA<UnaryOp>() && expr->as<UnaryOp>()->type() == UnaryOpType::Gelu;
  };

  Differentiated saving = differentiate(fusion);
  // The first linear's result is saved (the second's is the output, which
  // the backward does not read): one extra forward output, no linear in
  // the backward, the GELU recomputed from the saved result.
  EXPECT_EQ(saving.saved_outputs, std::vector<int64_t>{1});
  EXPECT_EQ(saving.forward->outputs().size(), 2u);
  EXPECT_EQ(countOf(*saving.backward, isLinear), 0);
  EXPECT_EQ(countOf(*saving.backward, isGelu), 1);
  EXPECT_EQ(saving.backward->inputs().size(), 3u + 1u + 1u);

  Differentiated recomputing = differentiate(fusion, {.save = SavePolicy::kRecomputeAll});
  EXPECT_TRUE(recomputing.saved_outputs.empty());
  EXPECT_EQ(countOf(*recomputing.backward, isLinear), 1);  // the first linear, recomputed
}

// A gelu's grad is g * gelu_derivative(x), one op that kernels compute with
// gelu's erf, not erf and exp composed (the erf op is correctly rounded:
// the MLP step's GELU backward took 6.5x ATen's gelu_backward).
TEST(DifferentiateSave, AGelusGradIsOneGeluDerivative) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  fusion.addOutput(gelu(x));
  auto isUnary = [](UnaryOpType type) {
    return [type](const Expr* expr) {
      return expr->isA<UnaryOp>() && expr->as<UnaryOp>()->type() == type;
    };
  };
  Differentiated differentiated = differentiate(fusion);
  EXPECT_EQ(countOf(*differentiated.backward, isUnary(UnaryOpType::GeluDerivative)), 1);
  EXPECT_EQ(countOf(*differentiated.backward, isUnary(UnaryOpType::Erf)), 0);
  EXPECT_EQ(countOf(*differentiated.backward, isUnary(UnaryOpType::Exp)), 0);
}

// A training step runs the forward program, then the backward, whose
// buffers differ in size; both take theirs from the process's buffer pool.
// From the third step on, neither makes new memory: each keeps the other's
// buffers in the pool's reserve (docs/streams.md, "Buffers across runs").
TEST(DifferentiateRun, AStepsProgramsMakeNoNewMemoryFromTheThirdStep) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);   // [512, 1024]
  TensorView* w1 = makeContigTensor(2);  // [1536, 1024]
  TensorView* w2 = makeContigTensor(2);  // [768, 1536]
  fusion.addInput(x);
  fusion.addInput(w1);
  fusion.addInput(w2);
  // Buffers of 1.5 to 6 MiB; the backward's grads of x and the weights are
  // sizes the forward never asks for.
  fusion.addOutput(linear(gelu(linear(x, w1)), w2));
  Differentiated differentiated = differentiate(fusion);
  HostExecutor forward(*differentiated.forward);
  HostExecutor backward(*differentiated.backward);
  const std::vector<at::Tensor> inputs{at::randn({512, 1024}), at::randn({1536, 1024}) * 0.03,
                                       at::randn({768, 1536}) * 0.03};
  const at::Tensor output_grad = at::randn({512, 768});
  BufferPool& pool = BufferPool::shared();
  pool.release();
  std::vector<int64_t> made;
  for (int step = 0; step < 5; ++step) {
    std::vector<at::Tensor> outputs = forward.run(inputs);
    std::vector<at::Tensor> backward_inputs = inputs;
    backward_inputs.push_back(output_grad);
    for (int64_t saved : differentiated.saved_outputs) {
      backward_inputs.push_back(outputs.at(static_cast<size_t>(saved)));
    }
    backward.run(backward_inputs);
    made.push_back(pool.made());
  }
  EXPECT_GT(made[0], 0) << "the step pools nothing: the test says nothing";
  EXPECT_EQ(made[4], made[1]) << "new blocks after each step: " << made[0] << " " << made[1] << " "
                              << made[2] << " " << made[3] << " " << made[4];
}

// A sum over an axis sharded across devices is kept, as a GEMM's result
// is: its result comes out of a collective (here an allreduce over the
// heads; the layer's attention out-projection is reduce-scattered), so
// recomputing it for the backward would move its bytes over the link again.
TEST(DifferentiateSave, ASumAcrossDevicesIsSavedNotRecomputed) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* per_head = makeContigTensor(3);  // [heads, T, H], heads on the devices
  TensorView* x = makeContigTensor(2);
  fusion.addInput(per_head);
  fusion.addInput(x);
  shard(per_head, DeviceMesh({0, 1}), 0);
  TensorView* h = add(x, sum(per_head, {0}));
  fusion.addOutput(mul(h, h));  // its grad reads h, so the sum
  auto isSum = [](const Expr* expr) { return expr->isA<ReductionOp>(); };

  Differentiated saving = differentiate(fusion);
  EXPECT_EQ(saving.saved_outputs, std::vector<int64_t>{1});
  EXPECT_EQ(countOf(*saving.backward, isSum), 0);

  Differentiated recomputing = differentiate(fusion, {.save = SavePolicy::kRecomputeAll});
  EXPECT_TRUE(recomputing.saved_outputs.empty());
  EXPECT_EQ(countOf(*recomputing.backward, isSum), 1);
}

// kSaveGathered: the sequence-parallel MLP's x, sharded on its tokens and
// read whole by the column-parallel linear, is gathered by a `set` of its
// own in the forward, which the forward saves (replicated, [S, H]) and the
// backward reads for w1's grad instead of x: the backward no longer
// gathers x (`hostir sp-mlp --train --save gathered`, cli.train, shows the
// lowered programs: one allgather fewer in the backward, none more in the
// forward). The default keeps only the GEMMs' results; unsharded fusions
// have nothing to gather.
TEST(DifferentiateSave, KeepingTheGatheredInputSavesTheTokensOnce) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  DeviceMesh mesh({0, 1});
  TensorView* x = makeContigTensor(2);   // [S, H] on the tokens
  TensorView* w1 = makeContigTensor(2);  // [F, H] on the ffn
  TensorView* w2 = makeContigTensor(2);  // [H, F] on the ffn
  fusion.addInput(x);
  fusion.addInput(w1);
  fusion.addInput(w2);
  shard(x, mesh, 0);
  shard(w1, mesh, 0);
  shard(w2, mesh, 1);
  TensorView* h = shard(linear(x, w1), mesh, 1);
  fusion.addOutput(shard(linear(gelu(h), w2), mesh, 0));
  auto isSet = [](const Expr* expr) { return expr->isA<LoadStoreOp>(); };

  Differentiated gemm_outputs = differentiate(fusion);
  EXPECT_EQ(gemm_outputs.saved_outputs, std::vector<int64_t>{1});  // h
  Differentiated gathered = differentiate(fusion, {.save = SavePolicy::kSaveGathered});
  ASSERT_EQ(gathered.saved_outputs.size(), 2u);  // h and x gathered
  const std::vector<Val*>& outputs = gathered.forward->outputs();
  ASSERT_EQ(outputs.size(), 3u);
  auto* x_gathered = outputs[static_cast<size_t>(gathered.saved_outputs[1])]->as<TensorView>();
  ASSERT_NE(x_gathered->definition(), nullptr);
  EXPECT_TRUE(x_gathered->definition()->isA<LoadStoreOp>());
  EXPECT_EQ(x_gathered->definition()->input(0), gathered.forward->inputs()[0]);
  EXPECT_FALSE(shardingOf(x_gathered).isSharded()) << "replicated: every rank's tokens";
  EXPECT_EQ(countOf(*gathered.forward, isSet), 1);
  // The forward's linear still reads x itself (the lowering pipelines its
  // allgather and fills the saved gather from the chunks).
  for (Expr* expr : gathered.forward->exprs()) {
    if (expr->isA<LinearOp>() && expr->input(1) == gathered.forward->inputs()[1]) {
      EXPECT_EQ(expr->input(0), gathered.forward->inputs()[0]);
    }
  }
  // The backward's grad of w1 reads the saved gather, not x.
  Val* saved_x = gathered.backward->inputs()[static_cast<size_t>(
      gathered.forward->inputs().size() + 1 + 1)];  // x, w1, w2, dy, h, x gathered
  EXPECT_FALSE(shardingOf(saved_x->as<TensorView>()).isSharded());
  EXPECT_EQ(gathered.backward->inputs().size(), gemm_outputs.backward->inputs().size() + 1);

  // Unsharded: nothing to gather, the same as the default.
  Fusion plain;
  FusionGuard plain_guard(&plain);
  TensorView* a = makeContigTensor(2);
  TensorView* w = makeContigTensor(2);
  plain.addInput(a);
  plain.addInput(w);
  plain.addOutput(linear(a, w));
  EXPECT_EQ(differentiate(plain, {.save = SavePolicy::kSaveGathered}).saved_outputs.size(),
            differentiate(plain).saved_outputs.size());
}

// An attention's softmax keeps its probabilities, as torch does, and its
// grad reads them alone (p * (g - sum(g * p))): the backward neither keeps
// the scores nor recomputes the probabilities from them (exp, max), which
// held both [heads, T, T] tensors at the backward's peak (issue 35).
TEST(DifferentiateSave, ASoftmaxKeepsItsProbabilitiesNotTheScores) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2, DataType::Double);
  TensorView* wq = makeContigTensor(2, DataType::Double);
  TensorView* wk = makeContigTensor(2, DataType::Double);
  fusion.addInput(x);
  fusion.addInput(wq);
  fusion.addInput(wk);
  TensorView* q = matmul(x, wq);
  TensorView* k = matmul(x, wk);
  Val* tokens = x->getLogicalDomain()[0]->extent();
  TensorView* scores = mul(matmul(q, permute(k, {1, 0})), 0.5);
  TensorView* probs = softmax(where(causalMask(tokens, tokens), scores, -INFINITY), -1);
  fusion.addOutput(matmul(probs, x));

  Differentiated d = differentiate(fusion);
  // q, k and the probabilities; not the scores.
  ASSERT_EQ(d.saved_outputs.size(), 3u);
  int64_t saved_probs = 0;
  for (int64_t position : d.saved_outputs) {
    const Val* saved = d.forward->outputs()[static_cast<size_t>(position)];
    const Expr* definition = saved->definition();
    ASSERT_NE(definition, nullptr);
    if (definition->isA<BinaryOp>() && definition->as<BinaryOp>()->type() == BinaryOpType::Div) {
      ++saved_probs;
    } else {
      EXPECT_TRUE(definition->isA<MatmulOp>()) << definition->toString();
    }
  }
  EXPECT_EQ(saved_probs, 1);
  auto isExp = [](const Expr* expr) {
    return expr->isA<UnaryOp>() && expr->as<UnaryOp>()->type() == UnaryOpType::Exp;
  };
  auto isMax = [](const Expr* expr) {
    return expr->isA<ReductionOp>() && expr->as<ReductionOp>()->type() == ReductionOpType::Max;
  };
  auto isMatmul = [](const Expr* expr) { return expr->isA<MatmulOp>(); };
  EXPECT_EQ(countOf(*d.backward, isExp), 0);
  EXPECT_EQ(countOf(*d.backward, isMax), 0);
  // Two per forward GEMM (P·x, q·kᵀ, x·wq, x·wk): none recomputes one.
  EXPECT_EQ(countOf(*d.backward, isMatmul), 8);

  at::Tensor xs = at::randn({8, 6}, at::kDouble);
  at::Tensor wqs = at::randn({6, 4}, at::kDouble);
  at::Tensor wks = at::randn({6, 4}, at::kDouble);
  at::Tensor gy = at::randn({8, 6}, at::kDouble);
  Grads grads = runDifferentiated(d, {xs, wqs, wks}, {gy});
  std::vector<at::Tensor> leaves = {xs.clone().requires_grad_(true),
                                    wqs.clone().requires_grad_(true),
                                    wks.clone().requires_grad_(true)};
  at::Tensor s =
      at::matmul(at::matmul(leaves[0], leaves[1]), at::matmul(leaves[0], leaves[2]).t()) * 0.5;
  at::Tensor mask = at::ones({8, 8}, at::kBool).tril();
  at::matmul(at::where(mask, s, -INFINITY).softmax(-1), leaves[0]).backward(gy);
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_TRUE(at::allclose(grads.input_grads[i], leaves[i].grad(), 1e-9, 1e-9)) << i;
  }
}

// The saved probabilities of a softmax over where(causal mask, s, -inf)
// tell the backward they are 0 above the diagonal (so its GEMMs reading
// them skip those blocks, causal_backward_test.cpp); a mask that does not
// start at query 0, a softmax over another axis, or a fill other than -inf
// make no such claim.
TEST(DifferentiateSave, ACausalSoftmaxsSavedProbabilitiesAreZeroAboveTheDiagonal) {
  enum class Variant { Causal, OffsetMask, OtherAxis, ZeroFill };
  auto markedProbabilities = [](Variant variant) {
    Fusion fusion;
    FusionGuard fg(&fusion);
    TensorView* s = makeContigTensor(3);
    TensorView* v = makeContigTensor(3);
    fusion.addInput(s);
    fusion.addInput(v);
    Val* tokens = s->getLogicalDomain()[1]->extent();
    Val* offset = variant == Variant::OffsetMask ? IrBuilder::create<Scalar>(int64_t{1}) : nullptr;
    TensorView* mask = causalMask(tokens, tokens, offset);
    TensorView* masked = where(mask, s, variant == Variant::ZeroFill ? 0.0 : -INFINITY);
    TensorView* probs = softmax(masked, variant == Variant::OtherAxis ? 1 : -1);
    fusion.addOutput(matmul(probs, v));
    Differentiated d = differentiate(fusion);
    int64_t saved = 0;
    int64_t marked = 0;
    for (Val* input : d.backward->inputs()) {
      if (const auto* tv = dynamic_cast<const TensorView*>(input)) {
        marked += tv->zeroAboveDiagonal() ? 1 : 0;
      }
    }
    for (int64_t position : d.saved_outputs) {
      const Expr* def = d.forward->outputs()[static_cast<size_t>(position)]->definition();
      saved +=
          def != nullptr && def->isA<BinaryOp>() && def->as<BinaryOp>()->type() == BinaryOpType::Div
              ? 1
              : 0;
    }
    EXPECT_EQ(saved, 1) << "the probabilities are saved either way";
    return marked;
  };
  EXPECT_EQ(markedProbabilities(Variant::Causal), 1);
  EXPECT_EQ(markedProbabilities(Variant::OffsetMask), 0);
  EXPECT_EQ(markedProbabilities(Variant::OtherAxis), 0);
  EXPECT_EQ(markedProbabilities(Variant::ZeroFill), 0);
}

TEST(DifferentiateSave, AnInputThatReachesNoOutputGetsZeros) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* unused = makeContigTensor(1);
  fusion.addInput(x);
  fusion.addInput(unused);
  fusion.addOutput(mul(x, 3.0));
  Differentiated d = differentiate(fusion);
  at::Tensor xs = at::randn({3, 4});
  at::Tensor gy = at::randn({3, 4});
  Grads grads = runDifferentiated(d, {xs, at::randn({5})}, {gy});
  EXPECT_TRUE(allClose(grads.input_grads[0], gy * 3.0));
  EXPECT_TRUE(at::equal(grads.input_grads[1], at::zeros({5})));
}

// --- errors -----------------------------------------------------------------

// nextafter has no derivative (nor has it in torch); the product reduction
// was the example before it got its rule.
TEST(DifferentiateErrors, AnOpWithoutARuleIsNamed) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* y = makeContigTensor(2);
  fusion.addInput(y);
  fusion.addOutput(exp(nextafter(y, 0.0)));
  expectErrorContaining([&] { differentiate(fusion); },
                        {"no gradient rule for", "nextafter", "it is not differentiable"});
}

// The gradient fuzzer found select's grad wrong when the selected axis is
// sharded (docs/reliability.md, "Gradient fuzzing"): refused, not wrong.
TEST(DifferentiateErrors, SelectOnAShardedAxisIsRefused) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  shard(x, DeviceMesh({0, 1}), 0);
  fusion.addOutput(exp(select(x, 0, 1)));
  expectErrorContaining([&] { differentiate(fusion); },
                        {"not supported yet: the grad of", "sharded over the devices"});

  // The other axis is replicated: differentiable as before.
  Fusion other;
  FusionGuard fg2(&other);
  TensorView* y = makeContigTensor(2);
  other.addInput(y);
  shard(y, DeviceMesh({0, 1}), 0);
  other.addOutput(exp(select(y, 1, 1)));
  EXPECT_NO_THROW(differentiate(other));
}

// Found by the gradient fuzzer (seed 15 on 4 ranks): a causal mask's where
// on scores sharded on the key axis got a wrong grad (each shard masked as
// if it held the first keys); it was differentiated without a word.
TEST(DifferentiateErrors, CausalMaskOnAShardedKeyAxisIsRefused) {
  // exp(where(causal mask, scores, 0)) on scores of `rank` axes, the last
  // two queries and keys, sharded on `sharded_axis`.
  auto masked_scores = [](Fusion& fusion, int64_t rank, int64_t sharded_axis) {
    TensorView* scores = makeContigTensor(rank);
    fusion.addInput(scores);
    shard(scores, DeviceMesh({0, 1}), sharded_axis);
    std::vector<IterDomain*> shape = scores->shapeDomain();
    TensorView* mask = causalMask(shape[rank - 2]->extent(), shape[rank - 1]->extent());
    fusion.addOutput(exp(where(mask, scores, 0.0)));
  };
  Fusion fusion;
  FusionGuard fg(&fusion);
  masked_scores(fusion, 2, 1);
  expectErrorContaining([&] { differentiate(fusion); },
                        {"not supported yet: the grad of", "causal mask", "along axis 1",
                         "sharded over the devices"});

  // Heads sharded, the mask broadcast along them: differentiable as before.
  Fusion heads;
  FusionGuard fg2(&heads);
  masked_scores(heads, 3, 0);
  EXPECT_NO_THROW(differentiate(heads));
}

TEST(DifferentiateErrors, PositionsMustNameFloatingTensors) {
  Fusion fusion;
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  TensorView* mask = makeContigTensor(2, DataType::Bool);
  fusion.addInput(x);
  fusion.addInput(mask);
  fusion.addOutput(where(mask, x, 0.0));
  expectErrorContaining([&] { differentiate(fusion, {.inputs = {1}}); },
                        {"input 1", "not a floating-point tensor"});
  expectErrorContaining([&] { differentiate(fusion, {.outputs = {3}}); },
                        {"output 3 does not exist", "1 outputs"});
  expectErrorContaining([&] { differentiate(fusion, {.inputs = {0, 0}}); }, {"listed twice"});
}

}  // namespace
}  // namespace hostir::test
