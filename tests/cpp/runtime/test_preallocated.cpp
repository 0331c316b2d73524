// Preallocated outputs: every op writes into the caller's buffer in place
// (same storage, right values), also when that buffer is a narrow view of a
// larger one; wrong buffers are rejected with clear errors.

#include <functional>

#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

// One op: how to build it from the inputs, which inputs to feed, and what
// plain ATen computes.
struct PreallocCase {
  std::string name;
  std::vector<std::vector<int64_t>> input_sizes;  // float inputs, symbolic sizes
  std::function<TensorView*(const std::vector<TensorView*>&)> build;
  std::function<at::Tensor(const std::vector<at::Tensor>&)> reference;
};

std::vector<PreallocCase> preallocCases() {
  using Tvs = const std::vector<TensorView*>&;
  using Ts = const std::vector<at::Tensor>&;
  return {
      {"set", {{3, 4}}, [](Tvs t) { return set(t[0]); }, [](Ts t) { return t[0].clone(); }},
      {"neg", {{3, 4}}, [](Tvs t) { return neg(t[0]); }, [](Ts t) { return at::neg(t[0]); }},
      {"abs", {{3, 4}}, [](Tvs t) { return abs(t[0]); }, [](Ts t) { return at::abs(t[0]); }},
      {"exp", {{3, 4}}, [](Tvs t) { return exp(t[0]); }, [](Ts t) { return at::exp(t[0]); }},
      {"log",
       {{3, 4}},
       [](Tvs t) { return log(abs(t[0])); },
       [](Ts t) { return at::log(at::abs(t[0])); }},
      {"sqrt",
       {{3, 4}},
       [](Tvs t) { return sqrt(abs(t[0])); },
       [](Ts t) { return at::sqrt(at::abs(t[0])); }},
      {"relu", {{3, 4}}, [](Tvs t) { return relu(t[0]); }, [](Ts t) { return at::relu(t[0]); }},
      {"sigmoid",
       {{3, 4}},
       [](Tvs t) { return sigmoid(t[0]); },
       [](Ts t) { return at::sigmoid(t[0]); }},
      {"tanh", {{3, 4}}, [](Tvs t) { return tanh(t[0]); }, [](Ts t) { return at::tanh(t[0]); }},
      {"gelu", {{3, 4}}, [](Tvs t) { return gelu(t[0]); }, [](Ts t) { return at::gelu(t[0]); }},
      {"cast_to_double",
       {{3, 4}},
       [](Tvs t) { return castOp(DataType::Double, t[0]); },
       [](Ts t) { return t[0].to(at::kDouble); }},
      {"add",
       {{3, 4}, {3, 4}},
       [](Tvs t) { return add(t[0], t[1]); },
       [](Ts t) { return t[0] + t[1]; }},
      {"sub_scalar",
       {{3, 4}},
       [](Tvs t) { return sub(t[0], 1.5); },
       [](Ts t) { return t[0] - 1.5; }},
      {"mul_broadcast",
       {{3, 4}, {4}},
       [](Tvs t) { return mul(t[0], t[1]); },
       [](Ts t) { return t[0] * t[1]; }},
      {"div",
       {{3, 4}, {3, 4}},
       [](Tvs t) { return div(t[0], add(abs(t[1]), 1.0)); },
       [](Ts t) { return t[0] / (t[1].abs() + 1.0); }},
      {"maximum",
       {{3, 4}, {3, 4}},
       [](Tvs t) { return maximum(t[0], t[1]); },
       [](Ts t) { return at::maximum(t[0], t[1]); }},
      {"minimum",
       {{3, 4}, {3, 4}},
       [](Tvs t) { return minimum(t[0], t[1]); },
       [](Ts t) { return at::minimum(t[0], t[1]); }},
      {"sum",
       {{3, 4, 5}},
       [](Tvs t) { return sum(t[0], {1}); },
       [](Ts t) { return at::sum(t[0], at::IntArrayRef{1}); }},
      {"sum_keepdim",
       {{3, 4, 5}},
       [](Tvs t) {
         return sum(t[0], {0, 2}, true);
       },
       [](Ts t) {
         return at::sum(t[0], at::IntArrayRef{0, 2}, true);
       }},
      {"max",
       {{3, 4, 5}},
       [](Tvs t) { return max(t[0], {2}); },
       [](Ts t) { return at::amax(t[0], {2}); }},
      {"min",
       {{3, 4, 5}},
       [](Tvs t) { return min(t[0], {0}); },
       [](Ts t) { return at::amin(t[0], {0}); }},
      {"broadcast",
       {{3, 4}},
       [](Tvs t) {
         return broadcast(t[0], {false, true, false});
       },
       [](Ts t) { return t[0].unsqueeze(1); }},
      {"matmul",
       {{3, 6}, {6, 4}},
       [](Tvs t) { return matmul(t[0], t[1]); },
       [](Ts t) { return at::matmul(t[0], t[1]); }},
      {"matmul_batched",
       {{2, 3, 6}, {2, 6, 4}},
       [](Tvs t) { return matmul(t[0], t[1]); },
       [](Ts t) { return at::matmul(t[0], t[1]); }},
      {"matmul_mat_vec",
       {{3, 6}, {6}},
       [](Tvs t) { return matmul(t[0], t[1]); },
       [](Ts t) { return at::matmul(t[0], t[1]); }},
      {"matmul_vec_mat",
       {{6}, {6, 4}},
       [](Tvs t) { return matmul(t[0], t[1]); },
       [](Ts t) { return at::matmul(t[0], t[1]); }},
      {"linear_1d_input_bias",
       {{4}, {5, 4}, {5}},
       [](Tvs t) { return linear(t[0], t[1], t[2]); },
       [](Ts t) { return at::linear(t[0], t[1], t[2]); }},
      {"linear",
       {{3, 4}, {5, 4}},
       [](Tvs t) { return linear(t[0], t[1]); },
       [](Ts t) { return at::linear(t[0], t[1]); }},
      {"linear_bias",
       {{2, 3, 4}, {5, 4}, {5}},
       [](Tvs t) { return linear(t[0], t[1], t[2]); },
       [](Ts t) { return at::linear(t[0], t[1], t[2]); }},
      {"select",
       {{3, 4}},
       [](Tvs t) { return select(t[0], 0, 1); },
       [](Ts t) { return t[0].select(0, 1); }},
      {"slice",
       {{3, 8}},
       [](Tvs t) { return slice(t[0], 1, 2, 6); },
       [](Ts t) { return t[0].slice(1, 2, 6); }},
      {"permute",
       {{3, 4}},
       [](Tvs t) {
         return permute(t[0], {1, 0});
       },
       [](Ts t) { return t[0].t(); }},
      {"reshape",
       {{3, 4}},
       [](Tvs t) {
         return reshape(t[0], {2, -1});
       },
       [](Ts t) {
         return t[0].reshape({2, -1});
       }},
      {"full",
       {{3, 4}},
       [](Tvs t) { return full(extentsOf(t[0]), IrBuilder::create<Scalar>(0.5), DataType::Float); },
       [](Ts t) { return at::full(t[0].sizes(), 0.5, at::TensorOptions().dtype(at::kFloat)); }},
      {"chain",
       {{3, 4}, {3, 4}},
       [](Tvs t) { return relu(add(mul(t[0], 2.0), t[1])); },
       [](Ts t) { return at::relu(t[0] * 2.0 + t[1]); }},
  };
}

