// MLIR 15: the two kernels as linalg.generic on memrefs with dynamic sizes,
// lowered linalg -> affine loops -> affine-super-vectorize (32 lanes, the
// reductions too) -> LLVM dialect, then ExecutionEngine (LLVM 15 O3 for the
// host). Strict only: arith ops in MLIR 15 carry no fast-math flags. The
// softmax is four linalg ops, so four loop nests over the whole [4096, 1024]
// (no linalg tiling/fusion here; an output of a linalg.generic cannot be
// indexed by its reduction dimension, so exp and its sum are two ops).
#include <mlir/Conversion/Passes.h>
#include <mlir/Dialect/Affine/Passes.h>
#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/ExecutionEngine/OptUtils.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <sstream>
#include <string>

#include "common.h"

namespace {

// BEGIN kernel construction
std::string chainSource() {
  std::ostringstream s;
  s << "#map = affine_map<(d0) -> (d0)>\n"
       "func.func @chain(%x: memref<?xf32>, %y: memref<?xf32>) "
       "attributes {llvm.emit_c_interface} {\n"
       "  %c1 = arith.constant 0.999 : f32\n  %c2 = arith.constant 0.001 : f32\n"
       "  linalg.generic {indexing_maps = [#map, #map], iterator_types = [\"parallel\"]}\n"
       "      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {\n"
       "  ^bb0(%v : f32, %out : f32):\n";
  std::string prev = "%v";
  for (int k = 0; k < bench::kChainOps; ++k) {
    std::string v = "%v" + std::to_string(k);
    s << "    " << v << " = " << (k % 2 == 0 ? "arith.mulf " : "arith.addf ") << prev << ", "
      << (k % 2 == 0 ? "%c1" : "%c2") << " : f32\n";
    prev = v;
  }
  s << "    linalg.yield " << prev << " : f32\n  }\n  return\n}\n";
  return s.str();
}

// (arith.maxf/minf have no LLVM lowering in MLIR 15: cmpf + select.)
// hostir's vectorExp (Cephes range reduction, degree-6 polynomial) in arith.
const char* kExp = R"(
    %below = arith.cmpf olt, %d, %lo : f32
    %cl0 = arith.select %below, %lo, %d : f32
    %above = arith.cmpf ogt, %cl0, %hi : f32
    %cl = arith.select %above, %hi, %cl0 : f32
    %t0 = arith.mulf %cl, %log2e : f32
    %t1 = arith.addf %t0, %half : f32
    %k = math.floor %t1 : f32
    %kc1 = arith.mulf %k, %ln2hi : f32
    %r0 = arith.subf %cl, %kc1 : f32
    %kc2 = arith.mulf %k, %ln2lo : f32
    %r = arith.subf %r0, %kc2 : f32
    %r2 = arith.mulf %r, %r : f32
    %p1m = arith.mulf %p0, %r : f32
    %p1 = arith.addf %p1m, %q1 : f32
    %p2m = arith.mulf %p1, %r : f32
    %p2 = arith.addf %p2m, %q2 : f32
    %p3m = arith.mulf %p2, %r : f32
    %p3 = arith.addf %p3m, %q3 : f32
    %p4m = arith.mulf %p3, %r : f32
    %p4 = arith.addf %p4m, %q4 : f32
    %p5m = arith.mulf %p4, %r : f32
    %p5 = arith.addf %p5m, %q5 : f32
    %e0 = arith.mulf %p5, %r2 : f32
    %e1 = arith.addf %e0, %r : f32
    %e = arith.addf %e1, %one : f32
    %ki = arith.fptosi %k : f32 to i32
    %kb = arith.addi %ki, %c127 : i32
    %bits = arith.shli %kb, %c23 : i32
    %pow = arith.bitcast %bits : i32 to f32
    %scaled = arith.mulf %e, %pow : f32
    %big = arith.cmpf ogt, %d, %ovf : f32
    %small = arith.cmpf olt, %d, %unf : f32
    %nan = arith.cmpf uno, %d, %d : f32
    %s0 = arith.select %small, %zero, %scaled : f32
    %s1 = arith.select %big, %inf, %s0 : f32
    %ex = arith.select %nan, %d, %s1 : f32
)";

