// LLVM 15 ORC (LLJIT): the two kernels as loops built with IRBuilder, the
// O3 pipeline (loop vectorizer and SLP on) for the host CPU and features.
// "strict": no fast-math flags (the reductions' accumulating fadd/maxnum
// get `reassoc`, the permission Halide's rfactor takes by schedule);
// "fast": `reassoc contract` on every floating-point op. 1 thread.
#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <limits>
#include <string>

#include "common.h"

using namespace llvm;

namespace {

[[noreturn]] void fail(Error e) {
  errs() << "llvm: " << toString(std::move(e)) << "\n";
  std::exit(1);
}
template <typename T>
T check(Expected<T> v) {
  if (!v)
    fail(v.takeError());
  return std::move(*v);
}

// BEGIN kernel construction
// The schedule's one knob: interleave inner loops by 4 vectors (hostir's
// "lanes x 4"); O3's cost model alone picks 1 for the 100-op chain.
bool g_interleave4 = true;

using Body = std::function<std::vector<Value*>(Value* i, const std::vector<Value*>& carried)>;

// for (i = 0; i < n; ++i) { carried = body(i, carried); } -> final carried.
std::vector<Value*> emitLoop(IRBuilder<>& b, Value* n, std::vector<Value*> init, const Body& body) {
  Function* f = b.GetInsertBlock()->getParent();
  LLVMContext& ctx = f->getContext();
  BasicBlock* pre = b.GetInsertBlock();
  BasicBlock* head = BasicBlock::Create(ctx, "head", f);
  BasicBlock* loop = BasicBlock::Create(ctx, "loop", f);
  BasicBlock* exit = BasicBlock::Create(ctx, "exit", f);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(b.getInt64(0), pre);
  std::vector<PHINode*> phis;
  std::vector<Value*> carried;
  for (Value* v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    carried.push_back(phis.back());
  }
  b.CreateCondBr(b.CreateICmpSLT(i, n), loop, exit);
  b.SetInsertPoint(loop);
  std::vector<Value*> next = body(i, carried);
  Value* inext = b.CreateAdd(i, b.getInt64(1), "", /*NUW=*/true, /*NSW=*/true);
  BasicBlock* latch = b.GetInsertBlock();
  i->addIncoming(inext, latch);
  for (size_t k = 0; k < phis.size(); ++k)
    phis[k]->addIncoming(next[k], latch);
  BranchInst* back = b.CreateBr(head);
  if (g_interleave4) {  // ignored on a loop that is not innermost
    MDNode* count = MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.interleave.count"),
                                      ConstantAsMetadata::get(b.getInt32(4))});
    MDNode* id = MDNode::getDistinct(ctx, {nullptr, count});
    id->replaceOperandWith(0, id);
    back->setMetadata(LLVMContext::MD_loop, id);
  }
  b.SetInsertPoint(exit);
  return carried;
}

Value* f32(IRBuilder<>& b, double v) {
  return ConstantFP::get(b.getFloatTy(), float(v));
}

// hostir's vectorExp, as scalar IR the loop vectorizer widens.
Value* emitExp(IRBuilder<>& b, Value* x) {
  Value* cl = b.CreateMinNum(b.CreateMaxNum(x, f32(b, -88.0)), f32(b, 88.5));
  Value* k = b.CreateUnaryIntrinsic(
      Intrinsic::floor, b.CreateFAdd(b.CreateFMul(cl, f32(b, 1.44269504088896341)), f32(b, 0.5)));
  Value* r = b.CreateFSub(cl, b.CreateFMul(k, f32(b, 0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(k, f32(b, -2.12194440e-4)));
  Value* r2 = b.CreateFMul(r, r);
  Value* p = f32(b, 1.9875691500E-4);
  for (double c :
       {1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1})
    p = b.CreateFAdd(b.CreateFMul(p, r), f32(b, c));
  Value* e = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, r2), r), f32(b, 1.0));
  Value* bits = b.CreateShl(b.CreateAdd(b.CreateFPToSI(k, b.getInt32Ty()), b.getInt32(127)), 23);
  Value* scaled = b.CreateFMul(e, b.CreateBitCast(bits, b.getFloatTy()));
  Value* res = b.CreateSelect(
      b.CreateFCmpOGT(x, f32(b, 88.3762626647949)), f32(b, std::numeric_limits<float>::infinity()),
      b.CreateSelect(b.CreateFCmpOLT(x, f32(b, -87.3365447505531)), f32(b, 0.0), scaled));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