void PrintTo(const PreallocCase& c, std::ostream* os) {
  *os << c.name;
}

class PreallocatedTest : public RuntimeTest,
                         public ::testing::WithParamInterface<std::tuple<PreallocCase, bool>> {};

TEST_P(PreallocatedTest, WritesInPlace) {
  const auto& [c, narrow] = GetParam();
  std::vector<TensorView*> tvs;
  std::vector<at::Tensor> inputs;
  for (const std::vector<int64_t>& sizes : c.input_sizes) {
    tvs.push_back(makeContigTensor(static_cast<int64_t>(sizes.size())));
    fusion().addInput(tvs.back());
    inputs.push_back(at::randn(sizes));
  }
  TensorView* out = c.build(tvs);
  fusion().addOutput(out);
  at::Tensor expected = c.reference(inputs);
  ASSERT_EQ(toAtenType(out->dtype()), expected.scalar_type());

  // The buffer: either exactly the output, or a narrow view along the last
  // axis of a larger buffer whose other elements must stay untouched.
  std::vector<int64_t> big_sizes = expected.sizes().vec();
  if (narrow) {
    ASSERT_FALSE(big_sizes.empty());
    big_sizes.back() += 3;
  }
  at::Tensor big = at::full(big_sizes, -7.0, at::TensorOptions().dtype(expected.scalar_type()));
  at::Tensor buffer = narrow ? big.narrow(-1, 1, expected.size(-1)) : big;
  void* data = buffer.data_ptr();

  std::vector<PolymorphicValue> values(inputs.begin(), inputs.end());
  std::vector<at::Tensor> outs = run(values, {buffer});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].data_ptr(), data);
  EXPECT_EQ(buffer.data_ptr(), data);
  EXPECT_EQ(buffer.sizes(), expected.sizes());
  EXPECT_TRUE(allClose(buffer, expected, 1e-4, 1e-4));
  EXPECT_TRUE(allClose(outs[0], expected, 1e-4, 1e-4));
  if (narrow) {
    at::Tensor untouched =
        at::cat({big.narrow(-1, 0, 1), big.narrow(-1, big_sizes.back() - 2, 2)}, -1);
    EXPECT_TRUE(at::all(untouched == -7.0).item<bool>()) << "wrote outside the narrow view";
  }
  // The inputs are not modified by writing the output.
  EXPECT_TRUE(allClose(c.reference(inputs), expected, 0, 0));
}

