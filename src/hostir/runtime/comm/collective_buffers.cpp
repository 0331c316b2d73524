#include "hostir/runtime/comm/collective_buffers.h"

#include <ATen/Dispatch.h>

#include <limits>

#include "hostir/multidevice/row_chunks.h"
#include "hostir/runtime/buffer_pool.h"

namespace hostir {

void fillWithIdentity(at::Tensor& tensor, ReduceOp op) {
  if (op == ReduceOp::Sum) {
    tensor.zero_();
  } else if (op == ReduceOp::Product) {
    tensor.fill_(1);
  } else if (tensor.is_floating_point()) {
    const double infinity = std::numeric_limits<double>::infinity();
    tensor.fill_(op == ReduceOp::Max ? -infinity : infinity);
  } else {
    AT_DISPATCH_INTEGRAL_TYPES_AND(at::kBool, tensor.scalar_type(), "fillWithIdentity", [&] {
      tensor.fill_(op == ReduceOp::Max ? std::numeric_limits<scalar_t>::lowest()
                                       : std::numeric_limits<scalar_t>::max());
    });
  }
}

at::Tensor collectiveScratch(at::IntArrayRef sizes, const at::TensorOptions& options) {
  return BufferPool::shared().take(sizes.vec(), c10::typeMetaToScalarType(options.dtype()));
}

void reduceAlongFirstAxisInto(const at::Tensor& blocks, ReduceOp op, const at::Tensor& out) {
  at::Tensor target = out.is_contiguous() ? out.view({blocks.size(1)})
                                          : at::empty({blocks.size(1)}, blocks.options());
  switch (op) {
    case ReduceOp::Sum: at::sum_out(target, blocks, {0}, false, blocks.scalar_type()); break;
    case ReduceOp::Product: at::prod_out(target, blocks, 0, false, blocks.scalar_type()); break;
    case ReduceOp::Max: at::amax_out(target, blocks, {0}, false); break;
    case ReduceOp::Min: at::amin_out(target, blocks, {0}, false); break;
  }
  if (!out.is_contiguous()) {
    out.copy_(target.view(out.sizes()));
  }
}

void combineInto(const at::Tensor& into, const at::Tensor& other, ReduceOp op) {
  const at::Tensor operand = other.sizes() == into.sizes() ? other : other.view(into.sizes());
  switch (op) {
    case ReduceOp::Sum: into.add_(operand); break;
    case ReduceOp::Product: into.mul_(operand); break;
    case ReduceOp::Max: at::maximum_out(const_cast<at::Tensor&>(into), into, operand); break;
    case ReduceOp::Min: at::minimum_out(const_cast<at::Tensor&>(into), into, operand); break;
  }
}

at::Tensor withoutLeadingUnitAxes(CommunicationType type, const at::Tensor& tensor) {
  const bool splits_axis_0 = type == CommunicationType::Allgather ||
                             type == CommunicationType::Gather ||
                             type == CommunicationType::Scatter;
  at::Tensor view = tensor;
  while (splits_axis_0 && view.defined() && view.dim() > 1 && view.size(0) == 1) {
    view = view.select(0, 0);
  }
  return view;
}

std::pair<at::Tensor, at::Tensor> withoutSharedLeadingUnitAxes(at::Tensor whole, at::Tensor piece) {
  while (whole.dim() > 1 && piece.dim() == whole.dim() && whole.size(0) == 1 &&
         piece.size(0) == 1 && whole.sizes().slice(1) != piece.sizes().slice(1)) {
    whole = whole.select(0, 0);
    piece = piece.select(0, 0);
  }
  return {whole, piece};
}

std::map<int64_t, at::Tensor> torchChunkPieces(const at::Tensor& whole,
                                               const std::vector<int64_t>& members) {
  const auto count = static_cast<int64_t>(members.size());
  std::map<int64_t, at::Tensor> pieces;
  for (int64_t position = 0; position < count; ++position) {
    const RowChunk piece = rowChunk(whole.size(0), count, position);
    pieces.emplace(members[static_cast<size_t>(position)],
                   whole.narrow(0, piece.start, piece.rows));
  }
  return pieces;
}

std::vector<at::Tensor> piecesInDeviceOrder(const std::map<int64_t, at::Tensor>& pieces) {
  std::vector<at::Tensor> ordered;
  for (const auto& [device, piece] : pieces) {
    ordered.push_back(piece);
  }
  return ordered;
}

}  // namespace hostir
