#include "hostir/ir/tensor_factories.h"

#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"

namespace hostir {

namespace {
TensorView* makeTensor(const std::vector<int64_t>& sizes, DataType dtype, bool contiguous) {
  HOSTIR_CHECK(FusionGuard::getCurFusion() != nullptr,
               "no current Fusion: create tensors inside `FusionGuard fg(&fusion);`");
  std::vector<IterDomain*> ids;
  for (int64_t size : sizes) {
    HOSTIR_CHECK(size >= -1, "tensor size ", size, " is invalid; use -1 for symbolic");
    if (size == -1) {
      ids.push_back(IrBuilder::create<IterDomain>(IrBuilder::create<Scalar>(DataType::Int64)));
    } else if (size == 1) {
      ids.push_back(IrBuilder::create<IterDomain>(IrBuilder::create<Scalar>(int64_t{1}),
                                                  IterType::Broadcast));
    } else {
      ids.push_back(IrBuilder::create<IterDomain>(IrBuilder::create<Scalar>(size)));
    }
  }
  auto* domain = IrBuilder::create<TensorDomain>(ids, std::vector<bool>(ids.size(), contiguous));
  return IrBuilder::create<TensorView>(domain, dtype);
}
}  // namespace

TensorView* makeContigTensor(int64_t ndims, DataType dtype) {
  return makeTensor(std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, true);
}

TensorView* makeSymbolicTensor(int64_t ndims, DataType dtype) {
  return makeTensor(std::vector<int64_t>(static_cast<size_t>(ndims), -1), dtype, false);
}

TensorView* makeConcreteTensor(const std::vector<int64_t>& sizes, DataType dtype) {
  return makeTensor(sizes, dtype, false);
}

TensorView* makeContigConcreteTensor(const std::vector<int64_t>& sizes, DataType dtype) {
  return makeTensor(sizes, dtype, true);
}

TensorView* makeTensorOver(Fusion* container, const std::vector<IterDomain*>& ids, DataType dtype) {
  auto* domain = IrBuilder::createInContainer<TensorDomain>(container, ids,
                                                            std::vector<bool>(ids.size(), true));
  return IrBuilder::createInContainer<TensorView>(container, domain, dtype);
}

TensorView* makeViewOver(Fusion* container, const std::vector<IterDomain*>& ids, DataType dtype) {
  auto* domain = IrBuilder::createInContainer<TensorDomain>(container, ids,
                                                            std::vector<bool>(ids.size(), false));
  return IrBuilder::createInContainer<TensorView>(container, domain, dtype);
}

TensorView* makeTensorOfExtents(Fusion* container, const std::vector<Val*>& extents,
                                DataType dtype) {
  std::vector<IterDomain*> ids;
  for (Val* extent : extents) {
    ids.push_back(IrBuilder::createInContainer<IterDomain>(container, extent));
  }
  return makeTensorOver(container, ids, dtype);
}

TensorView* freshTensorLike(const TensorView* like) {
  std::vector<IterDomain*> ids;
  for (IterDomain* id : like->getLogicalDomain()) {
    ids.push_back(id->cloneWithoutParallelization(id->iterType()));
  }
  return makeTensorOver(like->container(), ids, like->dtype());
}

}  // namespace hostir
