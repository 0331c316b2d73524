#include "hostir/multidevice/presegmentation_passes.h"

#include "hostir/ir/fusion.h"
#include "hostir/ir/pass_pipeline.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

void validateShardings(Fusion* fusion) {
  for (const auto& statement : fusion->statements()) {
    if (const auto* tv = dynamic_cast<const TensorView*>(statement.get())) {
      validateSharding(tv);
    }
  }
}

void runPresegmentationPasses(Fusion* fusion) {
  PassPipeline<Fusion> passes;
  passes.add("validate_shardings", [](Fusion& f) { validateShardings(&f); });
  passes.add("propagate_shardings", [](Fusion& f) { propagateShardings(&f); });
  passes.add("insert_reshardings", [](Fusion& f) { insertReshardings(&f); });
  passes.add("reorder_sharded_axis", [](Fusion& f) { reorderShardedAxis(&f); });
  passes.add("make_resharding_contiguous", [](Fusion& f) { makeReshardingContiguous(&f); });
  passes.run(*fusion);
}

}  // namespace hostir
