// Compiled kernels against the ATen interpreter on the same inputs, per
// dtype: each case builds one segment, runs it compiled (the default) and
// with HOSTIR_KERNELS=aten, checks the compiled run really ran a kernel, and
// compares with the dtype's tolerance.

#include <sys/mman.h>

#include <functional>

#include "common/scoped_env.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/resize_ops.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

using Build = std::function<void(std::vector<TensorView*>&)>;

struct Shaped {
  std::vector<int64_t> sizes;
  DataType dtype;
};

TensorView* inputOf(const Shaped& shaped) {
  std::vector<Val*> extents;
  for (size_t i = 0; i < shaped.sizes.size(); ++i) {
    extents.push_back(shaped.sizes[i] == 1
                          ? static_cast<Val*>(IrBuilder::create<Scalar>(int64_t{1}))
                          : IrBuilder::create<Scalar>(DataType::Int64));
  }
  TensorView* tv = makeTensorOver(extents, shaped.dtype);
  FusionGuard::getCurFusion()->addInput(tv);
  return tv;
}

// Where `actual` and `expected` first differ by more than rtol (NaN
// matching NaN), for a failure message.
std::string firstMismatch(const at::Tensor& actual, const at::Tensor& expected, double rtol) {
  at::Tensor a = actual.to(at::kDouble).reshape({-1});
  at::Tensor e = expected.to(at::kDouble).reshape({-1});
  at::Tensor bad = ((a - e).abs() > (e.abs() * rtol + rtol)) | (a.isnan() != e.isnan());
  at::Tensor where = bad.nonzero();
  if (where.numel() == 0) {
    return "";
  }
  int64_t i = where[0][0].item<int64_t>();
  return ": first at flat index " + std::to_string(i) + ", " + std::to_string(a[i].item<double>()) +
         " vs ATen " + std::to_string(e[i].item<double>());
}

// The executor's runs so far all ran its compiled kernel (`runs` of them):
// none fell back to ATen at run time, which would give ATen's results and
// hide the kernel's.
void expectKernelRan(FusionExecutor& executor, int64_t runs) {
  ASSERT_EQ(executor.execution().rfind("compiled kernel", 0), 0u) << executor.execution();
  SegmentRuns done = executor.runs();
  EXPECT_EQ(done.on_planned_engine, runs) << executor.execution();
  EXPECT_TRUE(done.fallbacks.empty()) << executor.execution();
}

// Builds the segment twice (compiled and ATen), runs both on the same
// inputs, and compares every output (tolerance: the dtype's, scaled by
// tolerance_scale).
using BuildOutputs = std::function<std::vector<TensorView*>(const std::vector<TensorView*>&)>;

void expectCompiledMatchesAtenOn(const std::vector<Shaped>& inputs, const BuildOutputs& build,
                                 const std::vector<PolymorphicValue>& values,
                                 double tolerance_scale = 1.0);

void expectCompiledMatchesAten(const std::vector<Shaped>& inputs, const BuildOutputs& build,
                               bool positive = false, bool with_nans = false,
                               double tolerance_scale = 1.0) {
  std::vector<PolymorphicValue> values;
  at::manual_seed(1);
  for (const Shaped& shaped : inputs) {
    at::Tensor t = randomTensor(shaped.sizes, toAtenType(shaped.dtype));
    if (positive) {
      t = t.abs() + 1;
    }
    if (with_nans) {  // a few NaNs: some rows and columns have one, most do not
      at::Tensor flat = t.view({-1});
      for (int64_t index : {3, 50, 101}) {
        flat[index % flat.numel()] = std::numeric_limits<double>::quiet_NaN();
      }
    }
    values.emplace_back(t);
  }
  expectCompiledMatchesAtenOn(inputs, build, values, tolerance_scale);
}

// As above, on the given input values (edge cases).
void expectCompiledMatchesAtenOn(const std::vector<Shaped>& inputs, const BuildOutputs& build,
                                 const std::vector<PolymorphicValue>& values,
                                 double tolerance_scale) {
  auto make = [&]() {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard guard(fusion.get());
    std::vector<TensorView*> tvs;
    for (const Shaped& shaped : inputs) {
      tvs.push_back(inputOf(shaped));
    }
    for (TensorView* out : build(tvs)) {
      fusion->addOutput(out);
    }
    return std::make_unique<FusionExecutor>(std::move(fusion));
  };
  auto compiled = make();
  std::vector<at::Tensor> compiled_out = compiled->run(values);
  expectKernelRan(*compiled, 1);
  std::vector<at::Tensor> aten_out;
  {
    ScopedEnv aten("HOSTIR_KERNELS", "aten");
    auto interpreted = make();
    aten_out = interpreted->run(values);
    ASSERT_EQ(interpreted->execution(), "ATen: HOSTIR_KERNELS=aten");
  }
  ASSERT_EQ(compiled_out.size(), aten_out.size());
  for (size_t i = 0; i < aten_out.size(); ++i) {
    double rtol = rtolFor(aten_out[i].scalar_type()) * tolerance_scale;
    EXPECT_TRUE(allClose(compiled_out[i], aten_out[i], rtol, rtol))
        << "output " << i << firstMismatch(compiled_out[i], aten_out[i], rtol);
  }
}

class KernelDtypeTest : public ::testing::TestWithParam<DataType> {};

TEST_P(KernelDtypeTest, PointwiseArithmeticWithScalarsAndBroadcasts) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten(
      {{{6, 37}, dtype}, {{6}, dtype}, {{37}, dtype}}, [](const std::vector<TensorView*>& t) {
        TensorView* a = add(t[0], broadcast(t[1], {false, true}));
        TensorView* b = mul(a, t[2]);
        TensorView* c = sub(b, 2);
        TensorView* d = maximum(c, t[0]);
        TensorView* e = minimum(d, mul(t[2], 3));
        return std::vector<TensorView*>{e, neg(e), abs(c), relu(c), div(e, 4.0)};
      });
}

