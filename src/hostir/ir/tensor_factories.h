#pragma once

#include <vector>

#include "hostir/ir/tensor_view.h"

// Creating input tensors in the current fusion, spelled as in nvFuser's tests.
namespace hostir {

// Symbolic sizes (i0, i1, ...), contiguous memory required.
TensorView* makeContigTensor(int64_t ndims, DataType dtype = DataType::Float);
// Symbolic sizes, any strides.
TensorView* makeSymbolicTensor(int64_t ndims, DataType dtype = DataType::Float);
// Known sizes; -1 is symbolic, 1 is a broadcast axis. Any strides.
TensorView* makeConcreteTensor(const std::vector<int64_t>& sizes, DataType dtype = DataType::Float);
// Known sizes, contiguous memory required.
TensorView* makeContigConcreteTensor(const std::vector<int64_t>& sizes,
                                     DataType dtype = DataType::Float);

// For builders and passes creating intermediates in `container`:
// a contiguous tensor over the given axes,
TensorView* makeTensorOver(Fusion* container, const std::vector<IterDomain*>& ids, DataType dtype);
// a view of another tensor's memory over the given axes (a slice or select
// output, which the host makes without copying): any strides, so a segment
// that reads it does not require contiguous memory,
TensorView* makeViewOver(Fusion* container, const std::vector<IterDomain*>& ids, DataType dtype);
// over fresh iteration axes of the given extents,
TensorView* makeTensorOfExtents(Fusion* container, const std::vector<Val*>& extents,
                                DataType dtype);
// over fresh axes like `like`'s logical ones (same extents and kinds), with
// no mesh and no parallelization.
TensorView* freshTensorLike(const TensorView* like);

}  // namespace hostir