Function* declare(Module& m, const char* name, int ptrs, int ints) {
  LLVMContext& ctx = m.getContext();
  std::vector<Type*> args(ptrs, PointerType::getUnqual(ctx));
  args.insert(args.end(), ints, Type::getInt64Ty(ctx));
  Function* f = Function::Create(FunctionType::get(Type::getVoidTy(ctx), args, false),
                                 Function::ExternalLinkage, name, m);
  for (int a = 0; a < ptrs; ++a)
    f->addParamAttr(a, Attribute::NoAlias);
  return f;
}

// void chain(const float* x, float* y, int64 n)
void buildChain(Module& m, IRBuilder<>& b) {
  Function* f = declare(m, "chain", 2, 1);
  Value *x = f->getArg(0), *y = f->getArg(1), *n = f->getArg(2);
  b.SetInsertPoint(BasicBlock::Create(m.getContext(), "entry", f));
  emitLoop(b, n, {}, [&](Value* i, const std::vector<Value*>&) {
    Value* v = b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), x, i));
    for (int k = 0; k < bench::kChainOps; ++k)
      v = (k % 2 == 0) ? b.CreateFMul(v, f32(b, 0.999)) : b.CreateFAdd(v, f32(b, 0.001));
    b.CreateStore(v, b.CreateInBoundsGEP(b.getFloatTy(), y, i));
    return std::vector<Value*>{};
  });
  b.CreateRetVoid();
}

// void softmax(const float* x, float* y, int64 rows, int64 cols): per row,
// the max, exp(x - max) stored into y and summed, then y / sum.
void buildSoftmax(Module& m, IRBuilder<>& b) {
  Function* f = declare(m, "softmax", 2, 2);
  Value *x = f->getArg(0), *y = f->getArg(1), *rows = f->getArg(2), *cols = f->getArg(3);
  b.SetInsertPoint(BasicBlock::Create(m.getContext(), "entry", f));
  FastMathFlags fmf = b.getFastMathFlags(), reduce = fmf;
  reduce.setAllowReassoc();
  emitLoop(b, rows, {}, [&](Value* r, const std::vector<Value*>&) {
    Value* xr = b.CreateInBoundsGEP(b.getFloatTy(), x, b.CreateMul(r, cols));
    Value* yr = b.CreateInBoundsGEP(b.getFloatTy(), y, b.CreateMul(r, cols));
    auto at = [&](Value* row, Value* c) { return b.CreateInBoundsGEP(b.getFloatTy(), row, c); };
    Value* mx = emitLoop(b, cols, {f32(b, -std::numeric_limits<float>::infinity())},
                         [&](Value* c, const std::vector<Value*>& acc) {
                           Value* v = b.CreateLoad(b.getFloatTy(), at(xr, c));
                           b.setFastMathFlags(reduce);
                           Value* m = b.CreateMaxNum(acc[0], v);
                           b.setFastMathFlags(fmf);
                           return std::vector<Value*>{m};
                         })[0];
    Value* sum = emitLoop(b, cols, {f32(b, 0.0)}, [&](Value* c, const std::vector<Value*>& acc) {
      Value* e = emitExp(b, b.CreateFSub(b.CreateLoad(b.getFloatTy(), at(xr, c)), mx));
      b.CreateStore(e, at(yr, c));
      b.setFastMathFlags(reduce);
      Value* s = b.CreateFAdd(acc[0], e);
      b.setFastMathFlags(fmf);
      return std::vector<Value*>{s};
    })[0];
    emitLoop(b, cols, {}, [&](Value* c, const std::vector<Value*>&) {
      b.CreateStore(b.CreateFDiv(b.CreateLoad(b.getFloatTy(), at(yr, c)), sum), at(yr, c));
      return std::vector<Value*>{};
    });
    return std::vector<Value*>{};
  });
  b.CreateRetVoid();
}
// END kernel construction