// Rows narrower than a vector, exactly a few vectors, and a vector and a
// bit: the vector loop and its predicated tail (halide_schedule.cpp,
// scheduleOutput).
TEST_P(KernelDtypeTest, RowsOfEveryWidthAroundTheVector) {
  DataType dtype = GetParam();
  for (int64_t width : {1, 7, 31, 32, 33, 63, 64, 65, 129}) {
    SCOPED_TRACE("width " + std::to_string(width));
    expectCompiledMatchesAten({{{5, width}, dtype}}, [](const std::vector<TensorView*>& t) {
      return std::vector<TensorView*>{add(mul(t[0], 3), t[0]), sub(t[0], 1)};
    });
  }
}

TEST_P(KernelDtypeTest, Reductions) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten({{{5, 33, 7}, dtype}}, [](const std::vector<TensorView*>& t) {
    return std::vector<TensorView*>{sum(t[0], {2}),       sum(t[0], {0}),
                                    max(t[0], {1}),       min(t[0], {0, 2}),
                                    sum(t[0], {0, 1, 2}), sum(t[0], {1}, /*keep_dim=*/true),
                                    max(t[0], {2}, true)};
  });
}

// Reductions over broadcast axes alone (as the VJP of a broadcast gives)
// are their one element combined with the initial value, without a loop
// (halide_reduction.cpp); beside a real reduction reading one of them. With
// NaNs: max and min of one NaN are NaN.
TEST_P(KernelDtypeTest, ReductionsOverBroadcastAxesAreTheirOneElement) {
  DataType dtype = GetParam();
  // ATen's prod has no half-precision kernel to compare with (torch 1.13).
  const bool with_prod = dtype != DataType::Half && dtype != DataType::BFloat16;
  auto build = [&](const std::vector<TensorView*>& t) {
    TensorView* b = broadcast(t[0], {false, true, false});
    std::vector<TensorView*> out{sum(b, {1}),
                                 max(b, {1}),
                                 min(b, {1}, true),
                                 sum(sum(b, {1}), {1}),
                                 sum(broadcast(t[0], {true, false, false}), {0}),
                                 max(broadcast(t[0], {true, false, false, true}), {0, 3})};
    if (with_prod) {
      out.push_back(prod(b, {1}));
    }
    return out;
  };
  expectCompiledMatchesAten({{{6, 37}, dtype}}, build, /*positive=*/false,
                            /*with_nans=*/isFloatingType(dtype));
  // Negative values (max's initial value is the type's lowest). The int64
  // fold of max(INT64_MIN, x) to 1 that the lowering avoids showed in
  // tests/python/test_nvfuser_spellings.py (expand over an input's size-1
  // axis), not here.
  at::Tensor negative = (at::arange(6 * 37) - 300).reshape({6, 37}).to(toAtenType(dtype));
  expectCompiledMatchesAtenOn({{{6, 37}, dtype}}, build, {PolymorphicValue(negative)});
}

TEST_P(KernelDtypeTest, Views) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten({{{4, 6, 10}, dtype}}, [](const std::vector<TensorView*>& t) {
    TensorView* p = permute(t[0], {2, 0, 1});
    TensorView* r = reshape(t[0], {24, 10});
    TensorView* s = slice(t[0], 2, 3, 9);
    TensorView* sel = select(t[0], 1, 4);
    return std::vector<TensorView*>{add(p, 1), mul(r, 2), sub(s, 1), add(sel, sel),
                                    broadcast(sel, {false, true, false})};
  });
}

TEST_P(KernelDtypeTest, CastsBetweenDtypes) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten(
      {{{3, 50}, DataType::Float}}, [dtype](const std::vector<TensorView*>& t) {
        TensorView* scaled = mul(t[0], 4.0);
        TensorView* narrow = castOp(dtype, scaled);
        return std::vector<TensorView*>{narrow, castOp(DataType::Float, narrow),
                                        castOp(DataType::Bool, narrow)};
      });
}

// Comparisons give Bool (compared in the operands' promoted dtype, a
// scalar operand rounded to it); where selects, converting to its promoted
// dtype; both take Bool tensors.
TEST_P(KernelDtypeTest, ComparisonsAndWhere) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten({{{6, 37}, dtype}, {{37}, dtype}, {{6, 37}, DataType::Bool}},
                            [](const std::vector<TensorView*>& t) {
                              TensorView* less = lt(t[0], t[1]);
                              return std::vector<TensorView*>{
                                  less,
                                  le(t[0], 0),
                                  gt(t[0], 0.5),
                                  ge(1, t[0]),
                                  eq(t[0], t[1]),
                                  ne(t[0], 2),
                                  eq(t[2], less),
                                  lt(t[2], less),
                                  where(less, t[0], t[1]),
                                  where(t[2], t[0], 0.5),
                                  where(ge(t[0], 0), 3, t[1]),
                                  where(t[2], less, t[2]),
                                  sum(castOp(DataType::Int64, gt(t[0], t[1])), {1})};
                            });
}

// iota and arange in every numeric dtype, with constant and run-time
// start and step, and a causal mask of the segment's own extents.
TEST_P(KernelDtypeTest, IotaArangeAndCausalMask) {
  DataType dtype = GetParam();
  const bool integral = isIntegralType(dtype);
  expectCompiledMatchesAten({{{5, 9}, dtype}}, [dtype,
                                                integral](const std::vector<TensorView*>& t) {
    Val* rows = t[0]->axis(0)->extent();
    Val* cols = t[0]->axis(1)->extent();
    Val* start =
        integral ? IrBuilder::create<Scalar>(int64_t{-3}) : IrBuilder::create<Scalar>(-1.25);
    Val* step = integral ? IrBuilder::create<Scalar>(int64_t{2}) : IrBuilder::create<Scalar>(0.1);
    TensorView* columns = iota(cols, start, step, dtype);
    TensorView* mask = causalMask(rows, cols, IrBuilder::create<Scalar>(int64_t{2}));
    return std::vector<TensorView*>{columns, add(t[0], broadcast(columns, {true, false})),
                                    arange(rows, dtype), mask,
                                    where(mask, t[0], castOp(dtype, t[0]))};
  });
}