std::string softmaxSource() {
  std::ostringstream s;
  s << R"(#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax(%x: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.alloc(%rows) : memref<?xf32>
  %sum = memref.alloc(%rows) : memref<?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<?xf32>)
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%v : f32, %acc : f32):
    %gt = arith.cmpf ogt, %v, %acc : f32
    %mx = arith.select %gt, %v, %acc : f32
    linalg.yield %mx : f32
  }
  %lo = arith.constant -88.0 : f32
  %hi = arith.constant 88.5 : f32
  %log2e = arith.constant 1.44269504088896341 : f32
  %half = arith.constant 0.5 : f32
  %ln2hi = arith.constant 0.693359375 : f32
  %ln2lo = arith.constant -2.12194440e-4 : f32
  %p0 = arith.constant 1.9875691500E-4 : f32
  %q1 = arith.constant 1.3981999507E-3 : f32
  %q2 = arith.constant 8.3334519073E-3 : f32
  %q3 = arith.constant 4.1665795894E-2 : f32
  %q4 = arith.constant 1.6666665459E-1 : f32
  %q5 = arith.constant 5.0000001201E-1 : f32
  %one = arith.constant 1.0 : f32
  %c127 = arith.constant 127 : i32
  %c23 = arith.constant 23 : i32
  %ovf = arith.constant 88.3762626647949 : f32
  %unf = arith.constant -87.3365447505531 : f32
  %inf = arith.constant 0x7F800000 : f32
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v : f32, %mv : f32, %yo : f32):
    %d = arith.subf %v, %mv : f32
)" << kExp
    << R"(
    linalg.yield %ex : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%e : f32, %acc : f32):
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%sv : f32, %yv : f32):
    %q = arith.divf %yv, %sv : f32
    linalg.yield %q : f32
  }
  memref.dealloc %m : memref<?xf32>
  memref.dealloc %sum : memref<?xf32>
  return
}
)";
  return s.str();
}

const char* kPipeline =
    "func.func(convert-linalg-to-affine-loops,"
    "affine-super-vectorize{virtual-vector-size=32 vectorize-reductions=true}),"
    "lower-affine,convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,"
    "convert-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts";
// END kernel construction

[[noreturn]] void fail(const std::string& what) {
  llvm::errs() << "mlir: " << what << "\n";
  std::exit(1);
}

// Parse, lower, JIT: a fresh context and engine per compile.
struct Compiled {
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

Compiled compile(const std::string& source) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerLLVMDialectTranslation(registry);
  Compiled c;
  c.ctx = std::make_unique<mlir::MLIRContext>(registry);
  c.ctx->loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, c.ctx.get());
  if (!module)
    fail("parse");
  mlir::PassManager pm(c.ctx.get());
  if (mlir::failed(mlir::parsePassPipeline(kPipeline, pm, llvm::errs())))
    fail("pipeline");
  if (mlir::failed(pm.run(*module)))
    fail("lowering");
  auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
  auto tm = llvm::cantFail(jtmb.createTargetMachine());
  auto transformer = mlir::makeOptimizingTransformer(3, 0, tm.get());
  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOpt::Aggressive;
  auto engine = mlir::ExecutionEngine::create(*module, options);
  if (!engine)
    fail(llvm::toString(engine.takeError()));
  c.engine = std::move(*engine);
  return c;
}

template <int N>
struct MemRef {
  float* allocated;
  float* aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};

}  // namespace

int main(int argc, char** argv) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::registerAllPasses();
  std::string what = argc > 1 ? argv[1] : "run";
  if (what == "compile") {
    for (int rep = 0; rep < 3; ++rep) {
      double t0 = bench::nowMs();
      Compiled c = compile(chainSource());
      bench::printCompile("mlir", "chain", "strict", bench::nowMs() - t0);
      t0 = bench::nowMs();
      Compiled s = compile(softmaxSource());
      bench::printCompile("mlir", "softmax", "strict", bench::nowMs() - t0);
    }
    return 0;
  }
  bench::Data d;
  Compiled cc = compile(chainSource());
  std::vector<float> y(bench::kChainN);
  MemRef<1> xm{d.chain_x.data(), d.chain_x.data(), 0, {bench::kChainN}, {1}};
  MemRef<1> ym{y.data(), y.data(), 0, {bench::kChainN}, {1}};
  auto chain = reinterpret_cast<void (*)(MemRef<1>*, MemRef<1>*)>(
      llvm::cantFail(cc.engine->lookup("_mlir_ciface_chain")));
  double t = bench::timeOnce([&] { chain(&xm, &ym); });
  double rel = std::max(bench::maxRelDiff(y, d.chain_ref),
                        bench::tailCheck(d.chain_ref, [&](float* out, int64_t n) {
                          MemRef<1> xt{d.chain_x.data(), d.chain_x.data(), 0, {n}, {1}};
                          MemRef<1> yt{out, out, 0, {n}, {1}};
                          chain(&xt, &yt);
                        }));
  bench::printTime("mlir", "chain", "strict", t, rel);

  Compiled cs = compile(softmaxSource());
  std::vector<float> s(bench::kRows * bench::kCols);
  MemRef<2> sx{
      d.soft_x.data(), d.soft_x.data(), 0, {bench::kRows, bench::kCols}, {bench::kCols, 1}};
  MemRef<2> sy{s.data(), s.data(), 0, {bench::kRows, bench::kCols}, {bench::kCols, 1}};
  auto softmax = reinterpret_cast<void (*)(MemRef<2>*, MemRef<2>*)>(
      llvm::cantFail(cs.engine->lookup("_mlir_ciface_softmax")));
  t = bench::timeOnce([&] { softmax(&sx, &sy); });
  bench::printTime("mlir", "softmax", "strict", t, bench::maxRelDiff(s, d.soft_ref));
  return 0;
}
