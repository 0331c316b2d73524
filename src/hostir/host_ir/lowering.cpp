#include "hostir/host_ir/lowering.h"

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/lowering_count.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/passes/verifier.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/segment/host_lowering_policy.h"
#include "hostir/segment/segment_candidate_finder.h"
#include "hostir/segment/segmented_fusion.h"

namespace hostir {

namespace {

// Host-lowerable ops, ops that reshard (a reduction over a sharded axis
// becomes a collective) and permutes a GEMM reads as views run as top-level
// exprs of their own.
bool staysAlone(const Expr* expr) {
  return isHostLowerable(expr) || isResharding(expr) || isGemmOperandView(expr);
}

// A group the host program runs expr by expr rather than as a HostUnit: it
// computes a host-lowerable op (a forwarded copy of a cheap op computed
// elsewhere does not count) or a Stream-parallel tensor (which the stream
// pass loops over). The merge policy keeps such an op alone in its group
// (plus the forwarded chain it reads), so emitting the group's exprs never
// splits a merged group.
bool runsExprByExpr(const SegmentedGroup& group) {
  bool host_lowerable = std::any_of(
      group.exprs().begin(), group.exprs().end(),
      [&group](const Expr* expr) { return !group.isForwarded(expr) && staysAlone(expr); });
  bool stream_parallel =
      std::any_of(group.exprs().begin(), group.exprs().end(), computesStreamParallelTensor);
  if (!host_lowerable && !stream_parallel) {
    return false;
  }
  HOSTIR_ASSERT(std::count_if(group.exprs().begin(), group.exprs().end(),
                              [&group](const Expr* expr) { return !group.isForwarded(expr); }) == 1,
                "the host lowering's merge policy merged a group the host program must run "
                "expr by expr");
  return true;
}

}  // namespace

namespace {
std::atomic<int64_t> lowerings{0};
}  // namespace

int64_t hostIrLoweringCount() {
  return lowerings.load();
}

std::unique_ptr<HostIrContainer> lowerSegmentsToHostIr(const Fusion& fusion) {
  ++lowerings;
  // Segmentation only reads the fusion, and the program is made of clones:
  // the caller's fusion is lowered as it is, without a copy of its own.
  for (Val* input : fusion.inputs()) {
    if (auto* tv = dynamic_cast<TensorView*>(input)) {
      HOSTIR_CHECK(!findStreamAxis(tv).has_value(), "fusion input ", tv->toInlineString(),
                   " has a Stream axis; inputs arrive whole, so stream-parallelize the tensors "
                   "computed from them instead");
    }
  }
  SegmentOptions options;
  options.should_merge = hostLoweringMergePolicy(staysAlone);
  std::unique_ptr<SegmentedFusion> segmented = SegmentCandidateFinder::segment(&fusion, options);

  auto container = std::make_unique<HostIrContainer>();
  IrCloner cloner(container.get());
  for (Val* input : fusion.inputs()) {
    container->addInput(cloner.clone(input));
  }
  std::unordered_set<const Expr*> emitted;
  auto emit = [&](const Expr* expr) {
    Expr* clone = cloner.clone(expr);
    if (emitted.insert(clone).second) {
      container->pushBackTopLevelExpr(clone);
    }
  };
  // Forwarded exprs read only fusion inputs, factories and other forwarded
  // exprs, so they can all run first: emitted between two stream-parallel
  // ops, a forwarded broadcast would split their loop in two.
  for (const SegmentedGroup* group : segmented->runOrder()) {
    if (runsExprByExpr(*group)) {
      for (const Expr* expr : group->exprs()) {
        if (group->isForwarded(expr)) {
          emit(expr);
        }
      }
    }
  }
  for (const SegmentedGroup* group : segmented->runOrder()) {
    if (runsExprByExpr(*group)) {
      for (const Expr* expr : group->exprs()) {
        emit(expr);
      }
      continue;
    }
    auto* unit =
        IrBuilder::createInContainer<HostUnit>(container.get(), segmented->makeFusion(group));
    container->pushBackTopLevelExpr(IrBuilder::createInContainer<PostOnStream>(
        container.get(), unit, cloner.clone(group->inputs()), cloner.clone(group->outputs())));
  }
  for (Val* output : fusion.outputs()) {
    container->addOutput(cloner.clone(output));
  }
  return container;
}

std::unique_ptr<HostIrContainer> presegmentAndLower(
    Fusion& fusion, const std::optional<MultiDeviceLowering>& multidevice) {
  runPresegmentationPasses(&fusion, multidevice.has_value());
  return lowerToHostIr(fusion, hostIrPipeline(multidevice));
}

std::unique_ptr<HostIrContainer> lowerToHostIr(const Fusion& fusion, HostIrPassManager passes) {
  std::unique_ptr<HostIrContainer> container = lowerSegmentsToHostIr(fusion);
  passes.setVerifier(verifyHostProgram);
  passes.run(*container);
  container->printIfHostIrDumpEnabled();
  return container;
}

}  // namespace hostir