// pad (constant widths, a fill value), cat along either axis, index_select
// and take_along_axis (Int64 and Int32 indices, repeated and shorter than
// the input off the gather axis), alone and between pointwise ops: one
// kernel, no ATen fallback.
std::vector<TensorView*> padCatAndGathers(const std::vector<TensorView*>& t) {
  TensorView* x = t[0];
  TensorView* y = t[1];
  Val* fill = IrBuilder::create<Scalar>(int64_t{3});
  return {pad(x, std::vector<int64_t>{1, 2}),
          pad(x, std::vector<int64_t>{0, 0, 2, 1}, fill),
          mul(pad(add(x, 1), std::vector<int64_t>{2, 0, 1, 3}), 2),
          cat({x, y}, 0),
          cat({x, neg(x)}, -1),
          add(cat({y, x, y}, 0), 1),
          indexSelect(x, t[2], 0),
          indexSelect(neg(x), t[2], 1),
          takeAlongAxis(x, t[3], 1),
          add(takeAlongAxis(add(x, 2), t[4], 0), 1)};
}

std::vector<PolymorphicValue> padCatAndGathersInputs(at::ScalarType type) {
  at::manual_seed(2);
  at::TensorOptions longs = at::TensorOptions().dtype(at::kLong);
  return {randomTensor({5, 7}, type), randomTensor({3, 7}, type), at::tensor({4, 0, 4, 2}, longs),
          at::randint(0, 7, {5, 3}, longs),
          at::randint(0, 5, {2, 7}, at::TensorOptions().dtype(at::kInt))};
}

const std::vector<Shaped> padCatAndGathersShapes(DataType dtype) {
  return {{{5, 7}, dtype},
          {{3, 7}, dtype},
          {{4}, DataType::Int64},
          {{5, 3}, DataType::Int64},
          {{2, 7}, DataType::Int32}};
}

TEST_P(KernelDtypeTest, PadCatAndGathersJoinTheKernel) {
  DataType dtype = GetParam();
  expectCompiledMatchesAtenOn(padCatAndGathersShapes(dtype), padCatAndGathers,
                              padCatAndGathersInputs(toAtenType(dtype)));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelDtypeTest,
                         ::testing::Values(DataType::Float, DataType::Double, DataType::Half,
                                           DataType::BFloat16, DataType::Int32, DataType::Int64),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return toString(info.param);
                         });

class KernelFloatTest : public ::testing::TestWithParam<DataType> {};

// torch's max and min propagate NaN (any NaN element makes the result NaN);
// so do the kernels', over inner, outer and all axes. A NaN computed in
// float and stored as half stays NaN (Halide 14 alone makes it infinity).
TEST_P(KernelFloatTest, NaNsPropagate) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten(
      {{{5, 33, 7}, dtype}},
      [](const std::vector<TensorView*>& t) {
        return std::vector<TensorView*>{max(t[0], {2}),    min(t[0], {2}),       max(t[0], {0}),
                                        min(t[0], {0, 1}), max(t[0], {0, 1, 2}), min(t[0], {1}),
                                        sqrt(t[0])};
      },
      /*positive=*/false, /*with_nans=*/true);
}

TEST_P(KernelFloatTest, Transcendentals) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten({{{7, 129}, dtype}}, [dtype](const std::vector<TensorView*>& t) {
    std::vector<TensorView*> outs{exp(t[0]), sigmoid(t[0]), tanh(t[0]), mul(t[0], 40.0)};
    outs.push_back(exp(outs.back()));  // past exp's overflow and underflow
    if (dtype != DataType::Double) {
      outs.push_back(gelu(t[0]));
      outs.push_back(geluDerivative(mul(t[0], 3.0)));
      outs.push_back(erf(t[0]));
      outs.push_back(erf(mul(t[0], 3.0)));  // erf's tails, past +-4
    }
    return outs;
  });
  expectCompiledMatchesAten(
      {{{7, 129}, dtype}, {{129}, dtype}},
      [](const std::vector<TensorView*>& t) {
        return std::vector<TensorView*>{log(t[0]),          sqrt(t[0]),        rsqrt(t[0]),
                                        pow(t[0], t[1]),    pow(t[0], 1.7),    pow(t[0], -0.5),
                                        pow(t[0], 0.5),     pow(2.0, t[0]),    pow(t[0], -1),
                                        pow(neg(t[0]), 3),  pow(neg(t[0]), 2), pow(neg(t[0]), t[1]),
                                        pow(neg(t[0]), 4.0)};
      },
      /*positive=*/true);
}

// Comparisons are false on NaN (ne: true); where passes NaN through;
// rsqrt, erf and pow keep NaN.
TEST_P(KernelFloatTest, NaNsInComparisonsWhereAndNewUnaryOps) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten(
      {{{5, 33}, dtype}, {{33}, dtype}},
      [dtype](const std::vector<TensorView*>& t) {
        std::vector<TensorView*> outs{
            lt(t[0], t[1]), ne(t[0], t[0]), ge(t[0], 0.0),  where(gt(t[0], 0.0), t[0], t[1]),
            rsqrt(t[0]),    pow(t[0], 2),   pow(t[0], t[1])};
        if (dtype != DataType::Double) {
          outs.push_back(erf(t[0]));
          outs.push_back(geluDerivative(t[0]));
        }
        return outs;
      },
      /*positive=*/false, /*with_nans=*/true);
}

// The compositions are one kernel each (every op they emit compiles),
// per floating dtype, and match the interpreter running the same ops.
// In half and bfloat16 each of a composition's 5 to 8 ops rounds to the
// storage type, so an intermediate one ulp apart (a sum accumulated in
// another order) grows through the chain: 4x the dtype's tolerance.
TEST_P(KernelFloatTest, CompositionsAreOneKernel) {
  DataType dtype = GetParam();
  const bool narrow = dtype == DataType::Half || dtype == DataType::BFloat16;
  expectCompiledMatchesAten(
      {{{12, 40}, dtype}, {{40}, dtype}, {{40}, dtype}},
      [](const std::vector<TensorView*>& t) {
        auto [variance, average] = varMean(t[0], {1});
        return std::vector<TensorView*>{softmax(t[0], 1),
                                        logSoftmax(t[0], 0),
                                        layerNorm(t[0], 1, t[1], t[2]),
                                        rmsNorm(t[0], 1, t[1]),
                                        variance,
                                        average,
                                        var(t[0], {0, 1}, 0, /*keep_dim=*/true)};
      },
      /*positive=*/false, /*with_nans=*/false, /*tolerance_scale=*/narrow ? 4.0 : 1.0);
}

