#include "hostir/multidevice/presegmentation_passes.h"

#include <iostream>
#include <string>

#include "hostir/ir/fusion.h"
#include "hostir/ir/options.h"
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
  struct Pass {
    const char* name;
    void (*run)(Fusion*);
  };
  static constexpr Pass kPasses[] = {
      {"validateShardings", validateShardings},
      {"propagateShardings", propagateShardings},
      {"insertReshardings", insertReshardings},
      {"reorderShardedAxis", reorderShardedAxis},
      {"makeReshardingContiguous", makeReshardingContiguous},
  };
  for (const Pass& pass : kPasses) {
    if (isPassDisabled(pass.name)) {
      continue;
    }
    pass.run(fusion);
    if (isDumpEnabled("passes")) {
      std::cout << "After " << pass.name << ":\n" << fusion->toString() << std::flush;
    }
  }
}

}  // namespace hostir