INSTANTIATE_TEST_SUITE_P(AllOps, PreallocatedTest,
                         ::testing::Combine(::testing::ValuesIn(preallocCases()),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<PreallocatedTest::ParamType>& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_narrow" : "_whole");
                         });

using PreallocatedErrorsTest = RuntimeTest;

TEST_F(PreallocatedErrorsTest, ZeroDimOutput) {
  TensorView* tv0 = makeContigTensor(1);
  TensorView* tv1 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(matmul(tv0, tv1));
  at::Tensor t0 = at::randn({5});
  at::Tensor t1 = at::randn({5});
  at::Tensor buffer = at::empty({});
  void* data = buffer.data_ptr();
  run({t0, t1}, {buffer});
  EXPECT_EQ(buffer.data_ptr(), data);
  EXPECT_TRUE(allClose(buffer, at::matmul(t0, t1), 1e-5, 1e-5));
}

TEST_F(PreallocatedErrorsTest, SeveralOutputsAndIntermediates) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  TensorView* a = exp(tv0);
  TensorView* b = sum(a, {1});
  fusion().addOutput(a);
  fusion().addOutput(b);
  fusion().addOutput(tv0);  // an input as output is copied into its buffer
  at::Tensor t0 = at::randn({3, 4});
  at::Tensor ba = at::empty({3, 4});
  at::Tensor bb = at::empty({3});
  at::Tensor bc = at::empty({3, 4});
  std::vector<at::Tensor> outs = run({t0}, {ba, bb, bc});
  EXPECT_TRUE(outs[0].is_same(ba));
  EXPECT_TRUE(outs[1].is_same(bb));
  EXPECT_TRUE(outs[2].is_same(bc));
  EXPECT_TRUE(allClose(ba, t0.exp()));
  EXPECT_TRUE(allClose(bb, t0.exp().sum(at::IntArrayRef{1}), 1e-5, 1e-5));
  EXPECT_TRUE(allClose(bc, t0));
  EXPECT_NE(bc.data_ptr(), t0.data_ptr());
}

TEST_F(PreallocatedErrorsTest, IntegerAndHalfBuffers) {
  TensorView* tv0 = makeContigTensor(2, DataType::Int32);
  TensorView* tv1 = makeContigTensor(2, DataType::Half);
  fusion().addInput(tv0);
  fusion().addInput(tv1);
  fusion().addOutput(sum(tv0, {0}));
  fusion().addOutput(neg(tv1));
  at::Tensor t0 = randomTensor({3, 4}, at::kInt);
  at::Tensor t1 = randomTensor({3, 4}, at::kHalf);
  at::Tensor b0 = at::empty({4}, at::TensorOptions().dtype(at::kLong));
  at::Tensor b1 = at::empty({3, 4}, at::TensorOptions().dtype(at::kHalf));
  run({t0, t1}, {b0, b1});
  EXPECT_TRUE(allClose(b0, at::sum(t0, at::IntArrayRef{0})));
  EXPECT_TRUE(allClose(b1, -t1));
}

TEST_F(PreallocatedErrorsTest, WrongShapeRejected) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  TensorView* out = neg(tv0);
  fusion().addOutput(out);
  at::Tensor buffer = at::zeros({3, 5});
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 4})}, {buffer}),
                      {"buffer", out->toInlineString(), "sizes [3, 5]", "expected [3, 4]"});
  EXPECT_TRUE(at::all(buffer == 0).item<bool>()) << "a rejected buffer was written";
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 4})}, {at::zeros({12})}), {"buffer", "sizes [12]"});
}

TEST_F(PreallocatedErrorsTest, WrongDtypeRejected) {
  TensorView* tv0 = makeContigTensor(2);
  fusion().addInput(tv0);
  TensorView* out = neg(tv0);
  fusion().addOutput(out);
  EXPECT_HOSTIR_ERROR(
      run({at::randn({3, 4})}, {at::zeros({3, 4}, at::TensorOptions().dtype(at::kDouble))}),
      {"buffer", out->toInlineString(), "dtype Double", "expected float"});
  EXPECT_HOSTIR_ERROR(run({at::randn({3, 4})}, {at::Tensor()}), {"buffer", "undefined"});
}

TEST_F(PreallocatedErrorsTest, WrongNumberOfBuffersRejected) {
  TensorView* tv0 = makeContigTensor(1);
  fusion().addInput(tv0);
  fusion().addOutput(neg(tv0));
  fusion().addOutput(abs(tv0));
  at::Tensor t0 = at::randn({4});
  EXPECT_HOSTIR_ERROR(run({t0}, {at::empty({4})}),
                      {"2 outputs", "1 preallocated buffers", "all or none"});
  EXPECT_HOSTIR_ERROR(run({t0}, {at::empty({4}), at::empty({4}), at::empty({4})}),
                      {"2 outputs", "3 preallocated buffers"});
}

}  // namespace
}  // namespace hostir::test