// Masked attention's softmax: where(causal mask, scores, -inf), then
// softmax over keys, one kernel.
TEST_P(KernelFloatTest, CausalSoftmaxIsOneKernel) {
  DataType dtype = GetParam();
  expectCompiledMatchesAten({{{2, 16, 16}, dtype}}, [](const std::vector<TensorView*>& t) {
    TensorView* mask = causalMask(t[0]->axis(1)->extent(), t[0]->axis(2)->extent());
    TensorView* masked = where(broadcast(mask, {true, false, false}), t[0],
                               -std::numeric_limits<double>::infinity());
    return std::vector<TensorView*>{softmax(masked, 2)};
  });
}

// signbit (of -0.0, +-NaN, +-inf), nextafter toward +-inf, +-0.0, NaN and
// each other, and fmod compile (no ATen fallback) and match ATen.
TEST_P(KernelFloatTest, SignbitNextafterFmodOnEdgeValues) {
  DataType dtype = GetParam();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  at::Tensor edges = at::tensor({0.0, -0.0, nan, -nan, inf, -inf, 1.5, -2.25, 1e-30, -3e5, 7.0},
                                at::TensorOptions().dtype(at::kDouble))
                         .to(toAtenType(dtype));
  const int64_t n = edges.numel();
  at::manual_seed(3);
  at::Tensor grid = randomTensor({n, n}, toAtenType(dtype)) * 10;
  grid.select(1, 0).copy_(edges);
  const bool bitwise_next = dtype == DataType::Float || dtype == DataType::Double;
  expectCompiledMatchesAtenOn(
      {{{n, n}, dtype}, {{n}, dtype}},
      [bitwise_next](const std::vector<TensorView*>& t) {
        std::vector<TensorView*> outs{signbit(t[0]), signbit(t[1])};
        if (bitwise_next) {
          TensorView* row = broadcast(t[1], {true, false});
          TensorView* column = broadcast(t[1], {false, true});
          outs.push_back(nextafter(t[0], row));
          outs.push_back(nextafter(column, row));  // every pair of edge values
          outs.push_back(nextafter(t[0], 0.0));
        }
        // fmod keeps the dividend's sign; by 0 or of inf it is NaN.
        outs.push_back(fmod(t[0], broadcast(t[1], {true, false})));
        outs.push_back(fmod(t[0], -2.5));
        return outs;
      },
      {grid, edges});
}

INSTANTIATE_TEST_SUITE_P(Floats, KernelFloatTest,
                         ::testing::Values(DataType::Float, DataType::Double, DataType::Half,
                                           DataType::BFloat16),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return toString(info.param);
                         });

// The erf op is the correctly rounded float32 (but for near-ties: within
// one ulp) from -6 to 6, as torch.erf (glibc's erff) is; float64 erf and
// an integer pow run through ATen and say why. A lone erf runs through ATen
// too, so the erf is negated (exactly) to make the segment compile.
// The float64 tolerance of these differential tests catches a float64
// kernel that computed in float32 (issue 38): its result, rounded through
// float32, passed the rtol = atol = 1e-5 they held float64 to before.
TEST(KernelTest, Float64ToleranceCatchesAFloat64ComputedInFloat32) {
  at::manual_seed(1);
  at::Tensor exact = at::randn({6, 37}, at::kDouble) * 3;
  at::Tensor through_float32 = exact.to(at::kFloat).to(at::kDouble);
  const double rtol = rtolFor(at::kDouble);
  EXPECT_TRUE(at::allclose(through_float32, exact, 1e-5, 1e-5));
  EXPECT_FALSE(allClose(through_float32, exact, rtol, rtol));
  EXPECT_TRUE(allClose(exact * (1 + 1e-14), exact, rtol, rtol));
}

// gelu_derivative (what a gelu's grad multiplies) compiles alone, with
// gelu's erf: within 4e-7 of ATen's gelu_backward in float64 over the
// range where it moves (0 below -9, 1 above 9).
TEST(KernelTest, GeluDerivativeMatchesAtenGeluBackward) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{40001}, DataType::Float});
  fusion->addOutput(geluDerivative(x));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::linspace(-10, 10, 40001);
  at::Tensor out = executor.run({input}).at(0);
  expectKernelRan(executor, 1);
  at::Tensor wide = input.to(at::kDouble);
  at::Tensor exact = at::gelu_backward(at::ones_like(wide), wide);
  const double error = (out.to(at::kDouble) - exact).abs().max().item<double>();
  EXPECT_LT(error, 4e-7);
}

TEST(KernelTest, ErfIsAccurateToFloatRounding) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{200001}, DataType::Float});
  fusion->addOutput(neg(erf(x)));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::linspace(-6, 6, 200001);
  at::Tensor out = -executor.run({input}).at(0);
  expectKernelRan(executor, 1);
  at::Tensor exact = at::erf(input.to(at::kDouble));
  at::Tensor ulp = exact.abs().to(at::kFloat).to(at::kDouble) *
                   static_cast<double>(std::numeric_limits<float>::epsilon());
  at::Tensor error = (out.to(at::kDouble) - exact).abs();
  EXPECT_TRUE(error.le(ulp.clamp_min(1e-45)).all().item<bool>())
      << "max error " << error.max().item<double>();
  // Rounding to nearest is within half an ulp, but for near-ties.
  double within_half = error.le(ulp * 0.5 * (1 + 1e-6)).to(at::kDouble).mean().item<double>();
  EXPECT_GT(within_half, 0.9999) << within_half;
  EXPECT_TRUE(at::equal(out.slice(0, 0, 10), at::full({10}, -1.0f)));
}

// op(x) of a float32 `input` through a compiled kernel (times 1.0, exactly:
// a lone transcendental runs through ATen).
at::Tensor compiledUnaryOp(const std::function<TensorView*(TensorView*)>& op,
                           const at::Tensor& input) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{input.numel()}, DataType::Float});
  fusion->addOutput(mul(op(x), 1.0));
  FusionExecutor executor(std::move(fusion));
  at::Tensor out = executor.run({input}).at(0);
  expectKernelRan(executor, 1);
  return out;
}

