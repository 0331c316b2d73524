#pragma once

// Shared helpers for the sharding tests (no ATen).

#include <string>
#include <vector>

#include "core_ir/test_utils.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_view.h"

namespace hostir::test {

// The op names of the fusion's exprs in topological order.
inline std::vector<std::string> exprKinds(const Fusion& fusion) {
  std::vector<std::string> kinds;
  for (Expr* expr : fusion.exprs()) {
    kinds.emplace_back(expr->opName());
  }
  return kinds;
}

// A concrete contiguous tensor on `mesh`, with shape dim `sharded_dim`
// parallelized over DIDx (none when -1).
inline TensorView* shardedTensor(const std::vector<int64_t>& sizes, const DeviceMesh& mesh,
                                 int64_t sharded_dim) {
  TensorView* tv = makeContigConcreteTensor(sizes);
  tv->setDeviceMesh(mesh);
  if (sharded_dim >= 0) {
    tv->axis(sharded_dim)->parallelize(ParallelType::DIDx);
  }
  return tv;
}

inline TensorView* sharded(TensorView* tv, const DeviceMesh& mesh, int64_t sharded_dim) {
  tv->setDeviceMesh(mesh);
  if (sharded_dim >= 0) {
    tv->axis(sharded_dim)->parallelize(ParallelType::DIDx);
  }
  return tv;
}

class MultiDeviceTest : public IrTest {
 protected:
  DeviceMesh mesh2_ = DeviceMesh({0, 1});
};

}  // namespace hostir::test
