// The engine step of the compile stage (issue 40): the Executor records on
// each HostUnit which engine runs it, and compiles its kernel before the
// first run, so the first run compiles nothing.

#include "fresh_cache_dir.h"
#include "hostir/compiler/compile.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/text/host_ir_text_parser.h"
#include "hostir/host_ir/text/host_ir_text_printer.h"
#include "hostir/ir/arith.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/host_ir_evaluator.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

// exp(x) + 1 on a tensor of symbolic sizes: one segment a kernel takes.
std::unique_ptr<Fusion> expPlusOne() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* x = makeContigTensor(2);
  fusion->addInput(x);
  fusion->addOutput(add(exp(x), 1.0));
  return fusion;
}

// a @ b: an op without a kernel lowering.
std::unique_ptr<Fusion> aMatmul() {
  auto fusion = std::make_unique<Fusion>();
  FusionGuard fg(fusion.get());
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
  fusion->addInput(a);
  fusion->addInput(b);
  fusion->addOutput(matmul(a, b));
  return fusion;
}

const HostUnit& onlyUnit(const HostIrContainer& program) {
  std::vector<HostUnit*> units = program.postedHostUnits();
  EXPECT_EQ(units.size(), 1u) << program.toString();
  return *units.at(0);
}

TEST(SegmentEngineTest, TheKernelIsCompiledWhenTheExecutorIsMadeAndRecordedOnItsUnit) {
  FreshCacheDir cache;
  std::unique_ptr<Fusion> fusion = expPlusOne();
  const int compiled_before = KernelCache::global().compiled();
  HostExecutor executor(*fusion);
  const HostUnit& unit = onlyUnit(executor.hostProgram());
  ASSERT_TRUE(unit.engine().has_value()) << executor.hostProgram().toString();
  if (!kernelsEnabled()) {  // the .aten variant
    EXPECT_EQ(*unit.engine(), (SegmentEngine{SegmentEngineKind::Aten, "HOSTIR_KERNELS=aten"}));
    return;
  }
  EXPECT_EQ(unit.engine()->kind, SegmentEngineKind::Kernel) << describe(*unit.engine());
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 1) << "not compiled ahead";
  at::Tensor x = at::randn({3, 5});
  EXPECT_TRUE(at::allclose(executor.run({x}).at(0), at::exp(x) + 1));
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before + 1) << "compiled again at run";
  // The engine the program records is the one that ran.
  const std::string ran = executor.segmentExecution();
  EXPECT_NE(ran.find(describe(*unit.engine()) + "; ran it 1 time"), std::string::npos) << ran;
  // The printed program names it, and reads back with it.
  EXPECT_NE(executor.hostProgram().toString().find(" (compiled kernel " + unit.engine()->detail),
            std::string::npos);
  const std::string text = printHostIrText(executor.hostProgram());
  EXPECT_NE(text.find(" engine kernel \"" + unit.engine()->detail + "\" fusion {"),
            std::string::npos)
      << text;
  EXPECT_EQ(printHostIrText(*parseHostIrText(text, "engines")), text);
}

TEST(SegmentEngineTest, AnOpWithoutAKernelLoweringRecordsAtenAndWhy) {
  std::unique_ptr<Fusion> fusion = aMatmul();
  HostExecutor executor(*fusion);
  for (const HostUnit* unit : executor.hostProgram().postedHostUnits()) {
    ASSERT_TRUE(unit->engine().has_value());
    EXPECT_EQ(unit->engine()->kind, SegmentEngineKind::Aten) << describe(*unit->engine());
    EXPECT_FALSE(unit->engine()->detail.empty()) << "a fallback names its reason";
  }
}

// A segment runs on the engine the compile stage recorded on its unit, not
// on one decided again at run time: recorded as ATen (with its reason), a
// segment the kernels would take runs op by op through ATen and compiles
// nothing.
TEST(SegmentEngineTest, TheRecordedEngineRunsEvenWhereAKernelWouldTakeTheSegment) {
  FreshCacheDir cache;
  std::unique_ptr<Fusion> fusion = expPlusOne();
  const int compiled_before = KernelCache::global().compiled();
  const int loaded_before = KernelCache::global().loadedFromDisk();
  auto executor = FusionExecutor::borrowing(
      *fusion, SegmentEngine{SegmentEngineKind::Aten, "recorded by the compile stage"});
  at::Tensor x = at::randn({3, 5});
  EXPECT_TRUE(at::allclose(executor->run({x}).at(0), at::exp(x) + 1));
  EXPECT_EQ(executor->execution(), "ATen: recorded by the compile stage");
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before) << "the engine was decided again";
  EXPECT_EQ(KernelCache::global().loadedFromDisk(), loaded_before);
  EXPECT_EQ(executor->runs().on_planned_engine, 0);
}

// The host program's evaluator runs each unit on the engine recorded on it:
// a unit recorded as ATen runs through ATen though a kernel would take it.
TEST(SegmentEngineTest, TheEvaluatorRunsEachUnitOnItsRecordedEngine) {
  FreshCacheDir cache;
  std::unique_ptr<Fusion> fusion = expPlusOne();
  CompiledProgram compiled = compile(*fusion);
  std::vector<HostUnit*> units = compiled.program->postedHostUnits();
  ASSERT_EQ(units.size(), 1u) << compiled.program->toString();
  units[0]->setEngine(SegmentEngine{SegmentEngineKind::Aten, "recorded by the compile stage"});
  const int compiled_before = KernelCache::global().compiled();
  HostIrEvaluator evaluator(std::move(compiled.program));
  at::Tensor x = at::randn({3, 5});
  EXPECT_TRUE(at::allclose(evaluator.run({x}).at(0), at::exp(x) + 1));
  const std::string report = evaluator.segmentExecution();
  EXPECT_NE(report.find(": ATen: recorded by the compile stage"), std::string::npos) << report;
  EXPECT_EQ(KernelCache::global().compiled(), compiled_before) << "the engine was decided again";
}

// A unit recorded as a kernel whose kernel cannot be had at run time (here:
// a segment the kernels do not take, recorded as a kernel) still runs,
// through ATen, and says so as a run-time fallback.
TEST(SegmentEngineTest, ARecordedKernelThatCannotBeHadFallsBackVisibly) {
  std::unique_ptr<Fusion> fusion = aMatmul();
  auto executor = FusionExecutor::borrowing(
      *fusion, SegmentEngine{SegmentEngineKind::Kernel, "0123456789abcdef for the test"});
  at::Tensor a = at::randn({3, 4});
  at::Tensor b = at::randn({4, 2});
  EXPECT_TRUE(at::allclose(executor->run({a, b}).at(0), at::matmul(a, b)));
  const std::string report = executor->execution();
  const std::string why = kernelsEnabled() ? "the recorded kernel is not available: matmul has no "
                                             "kernel lowering"
                                           : "HOSTIR_KERNELS=aten";
  EXPECT_EQ(report.rfind("compiled kernel 0123456789abcdef for the test; ran it 0 times, fell "
                         "back to ATen 1 time: " +
                             why,
                         0),
            0u)
      << report;
}

}  // namespace
}  // namespace hostir::test