// float32 tanh is a rational approximation (vector_math.cpp): within 6 ulp
// of tanh over every float in [-10, 10] spaced 1e-4 apart, never beyond 1 in
// magnitude, exactly +-1 past 7.9 and at infinity, the sign of zero and
// NaN kept. (The exp-based form it replaced was within 2 ulp.)
TEST(KernelTest, TanhIsWithin6UlpAndNeverBeyondOne) {
  const float inf = std::numeric_limits<float>::infinity();
  at::Tensor edges = at::tensor({0.0f, -0.0f, inf, -inf, 7.9f, 7.9001f, -8.0f, 1e30f, 1e-30f});
  at::Tensor input = at::cat({at::linspace(-10, 10, 200001), edges});
  input = at::cat({input, at::full({1}, std::numeric_limits<float>::quiet_NaN())});
  at::Tensor out = compiledUnaryOp([](TensorView* x) { return tanh(x); }, input);
  at::Tensor finite = out.slice(0, 0, 200001);
  at::Tensor exact = at::tanh(input.slice(0, 0, 200001).to(at::kDouble));
  at::Tensor ulp = exact.abs().to(at::kFloat).to(at::kDouble) *
                   static_cast<double>(std::numeric_limits<float>::epsilon()) / 2;
  at::Tensor ulps = (finite.to(at::kDouble) - exact).abs() / ulp.clamp_min(1e-45);
  EXPECT_LE(ulps.max().item<double>(), 6.0);
  EXPECT_LE(finite.abs().max().item<float>(), 1.0f);
  at::Tensor edge_out = out.slice(0, 200001, 200010);
  EXPECT_TRUE(at::equal(edge_out.slice(0, 2, 4), at::tensor({1.0f, -1.0f})));
  EXPECT_TRUE(at::equal(edge_out.slice(0, 5, 8), at::tensor({1.0f, -1.0f, 1.0f})));
  EXPECT_LT(edge_out[4].item<float>(), 1.0f);
  EXPECT_EQ(edge_out[8].item<float>(), 1e-30f);
  EXPECT_FALSE(std::signbit(edge_out[0].item<float>()));
  EXPECT_TRUE(std::signbit(edge_out[1].item<float>()));
  EXPECT_TRUE(std::isnan(out[200010].item<float>()));
}

// float32 exp is within 2 ulp of exp wherever its result is a normal float,
// within one subnormal step where it is subnormal (down to -103.97, as
// expf), and infinity only past expf's overflow (88.72): the kernel once
// returned infinity from 88.38 and 0 below -87.34.
TEST(KernelTest, ExpIsWithin2UlpUpToOverflowAndKeepsSubnormals) {
  at::Tensor input = at::linspace(-110, 90, 200001);
  at::Tensor out = compiledUnaryOp([](TensorView* x) { return exp(x); }, input);
  at::Tensor exact = at::exp(input.to(at::kDouble));
  const double smallest_normal = std::numeric_limits<float>::min();
  const double largest = std::numeric_limits<float>::max();
  at::Tensor normal = exact.ge(smallest_normal) & exact.le(largest);
  at::Tensor error = (out.to(at::kDouble) - exact).abs();
  at::Tensor ulps =
      error / (exact * static_cast<double>(std::numeric_limits<float>::epsilon()) / 2);
  EXPECT_LE(ulps.masked_select(normal).max().item<double>(), 2.0);
  at::Tensor subnormal = exact.lt(smallest_normal);
  EXPECT_LE(error.masked_select(subnormal).max().item<double>(),
            static_cast<double>(std::numeric_limits<float>::denorm_min()));
  EXPECT_TRUE(out.masked_select(exact.gt(largest)).isinf().all().item<bool>());
  EXPECT_FALSE(out.masked_select(exact.le(largest)).isinf().any().item<bool>());
  EXPECT_GT(
      out.masked_select(exact.ge(2 * std::numeric_limits<float>::denorm_min())).min().item<float>(),
      0.0f);
}

TEST(KernelTest, Float64ErfAndIntegerPowRunThroughAten) {
  for (bool use_pow : {false, true}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard guard(fusion.get());
    TensorView* x = inputOf({{5, 4}, use_pow ? DataType::Int64 : DataType::Double});
    fusion->addOutput(use_pow ? pow(x, 3) : erf(x));
    FusionExecutor executor(std::move(fusion));
    at::Tensor input =
        use_pow ? at::randint(-5, 5, {5, 4}, at::kLong) : at::randn({5, 4}, at::kDouble);
    at::Tensor out = executor.run({input}).at(0);
    EXPECT_TRUE(allClose(out, use_pow ? at::pow(input, 3) : at::erf(input), 1e-12, 1e-12));
    std::string expected =
        use_pow ? "ATen: pow has no kernel lowering" : "ATen: erf has no kernel lowering";
    EXPECT_EQ(executor.execution().rfind(expected, 0), 0u) << executor.execution();
  }
}

// A scalar compared with a half tensor is rounded to half first, as torch
// does (half(0.1) == 0.1 is true).
TEST(KernelTest, ComparisonRoundsTheScalarToTheTensorDtype) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{3}, DataType::Half});
  fusion->addOutput(eq(x, 0.1));
  fusion->addOutput(lt(x, 0.1));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::tensor({0.1, 0.2, 0.05}).to(at::kHalf);
  std::vector<at::Tensor> out = executor.run({input});
  expectKernelRan(executor, 1);
  EXPECT_TRUE(at::equal(out[0], input.eq(0.1))) << out[0];
  EXPECT_TRUE(at::equal(out[1], input.lt(0.1))) << out[1];
  EXPECT_TRUE(out[0][0].item<bool>());
}

TEST(KernelTest, IntegerDivisionIsTrueDivisionAndBoolCompute) {
  expectCompiledMatchesAten({{{9, 11}, DataType::Int64}, {{9, 11}, DataType::Bool}},
                            [](const std::vector<TensorView*>& t) {
                              TensorView* q = div(t[0], 4);
                              TensorView* counted = add(t[1], t[0]);
                              return std::vector<TensorView*>{q, counted, sum(t[1], {1})};
                            });
}

