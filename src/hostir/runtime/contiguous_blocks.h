#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

// ATen 1.13's GELU kernels (forward and backward) take their vectorized
// loop only when every operand is contiguous; a strided view, such as a
// Stream chunk's rows of a [ranks, rows, columns] buffer, takes a scalar
// loop 4x slower (1M floats, 1 thread, AVX2 EPYC: gelu 5.0 ms against 1.2,
// its backward 6.6 against 1.7; exp, tanh, sigmoid, erf and relu take the
// same time either way). A chunk is a few contiguous blocks, so such an op
// runs once per block (docs/performance.md, "GELU on a chunk's strided
// rows").

// Views of `out` and `in` (same sizes) that are each contiguous and
// together cover them, one pair per block: both split along their leading
// axes until every piece is contiguous. Empty when that takes more than
// `max_blocks` pieces or pieces of fewer than `min_block_elements`
// elements (then one strided call is the cheaper), when the sizes differ,
// or when both are contiguous already (one call does).
std::vector<std::pair<at::Tensor, at::Tensor>> contiguousBlocks(const at::Tensor& out,
                                                                const at::Tensor& in,
                                                                int64_t max_blocks = 64,
                                                                int64_t min_block_elements = 4096);

}  // namespace hostir
