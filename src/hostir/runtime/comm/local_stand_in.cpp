#include <algorithm>
#include <vector>

#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collectives.h"

// The local stand-in of each collective (collectives.h): what a run without
// communication (Executor::runComputeOnly) writes where the collective would.

namespace hostir {

void localStandIn(const CommunicationParams& params, int64_t my_device, const at::Tensor& input,
                  const at::Tensor& output) {
  const std::vector<int64_t>& team = params.team;
  const auto position = std::find(team.begin(), team.end(), my_device);
  if (position == team.end()) {
    return;
  }
  const at::Tensor in = withoutLeadingUnitAxes(params.type, input);
  const at::Tensor out = withoutLeadingUnitAxes(params.type, output);
  if (!out.defined() || out.numel() == 0) {
    return;
  }
  const bool has_in = in.defined() && in.numel() > 0;
  switch (params.type) {
    case CommunicationType::Allgather:
    case CommunicationType::Gather: {
      // Each block of axis 0 of the output is one member's contribution.
      const int64_t blocks = has_in && out.numel() % in.numel() == 0 ? out.numel() / in.numel() : 0;
      if (blocks == 0 || out.size(0) % blocks != 0) {
        break;
      }
      const int64_t rows = out.size(0) / blocks;
      for (int64_t b = 0; b < blocks; ++b) {
        at::Tensor block = out.narrow(0, b * rows, rows);
        block.copy_(in.reshape(block.sizes()));
      }
      return;
    }
    case CommunicationType::Scatter: {
      const int64_t blocks = has_in && in.numel() % out.numel() == 0 ? in.numel() / out.numel() : 0;
      if (blocks == 0 || in.size(0) % blocks != 0) {
        break;
      }
      const int64_t index = std::min<int64_t>(position - team.begin(), blocks - 1);
      const int64_t rows = in.size(0) / blocks;
      out.copy_(in.narrow(0, index * rows, rows).reshape(out.sizes()));
      return;
    }
    case CommunicationType::ReduceScatter: {
      const auto team_size = static_cast<int64_t>(team.size());
      const int64_t axis = params.scattered_axis.value_or(0);
      if (!has_in || axis < 0 || axis >= in.dim() || in.size(axis) % team_size != 0 ||
          out.numel() * team_size != in.numel()) {
        break;
      }
      const int64_t extent = in.size(axis) / team_size;
      at::Tensor blocks;
      if (axis == 0 && in.is_contiguous()) {
        blocks = in.view({team_size, -1});
      } else {
        std::vector<at::Tensor> rows;
        for (int64_t p = 0; p < team_size; ++p) {
          rows.push_back(in.narrow(axis, p * extent, extent));
        }
        blocks = at::stack(rows).view({team_size, -1});
      }
      reduceAlongFirstAxisInto(blocks, params.reduce_op.value_or(ReduceOp::Sum), out);
      return;
    }
    case CommunicationType::Allreduce:
    case CommunicationType::Reduce:
    case CommunicationType::Broadcast:
    case CommunicationType::SendRecv:
      if (has_in && in.numel() == out.numel()) {
        if (!in.is_same(out)) {
          out.copy_(in.reshape(out.sizes()));
        }
        return;
      }
      break;
  }
  out.zero_();
}

}  // namespace hostir