TEST(KernelTest, RunTimeScalarsSliceBoundsAndFill) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{8, 6}, DataType::Float});
  Scalar* start = scalarInput(DataType::Int64);
  Scalar* stop = scalarInput(DataType::Int64);
  Scalar* factor = scalarInput(DataType::Double);
  TensorView* rows = slice(x, 0, start, stop);
  TensorView* filled = full(extentsOf(rows), factor, DataType::Float);
  fusion->addOutput(add(mul(rows, factor), filled));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({8, 6});
  int64_t runs = 0;
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{2, 5}, {0, 8}, {7, 8}}) {
    at::Tensor out = executor.run({input, begin, end, 1.5}).at(0);
    expectKernelRan(executor, ++runs);
    at::Tensor rows_ref = input.slice(0, begin, end);
    EXPECT_TRUE(allClose(out, rows_ref * 1.5 + 1.5)) << begin << ":" << end;
  }
}

TEST(KernelTest, PreallocatedAndStridedBuffers) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{6, 10}, DataType::Float});
  fusion->addOutput(exp(add(x, 1.0)));
  FusionExecutor executor(std::move(fusion));
  at::Tensor base = at::randn({10, 6});
  at::Tensor transposed = base.t();  // innermost stride is not 1
  at::Tensor big = at::zeros({6, 20});
  at::Tensor window = big.slice(1, 5, 15);  // a narrow view to write into
  executor.run({transposed}, {window});
  EXPECT_TRUE(allClose(window, at::exp(transposed + 1)));
  EXPECT_EQ(big.slice(1, 0, 5).abs().sum().item<float>(), 0.0f);
  at::Tensor column_major = at::empty({10, 6}).t();  // a strided output buffer
  executor.run({transposed}, {column_major});
  EXPECT_TRUE(allClose(column_major, at::exp(transposed + 1)));
  expectKernelRan(executor, 2);
}

// An output buffer that is the input, written in place: each element is
// read before it is written. A schedule whose last vector of a row is
// shifted back over elements already written (Halide's ShiftInwards) would
// give f(f(x)) there (tried: halide_schedule.cpp, scheduleOutput).
TEST(KernelTest, AnOutputBufferThatIsTheInputGetsTheInputsResult) {
  for (int64_t width : {37, 100}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard guard(fusion.get());
    TensorView* x = inputOf({{4, width}, DataType::Float});
    fusion->addOutput(add(mul(x, 2.0), 1.0));
    FusionExecutor executor(std::move(fusion));
    at::Tensor input = at::randn({4, width});
    at::Tensor expected = input * 2 + 1;
    executor.run({input}, {input});
    EXPECT_TRUE(allClose(input, expected))
        << "width " << width << firstMismatch(input, expected, 1e-6);
    expectKernelRan(executor, 1);
  }
}

// Softmax and layer norm written with hostir's reductions and pointwise ops
// are one kernel each and match ATen's fused kernels.
TEST(KernelTest, SoftmaxAndLayerNormFromPrimitives) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{64, 300}, DataType::Float});
  TensorView* shifted = sub(x, max(x, {1}, true));
  TensorView* e = exp(shifted);
  fusion->addOutput(div(e, sum(e, {1}, true)));
  TensorView* mean = div(sum(x, {1}, true), 300.0);
  TensorView* centered = sub(x, mean);
  TensorView* var = div(sum(mul(centered, centered), {1}, true), 300.0);
  fusion->addOutput(div(centered, sqrt(add(var, 1e-5))));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({64, 300}) * 3;
  std::vector<at::Tensor> out = executor.run({input});
  expectKernelRan(executor, 1);
  EXPECT_TRUE(allClose(out[0], at::softmax(input, 1)));
  EXPECT_TRUE(allClose(out[1], at::layer_norm(input, {300}), 1e-4, 1e-5));
}

TEST(KernelTest, MatmulSegmentsRunThroughAtenAndSayWhy) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* a = inputOf({{4, 5}, DataType::Float});
  TensorView* b = inputOf({{5, 3}, DataType::Float});
  fusion->addOutput(relu(matmul(a, b)));
  FusionExecutor executor(std::move(fusion));
  at::Tensor ta = at::randn({4, 5});
  at::Tensor tb = at::randn({5, 3});
  EXPECT_TRUE(allClose(executor.run({ta, tb}).at(0), at::relu(at::matmul(ta, tb))));
  EXPECT_NE(executor.execution().find("ATen: matmul has no kernel lowering"), std::string::npos)
      << executor.execution();
}

TEST(KernelTest, BadKernelModeIsAnError) {
  ScopedEnv mode("HOSTIR_KERNELS", "llvm");
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{4}, DataType::Float});
  fusion->addOutput(neg(x));
  FusionExecutor executor(std::move(fusion));
  try {
    executor.run({at::randn({4})});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("valid values are compiled"), std::string::npos)
        << error.what();
  }
}

TEST(KernelTest, ConcurrentRunsOfOneKernel) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{128, 64}, DataType::Float});
  fusion->addOutput(sum(mul(x, x), {1}));
  FusionExecutor executor(std::move(fusion));
  std::vector<at::Tensor> inputs;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(at::randn({128, 64}));
  }
  std::vector<at::Tensor> results(inputs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 20; ++rep) {
        results[i] = executor.run({inputs[i]}).at(0);
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(allClose(results[i], (inputs[i] * inputs[i]).sum(1), 1e-4, 1e-4));
  }
}

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

// A kernel indexes its operands by the output's extents, so operands whose
// symbolic sizes disagree would read out of bounds: each call checks them
// first and names the op and both sizes (the interpreter's ATen call would
// fail the same way).
TEST(KernelTest, PointwiseOperandsOfDifferentSizesAreAnError) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{4}, DataType::Float});
  TensorView* y = inputOf({{4}, DataType::Float});
  fusion->addOutput(add(x, y));
  FusionExecutor executor(std::move(fusion));
  EXPECT_TRUE(allClose(executor.run({at::ones({4}), at::ones({4})}).at(0), at::full({4}, 2.0)));
  expectKernelRan(executor, 1);
  EXPECT_HOSTIR_ERROR(executor.run({at::ones({4}), at::ones({5})}),
                      {"size mismatch in", "add", "has 4 elements but", "has 5"});
}

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

