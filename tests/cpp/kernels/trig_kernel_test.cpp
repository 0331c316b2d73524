// sin and cos compiled into the segment's kernel (vector_trig.h): their
// error in ulps against float64 truth per dtype and range, beside torch's
// own float32 sin and cos; edge values; arguments of 2^30 or more, which
// the kernel refuses and the segment runs through ATen.

#include <cmath>
#include <limits>

#include "hostir/ir/arith.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

TensorView* vectorInput(DataType dtype) {
  TensorView* tv = makeTensorOver({IrBuilder::create<Scalar>(DataType::Int64)}, dtype);
  FusionGuard::getCurFusion()->addInput(tv);
  return tv;
}

// The largest error of `actual` in units in the last place of its dtype,
// against `truth` (float64) rounded to that dtype; NaN must meet NaN.
double maxUlps(const at::Tensor& actual, const at::Tensor& truth) {
  at::ScalarType dtype = actual.scalar_type();
  at::Tensor a = actual.to(at::kDouble);
  EXPECT_TRUE(at::equal(a.isnan(), truth.isnan()));
  at::Tensor finite = truth.isfinite();
  at::Tensor rounded = truth.to(dtype).to(at::kDouble).abs();
  // ulp(v) = 2^(max(exponent of v, the dtype's least normal) - digits + 1)
  int digits = dtype == at::kHalf ? 11 : dtype == at::kBFloat16 ? 8 : 24;
  int min_exponent = dtype == at::kHalf ? -14 : -126;
  at::Tensor exponent = std::get<1>(at::frexp(rounded)).to(at::kDouble) - 1.0;
  exponent = at::where(rounded > 0, exponent.clamp_min(min_exponent),
                       at::full_like(exponent, min_exponent));
  at::Tensor ulp = at::pow(2.0, exponent - (digits - 1));
  at::Tensor error = ((a - truth).abs() / ulp).masked_select(finite);
  return error.numel() == 0 ? 0.0 : error.max().item<double>();
}

// y = sin(x) or cos(x) and y * 1.5 + x, one compiled kernel (a lone sin
// runs through ATen, as a lone exp); returns both.
std::vector<at::Tensor> runCompiled(bool is_sin, const at::Tensor& x,
                                    std::string* execution = nullptr,
                                    std::vector<at::Tensor> outputs = {}) {
  auto fusion = std::make_unique<Fusion>();
  {
    FusionGuard guard(fusion.get());
    TensorView* in = vectorInput(fromAtenType(x.scalar_type()));
    TensorView* y = is_sin ? sin(in) : cos(in);
    fusion->addOutput(y);
    fusion->addOutput(add(mul(y, 1.5), in));
  }
  FusionExecutor executor(std::move(fusion));
  std::vector<at::Tensor> out = executor.run({x}, outputs);
  if (execution != nullptr) {
    *execution = executor.execution();
  } else {
    EXPECT_EQ(executor.execution().rfind("compiled kernel", 0), 0u) << executor.execution();
    EXPECT_TRUE(executor.runs().fallbacks.empty()) << executor.execution();
  }
  return out;
}

// Random arguments below `range` in magnitude: half uniform, half with a
// log-uniform magnitude from 2^-30, both signs.
at::Tensor arguments(double range, at::ScalarType dtype) {
  const int64_t n = 1 << 16;
  at::Tensor uniform = (at::rand({n / 2}, at::kDouble) * 2.0 - 1.0) * range;
  at::Tensor log2 = at::rand({n / 2}, at::kDouble) * (std::log2(range) + 30.0) - 30.0;
  at::Tensor sign = at::where(at::rand({n / 2}, at::kDouble) < 0.5, -1.0, 1.0);
  at::Tensor x = at::cat({uniform, sign * at::pow(2.0, log2)}).to(dtype);
  // Rounding may reach 2^30 itself (the kernel refuses it): step below.
  return at::where(x.abs().to(at::kDouble) >= (1 << 30), x * 0.5, x);
}

TEST(TrigKernelTest, CompiledSinAndCosAreWithinTorchsUlpsPerRange) {
  at::manual_seed(41);
  const std::vector<double> ranges = {1.0, 100.0, 1e4, 1e8, 1073741760.0};
  for (const at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    for (double range : ranges) {
      if (dtype == at::kHalf && range > 6e4) {
        continue;  // half's largest is 65504
      }
      at::Tensor x = arguments(range, dtype);
      at::Tensor wide = x.to(at::kDouble);
      for (const bool is_sin : {true, false}) {
        at::Tensor truth = is_sin ? at::sin(wide) : at::cos(wide);
        double ours = maxUlps(runCompiled(is_sin, x).at(0), truth);
        // torch's float32 op as the yardstick (ATen 1.13 has no half sin on
        // CPU; half and bfloat16 round a float32 result, so within 1 ulp).
        double bound = 1.0;
        if (dtype == at::kFloat) {
          at::Tensor theirs = is_sin ? at::sin(x) : at::cos(x);
          bound = std::max(2.0, maxUlps(theirs, truth));
        }
        EXPECT_LE(ours, bound) << (is_sin ? "sin " : "cos ") << dtype << " |x| < " << range;
        // Fused with other ops: the same values, then the ops' roundings.
        at::Tensor fused = runCompiled(is_sin, x).at(1).to(at::kDouble);
        at::Tensor expected = truth.to(dtype).to(at::kDouble) * 1.5 + wide;
        double scale = expected.abs().max().item<double>() + 1.0;
        double tolerance = dtype == at::kFloat ? 4e-7 : dtype == at::kHalf ? 2e-3 : 1.6e-2;
        EXPECT_LE((fused - expected).abs().max().item<double>(), tolerance * scale)
            << (is_sin ? "sin " : "cos ") << dtype << " |x| < " << range;
      }
    }
  }
}

