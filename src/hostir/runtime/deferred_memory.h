#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace hostir {

class BufferPool;

// Tensors whose memory comes when a stream reaches the work that uses them
// (docs/training.md, "Peak memory of a step"). The host walks a program
// ahead of its streams and decides every buffer as it goes: sizes, views,
// which work item reads and writes what. Were the memory made there too, the
// host would hold the whole program's buffers at once, long before the
// streams reach them, and queued work holds them until it has run. A
// deferred tensor has its sizes, strides and storage (so the host makes
// views of it, hands it to queued work, binds it) but no memory: the first
// work item that touches it calls materialize(), which takes the memory
// from the pool (or allocates it) then, for the storage and so for every
// view of it. The memory goes back when the storage's last reference goes,
// as any tensor's does.
//
// Only code that runs on a stream (or after the run's streams drained)
// may read a deferred tensor's data, after materialize(): every work item
// of the evaluator, its segments and its collectives calls it on the tensors
// it touches. Thread-safe.

// A contiguous tensor of `shape`, its memory deferred: `bytes` of `pool`
// (BufferPool::takeMemory) when materialized, else of c10's allocator.
at::Tensor deferredEmpty(const std::vector<int64_t>& shape, at::ScalarType dtype, BufferPool* pool);
// The same, all zeros once materialized: the zeroing happens on the stream
// whose work first touches it, in memory the pool may have kept warm, not on
// the host over fresh pages (a 32 MiB at::zeros on the host cost the
// pipelined MLP backward 160 ms of page faults per step on a VM:
// docs/performance.md, "Why hostir's communication alone ran below the link").
at::Tensor deferredZeros(const std::vector<int64_t>& shape, at::ScalarType dtype, BufferPool* pool);
// Gives `tensor`'s storage its memory if it has none yet; `written`: the
// caller is about to write it (counted: runBufferWrites). Undefined and
// ordinary tensors are left as they are.
void materialize(const at::Tensor& tensor, bool written = false);
void materializeWritten(const std::vector<at::Tensor>& tensors);
void materializeRead(const std::vector<at::Tensor>& tensors);
// Whether `tensor`'s storage is deferred and has no memory yet.
bool isDeferred(const at::Tensor& tensor);

// Tracing tensor memory (tensor_memory.h): names the memory of `tensor`
// (nameTensorMemory), now if it has some, else when it is materialized.
void nameMemoryOf(const at::Tensor& tensor, const std::string& name);

// For a storage a host program made (deferredEmpty) and materialized, still
// the program's own: how many work items wrote it so far. Nothing else
// writes such a storage while it is the program's, so equal counts mean the
// same bits (the pack cache relies on it). nullopt for any other storage,
// and for one marked escaped.
std::optional<int64_t> runBufferWrites(const c10::StorageImpl* storage);
// `tensor`'s memory leaves the program (a run's output, which the caller may
// write): runBufferWrites no longer vouches for it.
void markEscaped(const at::Tensor& tensor);

}  // namespace hostir
