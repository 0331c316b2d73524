#include "hostir/multidevice/presegmentation_passes.h"

#include "hostir/ir/fusion.h"
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

}  // namespace hostir
