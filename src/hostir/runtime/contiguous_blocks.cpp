#include "hostir/runtime/contiguous_blocks.h"

#include <algorithm>

namespace hostir {

std::vector<std::pair<at::Tensor, at::Tensor>> contiguousBlocks(const at::Tensor& out,
                                                                const at::Tensor& in,
                                                                int64_t max_blocks,
                                                                int64_t min_block_elements) {
  if (out.sizes() != in.sizes() || (out.is_contiguous() && in.is_contiguous())) {
    return {};
  }
  std::vector<std::pair<at::Tensor, at::Tensor>> blocks{{out, in}};
  for (;;) {
    std::vector<std::pair<at::Tensor, at::Tensor>> pieces;
    bool split = false;
    for (auto& [out_block, in_block] : blocks) {
      if (out_block.is_contiguous() && in_block.is_contiguous()) {
        pieces.emplace_back(std::move(out_block), std::move(in_block));
        continue;
      }
      if (out_block.dim() <= 1) {
        return {};  // a strided vector: no contiguous piece to call on
      }
      split = true;
      for (int64_t index = 0; index < out_block.size(0); ++index) {
        pieces.emplace_back(out_block.select(0, index), in_block.select(0, index));
      }
    }
    if (std::ssize(pieces) > max_blocks || std::ranges::any_of(pieces, [&](const auto& piece) {
          return piece.first.numel() < min_block_elements;
        })) {
      return {};
    }
    blocks = std::move(pieces);
    if (!split) {
      return blocks;
    }
  }
}

}  // namespace hostir