// A segment that is one transcendental op runs through ATen's vectorized
// kernel (compiling saves no pass over memory); with another op it compiles.
// So do sin and cos (trig_kernel_test.cpp).
TEST(KernelTest, LoneTranscendentalRunsThroughAtenAndSaysWhy) {
  auto lone = std::make_unique<Fusion>();
  {
    FusionGuard guard(lone.get());
    TensorView* x = inputOf({{4, 9}, DataType::Float});
    lone->addOutput(gelu(x));
  }
  FusionExecutor lone_executor(std::move(lone));
  at::Tensor input = at::randn({4, 9});
  EXPECT_TRUE(allClose(lone_executor.run({input}).at(0), at::gelu(input)));
  EXPECT_NE(lone_executor.execution().find("ATen: a lone gelu"), std::string::npos)
      << lone_executor.execution();
  auto fused = std::make_unique<Fusion>();
  {
    FusionGuard guard(fused.get());
    TensorView* x = inputOf({{4, 9}, DataType::Float});
    fused->addOutput(gelu(add(x, 1.0)));
  }
  FusionExecutor fused_executor(std::move(fused));
  EXPECT_TRUE(allClose(fused_executor.run({input}).at(0), at::gelu(input + 1.0)));
  expectKernelRan(fused_executor, 1);
}

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// A call the kernel does not take (an empty input) runs through ATen, and
// the segment says so: in the executor's report, with the tensor and the
// reason, and once under HOSTIR_DUMP=kernels however often it happens. A
// call it takes reports the kernel.
TEST(KernelTest, AnEmptyInputFallsBackToAtenAndTheReportSaysWhy) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{3, 4}, DataType::Float});
  fusion->addOutput(exp(add(x, 1.0)));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({3, 4});
  EXPECT_TRUE(allClose(executor.run({input}).at(0), at::exp(input + 1)));
  expectKernelRan(executor, 1);
  EXPECT_NE(executor.execution().find("; ran it 1 time"), std::string::npos)
      << executor.execution();

  at::Tensor empty = at::randn({0, 4});
  std::string dumped;
  {
    ScopedEnv dump("HOSTIR_DUMP", "kernels");
    testing::internal::CaptureStdout();
    for (int run = 0; run < 2; ++run) {
      EXPECT_EQ(executor.run({empty}).at(0).sizes(), empty.sizes());
    }
    dumped = testing::internal::GetCapturedStdout();
  }
  EXPECT_EQ(occurrences(dumped, "=== segment falls back to ATen at run time: the input T"), 1u)
      << dumped;
  EXPECT_NE(dumped.find("is empty (sizes [0, 4])\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("= exp("), std::string::npos) << "the segment is printed: " << dumped;
  SegmentRuns runs = executor.runs();
  EXPECT_EQ(runs.on_planned_engine, 1);
  ASSERT_EQ(runs.fallbacks.size(), 1u) << executor.execution();
  EXPECT_EQ(runs.fallbacks.begin()->second, 2);
  const std::string report = executor.execution();
  EXPECT_EQ(report.rfind("compiled kernel", 0), 0u) << report;
  EXPECT_NE(report.find("; ran it 1 time, fell back to ATen 2 times: the input T"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(" is empty (sizes [0, 4])"), std::string::npos) << report;
}

// A stride the kernels' int32 buffers cannot hold (a view into memory that
// is reserved, never touched: zero pages) runs through ATen and names it.
TEST(KernelTest, AStrideBeyondInt32FallsBackToAtenAndSaysWhy) {
  const int64_t stride = int64_t{1} << 31;
  const size_t bytes = static_cast<size_t>(stride) + 64;
  void* memory =
      mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{2, 4}, DataType::Bool});
  fusion->addOutput(add(castOp(DataType::Float, x), 1.0));
  FusionExecutor executor(std::move(fusion));
  at::Tensor spread = at::from_blob(memory, {2, 4}, {stride, 1}, at::kBool);
  EXPECT_TRUE(at::equal(executor.run({spread}).at(0), at::ones({2, 4})));
  const std::string report = executor.execution();
  EXPECT_NE(report.find("fell back to ATen 1 time: the input T"), std::string::npos) << report;
  EXPECT_NE(report.find("has stride 2147483648 on axis 0, outside the kernels' int32 strides"),
            std::string::npos)
      << report;
  munmap(memory, bytes);
}

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

class KernelIntegerTest : public ::testing::TestWithParam<DataType> {};

// The bitwise ops, the shifts (counts negative and at or past the bit width:
// 0, or the sign for an arithmetic right shift, as the ATen interpreter) and
// gcd (zeros, negatives, the extremes) compile and match ATen.
TEST_P(KernelIntegerTest, BitwiseShiftsAndGcdOnEdgeValues) {
  DataType dtype = GetParam();
  const int64_t big = dtype == DataType::Int32 ? std::numeric_limits<int32_t>::max()
                                               : std::numeric_limits<int64_t>::max();
  at::TensorOptions options = at::TensorOptions().dtype(toAtenType(dtype));
  at::Tensor values = at::tensor({int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{12}, int64_t{-18},
                                  int64_t{7}, int64_t{1} << 20, -(int64_t{3} << 24), big, -big},
                                 options);
  at::Tensor counts =
      at::tensor({int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{5}, int64_t{30}, int64_t{31},
                  int64_t{32}, int64_t{33}, int64_t{63}, int64_t{64}, int64_t{100}},
                 options);
  const int64_t n = values.numel();
  const int64_t c = counts.numel();
  expectCompiledMatchesAtenOn({{{n}, dtype}, {{c}, dtype}},
                              [](const std::vector<TensorView*>& t) {
                                TensorView* a = broadcast(t[0], {false, true});
                                TensorView* count = broadcast(t[1], {true, false});
                                TensorView* b = broadcast(t[0], {true, false});
                                return std::vector<TensorView*>{bitwiseLeftShift(a, count),
                                                                bitwiseRightShift(a, count),
                                                                logicalRightShift(a, count),
                                                                bitwiseAnd(a, b),
                                                                bitwiseOr(a, b),
                                                                bitwiseXor(a, b),
                                                                gcd(a, b),
                                                                gcd(t[0], 0),
                                                                bitwiseLeftShift(t[0], 3)};
                              },
                              {values, counts});
}

TEST(KernelTest, BitwiseOpsOnBoolsCompile) {
  at::Tensor a = at::tensor({1, 0, 1, 0}).to(at::kBool);
  at::Tensor b = at::tensor({1, 1, 0, 0}).to(at::kBool);
  expectCompiledMatchesAtenOn({{{4}, DataType::Bool}, {{4}, DataType::Bool}},
                              [](const std::vector<TensorView*>& t) {
                                return std::vector<TensorView*>{bitwiseAnd(t[0], t[1]),
                                                                bitwiseOr(t[0], t[1]),
                                                                bitwiseXor(t[0], t[1])};
                              },
                              {a, b});
}

INSTANTIATE_TEST_SUITE_P(Integers, KernelIntegerTest,
                         ::testing::Values(DataType::Int32, DataType::Int64),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return toString(info.param);
                         });

}  // namespace
}  // namespace hostir::test

