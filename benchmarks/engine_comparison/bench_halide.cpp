// Halide 14, JIT: the two kernels with a schedule like hostir's
// (src/hostir/kernels/halide_lowering.cpp): outputs vectorized by 4 vector
// registers (32 float lanes on AVX2), reductions split into vector lanes
// (rfactor) and computed per row, exp computed once per row. 1 thread (no
// .parallel()). StrictFloat on ("strict") and off ("fast").
#include <Halide.h>

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <string>

#include "common.h"

using namespace Halide;

// BEGIN kernel construction
namespace {

Expr f32(double v) {
  return Expr(float(v));
}

// hostir's vectorExp (kernels/vector_math.cpp): Cephes range reduction and
// a degree-6 polynomial.
Expr vexp(const Expr& x) {
  Expr cl = clamp(x, f32(-88.0), f32(88.5));
  Expr k = floor(cl * f32(1.44269504088896341) + f32(0.5));
  Expr r = cl - k * f32(0.693359375);
  r = r - k * f32(-2.12194440e-4);
  Expr r2 = r * r;
  Expr p = f32(1.9875691500E-4);
  p = p * r + f32(1.3981999507E-3);
  p = p * r + f32(8.3334519073E-3);
  p = p * r + f32(4.1665795894E-2);
  p = p * r + f32(1.6666665459E-1);
  p = p * r + f32(5.0000001201E-1);
  Expr e = p * r2 + r + f32(1.0);
  Expr bits = (cast(Int(32), k) + 127) << 23;
  Expr scaled = e * reinterpret(Float(32), bits);
  Expr res = select(x > f32(88.3762626647949), f32(std::numeric_limits<float>::infinity()),
                    select(x < f32(-87.3365447505531), f32(0.0), scaled));
  return select(is_nan(x), x, res);
}

struct Kernel {
  ImageParam in;
  Pipeline pipeline;
};

Kernel buildChain() {
  ImageParam in(Float(32), 1, "x");
  Var i("i"), o("o"), ii("ii");
  Expr v = in(i);
  for (int k = 0; k < bench::kChainOps; ++k)
    v = (k % 2 == 0) ? v * f32(0.999) : v + f32(0.001);
  Func y("y");
  y(i) = v;
  y.split(i, o, ii, 32 * 256, TailStrategy::GuardWithIf)
      .vectorize(ii, 32, TailStrategy::GuardWithIf);
  return {in, Pipeline(y)};
}

Kernel buildSoftmax() {
  ImageParam in(Float(32), 2, "x");
  Var c("c"), r("r");
  RDom k(0, in.dim(0).extent());
  Func mx("mx"), ex("ex"), sm("sm"), y("y");
  mx(r) = f32(-std::numeric_limits<float>::infinity());
  mx(r) = max(mx(r), in(k, r));
  ex(c, r) = vexp(in(c, r) - mx(r));
  sm(r) = f32(0.0);
  sm(r) += ex(k, r);
  y(c, r) = ex(c, r) / sm(r);
  y.vectorize(c, 32, TailStrategy::GuardWithIf);
  for (Func* acc : {&mx, &sm}) {
    RVar ko("ko"), ki("ki");
    Var lane("lane");
    Func partial =
        acc->update().split(k.x, ko, ki, 32, TailStrategy::GuardWithIf).rfactor(ki, lane);
    partial.compute_at(*acc, r).vectorize(lane).update().vectorize(lane);
    acc->compute_at(y, r);
  }
  ex.compute_at(y, r).vectorize(c, 8, TailStrategy::GuardWithIf);
  return {in, Pipeline(y)};
}

}  // namespace
// END kernel construction

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "run";
  for (bool strict : {true, false}) {
    Target target = get_host_target();
    if (strict)
      target = target.with_feature(Target::StrictFloat);
    const char* mode = strict ? "strict" : "fast";
    if (what == "compile") {
      for (int rep = 0; rep < 3; ++rep) {
        double t0 = bench::nowMs();
        Kernel kc = buildChain();
        kc.pipeline.compile_jit(target);
        bench::printCompile("halide", "chain", mode, bench::nowMs() - t0);
        t0 = bench::nowMs();
        Kernel ks = buildSoftmax();
        ks.pipeline.compile_jit(target);
        bench::printCompile("halide", "softmax", mode, bench::nowMs() - t0);
      }
      // As hostir compiles: an object without the runtime, then cc -shared.
      for (int rep = 0; rep < 3; ++rep) {
        for (const char* name : {"chain", "softmax"}) {
          double t0 = bench::nowMs();
          Kernel k = std::string(name) == "chain" ? buildChain() : buildSoftmax();
          std::string base = "/tmp/engine_comparison_" + std::to_string(getpid()) + "_" + name;
          k.pipeline.compile_to_object(base + ".o", {k.in}, name,
                                       target.with_feature(Target::NoRuntime));
          std::string link = "cc -shared -o " + base + ".so " + base + ".o";
          if (std::system(link.c_str()) != 0)
            return 1;
          bench::printCompile("halide-aot", name, mode, bench::nowMs() - t0);
          std::remove((base + ".o").c_str());
          std::remove((base + ".so").c_str());
        }
      }
      continue;
    }
    static bench::Data d;
    Kernel kc = buildChain();
    kc.pipeline.compile_jit(target);
    std::vector<float> y(bench::kChainN);
    Buffer<float> xb(d.chain_x.data(), int(bench::kChainN)), yb(y.data(), int(bench::kChainN));
    kc.in.set(xb);
    double t = bench::timeOnce([&] { kc.pipeline.realize(yb); });
    double rel = std::max(bench::maxRelDiff(y, d.chain_ref),
                          bench::tailCheck(d.chain_ref, [&](float* out, int64_t n) {
                            Buffer<float> xt(d.chain_x.data(), int(n)), yt(out, int(n));
                            kc.in.set(xt);
                            kc.pipeline.realize(yt);
                          }));
    bench::printTime("halide", "chain", mode, t, rel);

    Kernel ks = buildSoftmax();
    ks.pipeline.compile_jit(target);
    std::vector<float> s(bench::kRows * bench::kCols);
    Buffer<float> sx(d.soft_x.data(), int(bench::kCols), int(bench::kRows));
    Buffer<float> sy(s.data(), int(bench::kCols), int(bench::kRows));
    ks.in.set(sx);
    t = bench::timeOnce([&] { ks.pipeline.realize(sy); });
    bench::printTime("halide", "softmax", mode, t, bench::maxRelDiff(s, d.soft_ref));
  }
  return 0;
}
