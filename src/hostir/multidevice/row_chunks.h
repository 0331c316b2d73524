#pragma once

#include <algorithm>
#include <cstdint>

namespace hostir {

// Rows [start, start + rows) of chunk `index` when `extent` rows are cut into
// `count` chunks as torch.chunk cuts them: ceilDiv(extent, count) rows each,
// the last ones fewer, or none when they start past the end (10 rows in 4
// chunks: 3+3+3+1; 2 rows in 3 chunks: 1+1+0). How a sharded axis is laid
// out over its devices (chunk index = the device's position along the mesh
// dimension) and how a Stream split cuts a device's rows.
struct RowChunk {
  int64_t start = 0;
  int64_t rows = 0;
};

inline int64_t ceilDivRows(int64_t extent, int64_t count) {
  return (extent + count - 1) / count;
}

inline RowChunk rowChunk(int64_t extent, int64_t count, int64_t index) {
  const int64_t size = ceilDivRows(extent, count);
  const int64_t start = std::min(index * size, extent);
  return {start, std::min(start + size, extent) - start};
}

// Whether `count` torch.chunk pieces of `extent` are all the same size (the
// even layout every collective had before uneven shards).
inline bool splitsEvenly(int64_t extent, int64_t count) {
  return extent % count == 0;
}

}  // namespace hostir
