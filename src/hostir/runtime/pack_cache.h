#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "hostir/ir/encoding.h"

namespace hostir {

// The packed-weight cache (docs/kernels.md, "GEMMs"): a GEMM right operand
// packed into a oneDNN layout, remembered so a weight passed to every run is
// packed on the first and reused after, and never read stale.
//
// A hit needs the operand's bits to equal the bits it was packed from: an
// exact comparison (memcmp) with a plain copy kept beside the packed one.
// Nothing weaker notices every write a user can make: a write through
// `.data` bumps another tensor's version counter, a numpy or from_blob alias
// or a collective writing into the memory bumps none. The comparison costs
// ~0.25x a repack (bench_pack_cache, docs/performance.md) and the copy one
// more plain tensor of memory per cached operand.
//
// A buffer of a running program (a GEMM's computed right operand,
// deferred_memory.h) keeps no snapshot: only the program's own work items
// write it, and they count their writes, so an equal count is a hit without
// comparing; the entry goes with the buffer (a computed operand's bits are
// new every run, and its snapshot was as large as itself).
//
// Within a run (a ReadOnlyRunInputs scope) a program input is compared once:
// nothing may write a run's inputs while it runs (outputs may not alias
// them), so the chunks' GEMMs on one weight after the first reuse it as is.

// packMatmulRhs(plain, layout), reused while `plain`'s memory (storage,
// offset, sizes, strides) and its bits are those it was packed from; a
// rewrite of the same memory replaces the entry, freeing the storage drops it.
at::Tensor packMatmulRhsCached(const at::Tensor& plain, const Layout& layout);

// Whether a GEMM should read `plain` as it is rather than packed into
// `layout`: true for a running program's own buffer (runBufferWrites) that
// no GEMM has read since its last write, and no packing of which is cached
// — a weight gradient's activation, x or gelu(h), read by one GEMM per
// step, where packing first costs a pass over it and a packed copy alive
// until the buffer goes (docs/kernels.md, "GEMMs"). It remembers the read,
// so a second read of the same bits (each chunk's GEMM on one computed
// operand) answers false and packs. False for any other tensor.
bool readOnceUnpacked(const at::Tensor& plain, const Layout& layout);

// While one lives, `inputs` are a run's inputs, unwritten until it ends: a
// packed copy of (a view of) one is compared with it once per scope.
// Scopes may nest and overlap (ranks in threads); a storage stays read-only
// while any scope that holds it lives.
class ReadOnlyRunInputs {
 public:
  explicit ReadOnlyRunInputs(const std::vector<at::Tensor>& inputs);
  ~ReadOnlyRunInputs();
  ReadOnlyRunInputs(const ReadOnlyRunInputs&) = delete;
  ReadOnlyRunInputs& operator=(const ReadOnlyRunInputs&) = delete;

 private:
  std::vector<const void*> storages_;
};

// Frees the entries whose operand's memory is gone (packMatmulRhsCached
// drops them only at its next call): the measure of a step's peak memory
// calls it first, so that no earlier step's entries are freed inside the
// step and subtracted from its figure (docs/training.md, "Peak memory of a
// step"). Returns how many it dropped.
int64_t dropStalePackCacheEntries();

// Calls of packMatmulRhsCached that reused a packed tensor (for tests).
int64_t packCacheHits();
// Of those, the ones that compared the operand's bits (for tests).
int64_t packCacheComparisons();
// Packed tensors the cache holds (for tests).
int64_t packCacheEntries();

}  // namespace hostir
