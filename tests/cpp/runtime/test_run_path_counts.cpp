// One run path: an entry point prepares a definition once (one fusion copy,
// one lowering) and then only keys each new input signature; runs with the
// same or a new signature copy and lower nothing more. The counters are
// process-wide (copyFusion, lowerSegmentsToHostIr), so each test reads
// differences.

#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/lowering_count.h"
#include "hostir/ir/fusion_copy_count.h"
#include "hostir/runtime/host_executor.h"
#include "runtime/runtime_test_utils.h"

namespace hostir::test {
namespace {

struct Counts {
  int64_t copies = fusionCopyCount();
  int64_t lowerings = hostIrLoweringCount();
};

// relu(x) + x, with x's rows split into 2 Stream chunks: a segment, a
// stream loop and the per-signature fusion checks all take part.
void buildStreamedFusion(Fusion& fusion) {
  FusionGuard fg(&fusion);
  TensorView* x = makeContigTensor(2);
  fusion.addInput(x);
  TensorView* y = add(relu(x), x);
  fusion.addOutput(y);
  y->split(0, 2, /*inner_split=*/false);
  y->axis(0)->parallelize(ParallelType::Stream);
}

TEST(RunPathCounts, HostExecutorCopiesAndLowersOncePerDefinition) {
  Fusion fusion;
  buildStreamedFusion(fusion);
  Counts before;
  HostExecutor executor(fusion);
  EXPECT_EQ(fusionCopyCount() - before.copies, 1);
  EXPECT_EQ(hostIrLoweringCount() - before.lowerings, 1);

  at::Tensor x = at::randn({4, 3});
  at::Tensor other = at::randn({6, 5});
  at::Tensor odd_rows = at::randn({5, 2});
  for (const at::Tensor& input : {x, x, other, odd_rows, x}) {
    at::Tensor out = executor.run({input}).at(0);
    EXPECT_TRUE(at::allclose(out, at::relu(input) + input));
  }
  EXPECT_EQ(fusionCopyCount() - before.copies, 1) << "a run copied the fusion";
  EXPECT_EQ(hostIrLoweringCount() - before.lowerings, 1) << "a run lowered the fusion again";
  // One key per input signature (dtypes, sizes, scalar values).
  EXPECT_EQ(executor.checks().checkedSignatures(), 3u);
}

// The number of streams is bound per run: one prepared program and one pool
// of stream workers serve every value (Python passes number_of_streams per
// execute; it used to lower, and start workers, once per value).
TEST(RunPathCounts, EveryNumberOfStreamsRunsTheOneProgram) {
  Fusion fusion;
  buildStreamedFusion(fusion);
  Counts before;
  HostExecutor executor(fusion);
  at::Tensor x = at::randn({4, 3});
  for (int streams : {1, 2, 7, 300, 1}) {
    at::Tensor out = executor.run({PolymorphicValue(x)}, {}, streams).at(0);
    EXPECT_TRUE(at::allclose(out, at::relu(x) + x)) << streams << " streams";
  }
  EXPECT_EQ(fusionCopyCount() - before.copies, 1);
  EXPECT_EQ(hostIrLoweringCount() - before.lowerings, 1);
  // The caller's stream and one per chunk of the 2-chunk loop, at most.
  EXPECT_LE(executor.evaluator().streamPool().createdStreamCount(), 3u);
  EXPECT_HOSTIR_ERROR(executor.run({PolymorphicValue(x)}, {}, 0),
                      {"number_of_streams must be a positive int", "got 0"});
}

// `hostir lower` and `hostir run` (tools/main.cpp) call lowerToHostIr and
// HostExecutor; the lowering itself reads the fusion without copying it.
TEST(RunPathCounts, LoweringReadsTheFusionWithoutCopyingIt) {
  Fusion fusion;
  buildStreamedFusion(fusion);
  Counts before;
  std::unique_ptr<HostIrContainer> program = lowerToHostIr(fusion);
  EXPECT_EQ(fusionCopyCount() - before.copies, 0);
  EXPECT_EQ(hostIrLoweringCount() - before.lowerings, 1);
  EXPECT_FALSE(program->topLevel().empty());
}

}  // namespace
}  // namespace hostir::test