TEST(TrigKernelTest, EdgeValuesCompiledPerDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0.0,           -0.0,       nan,   inf,           -inf,
                                1e-45,         -1e-45,     1e-40, 1.1754944e-38, 1073741760.0,
                                -1073741760.0, 16777216.0, 3.4e4};
  for (int k = 1; k <= 16; ++k) {
    values.push_back(k * M_PI / 2);  // rounded to float32: near a zero of sin or cos
    values.push_back(-k * M_PI / 2);
    if (k <= 9) {
      values.push_back(std::ldexp(M_PI / 2, 3 * k));  // up to 2^28.6
    }
  }
  // Half and bfloat16 run the float32 code and round: the same edges per
  // dtype (half turns the values past 65504 into infinities; bfloat16
  // rounds 1073741760 up to 2^30, which the kernel refuses: dropped there).
  for (const at::ScalarType dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
    at::Tensor x = at::tensor(values, at::kDouble).to(dtype);
    if (dtype == at::kBFloat16) {
      x = x.masked_select((x.to(at::kDouble).abs() < 1073741824.0) | x.isnan() | x.isinf());
    }
    at::Tensor wide = x.to(at::kDouble);
    for (const bool is_sin : {true, false}) {
      at::Tensor out = runCompiled(is_sin, x).at(0);
      at::Tensor truth = is_sin ? at::sin(wide) : at::cos(wide);
      EXPECT_LE(maxUlps(out, truth), 1.0) << (is_sin ? "sin " : "cos ") << dtype;
      at::Tensor wide_out = out.to(at::kDouble);
      EXPECT_TRUE(std::isnan(wide_out[2].item<double>())) << dtype;
      EXPECT_TRUE(std::isnan(wide_out[3].item<double>()) && std::isnan(wide_out[4].item<double>()))
          << dtype;
      if (is_sin) {
        // sin keeps a zero's sign.
        EXPECT_FALSE(std::signbit(wide_out[0].item<double>())) << dtype;
        EXPECT_TRUE(std::signbit(wide_out[1].item<double>())) << dtype;
      } else {
        EXPECT_EQ(wide_out[0].item<double>(), 1.0) << dtype;
        EXPECT_EQ(wide_out[1].item<double>(), 1.0) << dtype;
      }
    }
  }
}

TEST(TrigKernelTest, AnArgumentOf2To30OrMoreRunsTheSegmentThroughAten) {
  for (const double big : {1073741824.0, -3e38, 1e10}) {
    at::Tensor x = at::randn({4096});
    x[4000] = big;
    at::Tensor wide = x.to(at::kDouble);
    for (const bool is_sin : {true, false}) {
      std::string execution;
      at::Tensor out = runCompiled(is_sin, x, &execution).at(1);
      at::Tensor expected = (is_sin ? at::sin(x) : at::cos(x)) * 1.5 + x;
      EXPECT_TRUE(at::allclose(out, expected, 1e-6, 1e-6)) << big;
      const std::string why =
          std::string("fell back to ATen 1 time: the kernel refused its data: ") +
          (is_sin ? "sin" : "cos") + ": an argument of magnitude 2^30 or more";
      EXPECT_NE(execution.find(why), std::string::npos) << execution;
    }
  }
  // The first output's buffer is the input: the refusing kernel wrote a
  // fresh one, so ATen reads the input as it was (else it would take the
  // sin of the sines the kernel wrote before refusing). The second output
  // reads the input after ATen wrote the first: what ATen's op order gives.
  at::Tensor x = at::randn({4096});
  x[4095] = 3e9;
  at::Tensor original = x.clone();
  at::Tensor expected = at::sin(original);
  std::string execution;
  std::vector<at::Tensor> out = runCompiled(true, x, &execution, {x, at::empty({4096})});
  EXPECT_TRUE(at::allclose(x, expected, 1e-6, 1e-6));
  EXPECT_NE(execution.find("fell back to ATen 1 time"), std::string::npos) << execution;
}

TEST(TrigKernelTest, Float64AndLoneSinRunThroughAten) {
  for (const bool is_sin : {true, false}) {
    at::Tensor x = at::randn({64}, at::kDouble);
    std::string execution;
    at::Tensor out = runCompiled(is_sin, x, &execution).at(1);
    EXPECT_TRUE(at::allclose(out, (is_sin ? at::sin(x) : at::cos(x)) * 1.5 + x));
    EXPECT_NE(execution.find(is_sin ? "ATen: sin has no kernel lowering"
                                    : "ATen: cos has no kernel lowering"),
              std::string::npos)
        << execution;
  }
  auto lone = std::make_unique<Fusion>();
  {
    FusionGuard guard(lone.get());
    lone->addOutput(sin(vectorInput(DataType::Float)));
  }
  FusionExecutor lone_executor(std::move(lone));
  at::Tensor x = at::randn({64});
  EXPECT_TRUE(at::allclose(lone_executor.run({x}).at(0), at::sin(x)));
  EXPECT_NE(lone_executor.execution().find("ATen: a lone sin"), std::string::npos)
      << lone_executor.execution();
}

}  // namespace
}  // namespace hostir::test