struct Compiled {
  std::unique_ptr<orc::LLJIT> jit;
  void* fn = nullptr;
};

orc::JITTargetMachineBuilder hostBuilder() {
  orc::JITTargetMachineBuilder jtmb{Triple(sys::getProcessTriple())};
  jtmb.setCPU(sys::getHostCPUName().str());
  StringMap<bool> features;
  sys::getHostCPUFeatures(features);
  for (auto& f : features)
    jtmb.getFeatures().AddFeature(f.first(), f.second);
  jtmb.setCodeGenOptLevel(CodeGenOpt::Aggressive);
  return jtmb;
}

// A fresh context, module and LLJIT; IR -> O3 -> machine code.
Compiled compile(const char* kernel, bool fast) {
  auto ctx = std::make_unique<LLVMContext>();
  auto mod = std::make_unique<Module>(kernel, *ctx);
  orc::JITTargetMachineBuilder jtmb = hostBuilder();
  std::unique_ptr<TargetMachine> tm = check(jtmb.createTargetMachine());
  mod->setDataLayout(tm->createDataLayout());
  mod->setTargetTriple(tm->getTargetTriple().str());
  IRBuilder<> b(*ctx);
  if (fast) {
    FastMathFlags fmf;
    fmf.setAllowReassoc();
    fmf.setAllowContract();
    b.setFastMathFlags(fmf);
  }
  if (std::string(kernel) == "chain")
    buildChain(*mod, b);
  else
    buildSoftmax(*mod, b);
  for (Function& f : *mod) {
    f.addFnAttr("target-cpu", tm->getTargetCPU());
    f.addFnAttr("target-features", tm->getTargetFeatureString());
  }
  if (verifyModule(*mod, &errs()))
    std::exit(1);
  {
    PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    PassBuilder pb(tm.get(), pto);
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3).run(*mod, mam);
  }
  if (std::getenv("ENGINE_DUMP_IR"))
    mod->print(errs(), nullptr);
  Compiled c;
  c.jit = check(orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create());
  if (Error e = c.jit->addIRModule(orc::ThreadSafeModule(std::move(mod), std::move(ctx))))
    fail(std::move(e));
  c.fn = check(c.jit->lookup(kernel)).toPtr<void*>();
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  std::string what = argc > 1 ? argv[1] : "run";
  // strict, fast, and strict with O3's own interleave choice (no hint).
  for (int variant = 0; variant < 3; ++variant) {
    bool fast = variant == 1;
    g_interleave4 = variant != 2;
    const char* mode = variant == 0 ? "strict" : variant == 1 ? "fast" : "strict-nohint";
    if (what == "compile") {
      for (int rep = 0; rep < 3; ++rep) {
        for (const char* k : {"chain", "softmax"}) {
          double t0 = bench::nowMs();
          Compiled c = compile(k, fast);
          bench::printCompile("llvm", k, mode, bench::nowMs() - t0);
        }
      }
      continue;
    }
    static bench::Data d;
    Compiled cc = compile("chain", fast);
    auto chain = reinterpret_cast<void (*)(const float*, float*, int64_t)>(cc.fn);
    std::vector<float> y(bench::kChainN);
    double t = bench::timeOnce([&] { chain(d.chain_x.data(), y.data(), bench::kChainN); });
    double rel = std::max(bench::maxRelDiff(y, d.chain_ref),
                          bench::tailCheck(d.chain_ref, [&](float* out, int64_t n) {
                            chain(d.chain_x.data(), out, n);
                          }));
    bench::printTime("llvm", "chain", mode, t, rel);
    Compiled cs = compile("softmax", fast);
    auto softmax = reinterpret_cast<void (*)(const float*, float*, int64_t, int64_t)>(cs.fn);
    std::vector<float> s(bench::kRows * bench::kCols);
    t = bench::timeOnce([&] { softmax(d.soft_x.data(), s.data(), bench::kRows, bench::kCols); });
    bench::printTime("llvm", "softmax", mode, t, bench::maxRelDiff(s, d.soft_ref));
  }
  return 0;
}