namespace hostir::test {
namespace {

// Bool tensors pad (with false, or true), cat and gather in the kernel too.
TEST(KernelTest, PadCatAndGathersOnBoolsCompile) {
  std::vector<Shaped> shapes = padCatAndGathersShapes(DataType::Bool);
  expectCompiledMatchesAtenOn(
      shapes,
      [](const std::vector<TensorView*>& t) {
        TensorView* x = t[0];
        return std::vector<TensorView*>{
            pad(x, std::vector<int64_t>{1, 2}),
            pad(x, std::vector<int64_t>{2, 1, 0, 1}, IrBuilder::create<Scalar>(true)),
            cat({x, t[1]}, 0), indexSelect(x, t[2], 0), takeAlongAxis(x, t[3], 1)};
      },
      padCatAndGathersInputs(at::kBool));
}

// Pad widths given at run time: one kernel serves every width (one size
// class), a negative width crops as torch's; a crop past the extent, and an
// empty operand, run through ATen (its error, its result) and say why.
TEST(KernelTest, PadWidthsAtRunTime) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{4, 6}, DataType::Float});
  Scalar* left = scalarInput(DataType::Int64);
  Scalar* right = scalarInput(DataType::Int64);
  Scalar* value = scalarInput(DataType::Double);
  TensorView* rows = slice(x, 0, IrBuilder::create<Scalar>(int64_t{0}), left);
  fusion->addOutput(neg(pad(abs(x), std::vector<Val*>{left, right}, value)));
  fusion->addOutput(pad(rows, std::vector<int64_t>{0, 0, 1, 1}));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({4, 6});
  int64_t runs = 0;
  for (auto [l, r] : {std::pair<int64_t, int64_t>{1, 2}, {3, 0}, {-2, 1}, {2, -3}}) {
    std::vector<at::Tensor> out = executor.run({input, l, r, 0.5});
    expectKernelRan(executor, ++runs);
    EXPECT_TRUE(at::equal(out[0], -at::constant_pad_nd(input.abs(), {l, r}, 0.5))) << l << r;
  }
  // left = 0: the sliced rows are empty, so the second pad reads nothing.
  std::vector<at::Tensor> out = executor.run({input, int64_t{0}, int64_t{1}, 0.5});
  EXPECT_TRUE(at::equal(out[1], at::zeros({2, 6})));
  EXPECT_NE(executor.execution().find("pad reads the empty T"), std::string::npos)
      << executor.execution();
  EXPECT_THROW(executor.run({input, int64_t{-1}, int64_t{-6}, 0.5}), std::exception);
  EXPECT_NE(executor.execution().find("pad's widths (-1, -6) crop more than the 6 elements"),
            std::string::npos)
      << executor.execution();
}

// An index outside [0, extent) is ATen's error, as op by op: the kernel
// checks the index before it runs and leaves such a call to ATen.
TEST(KernelTest, AGatherIndexOutOfRangeIsAtensError) {
  for (GatherKind kind : {GatherKind::IndexSelect, GatherKind::TakeAlongAxis}) {
    auto fusion = std::make_unique<Fusion>();
    FusionGuard guard(fusion.get());
    TensorView* x = inputOf({{5, 3}, DataType::Float});
    TensorView* index = inputOf(
        {kind == GatherKind::IndexSelect ? std::vector<int64_t>{4} : std::vector<int64_t>{2, 3},
         DataType::Int64});
    TensorView* read =
        kind == GatherKind::IndexSelect ? indexSelect(x, index, 0) : takeAlongAxis(x, index, 0);
    fusion->addOutput(add(read, 1));
    FusionExecutor executor(std::move(fusion));
    at::Tensor input = at::randn({5, 3});
    at::TensorOptions longs = at::TensorOptions().dtype(at::kLong);
    at::Tensor good = kind == GatherKind::IndexSelect
                          ? at::tensor({4, 0, 1, 4}, longs)
                          : at::tensor({4, 0, 1, 2, 3, 0}, longs).view({2, 3});
    at::Tensor out = executor.run({input, good}).at(0);
    expectKernelRan(executor, 1);
    at::Tensor expected = kind == GatherKind::IndexSelect ? at::index_select(input, 0, good)
                                                          : at::gather(input, 0, good);
    EXPECT_TRUE(at::equal(out, expected + 1));
    for (int64_t bad : {5, -1}) {
      at::Tensor index_value = good.clone();
      index_value.view({-1})[1] = bad;
      EXPECT_THROW(executor.run({input, index_value}), std::exception) << bad;
      EXPECT_NE(executor.execution().find("'s index T"), std::string::npos) << executor.execution();
      EXPECT_NE(executor.execution().find("holds " + std::to_string(bad) + ", outside [0, 5)"),
                std::string::npos)
          << executor.execution();
    }
  }
}

// A gather whose index the segment computes runs through ATen and says why.
TEST(KernelTest, AGatherOfAComputedIndexRunsThroughAten) {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard guard(fusion.get());
  TensorView* x = inputOf({{5, 3}, DataType::Float});
  TensorView* index = inputOf({{4}, DataType::Int64});
  fusion->addOutput(indexSelect(x, add(index, 1), 0));
  FusionExecutor executor(std::move(fusion));
  at::Tensor input = at::randn({5, 3});
  at::TensorOptions longs = at::TensorOptions().dtype(at::kLong);
  at::Tensor out = executor.run({input, at::tensor({0, 3, 2, 3}, longs)}).at(0);
  EXPECT_TRUE(at::equal(out, at::index_select(input, 0, at::tensor({1, 4, 3, 4}, longs))));
  EXPECT_NE(executor.execution().find("ATen: index_select reads the index T"), std::string::npos)
      << executor.execution();
}

}  // namespace
}  // namespace hostir::test
