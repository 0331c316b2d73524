#include "hostir/runtime/deferred_memory.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>

#include <c10/core/StorageImpl.h>

#include "hostir/runtime/buffer_pool.h"
#include "hostir/runtime/streams/allocation_site.h"
#include "hostir/runtime/tensor_memory.h"

namespace hostir {

namespace {

// The context of a deferred storage's null DataPtr, until it is materialized.
struct Pending {
  int64_t bytes = 0;
  BufferPool* pool = nullptr;
  bool zeroed = false;             // deferredZeros: filled with zeros when materialized
  std::string caller_site;         // tracing: where the host made it
  std::vector<std::string> names;  // tracing: what the host bound to it
};

void deletePending(void* context) {
  delete static_cast<Pending*>(context);
}

// The context of a materialized one: the memory it runs over (a pooled
// buffer's storage, given back to the pool by letting go of it).
struct Backing {
  explicit Backing(c10::Storage storage) : memory(std::move(storage)) {}
  c10::Storage memory;
  std::atomic<int64_t> writes{0};
  std::atomic<bool> escaped{false};
};

void deleteBacking(void* context) {
  delete static_cast<Backing*>(context);
}

// Guards every deferred storage's DataPtr: the host binds and names while
// streams materialize.
std::mutex& deferredMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

c10::Storage newMemory(const Pending& pending) {
  if (pending.pool != nullptr) {
    return pending.pool->takeMemory(pending.bytes);
  }
  return at::empty({pending.bytes}, at::TensorOptions().dtype(at::kByte)).storage();
}

// Under deferredMutex().
void materializeLocked(c10::StorageImpl& storage) {
  auto* pending = static_cast<Pending*>(storage.data_ptr().get_context());
  c10::Storage memory;
  {
    const runtime::AllocationSite site(
        pending->caller_site.empty() ? nullptr : &pending->caller_site,
        runtime::AllocationSite::Kind::kCaller);
    memory = newMemory(*pending);
    if (pending->zeroed) {
      // Under the lock: no other work item may see the memory before it is
      // zero. On the stream that first touches it, not on the host.
      std::memset(memory.data(), 0, static_cast<size_t>(pending->bytes));
    }
    for (const std::string& name : pending->names) {
      runtime::nameTensorMemory(memory.data(), name);
    }
  }
  void* data = memory.data();
  // Destroys the Pending.
  storage.set_data_ptr_noswap(
      c10::DataPtr(data, new Backing(std::move(memory)), &deleteBacking, c10::Device(c10::kCPU)));
}

}  // namespace

namespace {

at::Tensor deferredTensor(const std::vector<int64_t>& shape, at::ScalarType dtype, BufferPool* pool,
                          bool zeroed) {
  auto pending = std::make_unique<Pending>();
  pending->bytes = static_cast<int64_t>(c10::multiply_integers(shape) * c10::elementSize(dtype));
  pending->pool = pool;
  pending->zeroed = zeroed;
  if (runtime::recordingAllocationSites()) {
    pending->caller_site = runtime::currentCallerSite();
  }
  const int64_t bytes = pending->bytes;
  c10::DataPtr none(nullptr, pending.release(), &deletePending, c10::Device(c10::kCPU));
  auto storage = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), bytes,
                                                       std::move(none), /*allocator=*/nullptr,
                                                       /*resizable=*/false);
  at::Tensor tensor = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(std::move(storage)), c10::DispatchKeySet(c10::DispatchKey::CPU),
      caffe2::TypeMeta::fromScalarType(dtype));
  tensor.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
  return tensor;
}

}  // namespace

at::Tensor deferredEmpty(const std::vector<int64_t>& shape, at::ScalarType dtype,
                         BufferPool* pool) {
  return deferredTensor(shape, dtype, pool, /*zeroed=*/false);
}

at::Tensor deferredZeros(const std::vector<int64_t>& shape, at::ScalarType dtype,
                         BufferPool* pool) {
  return deferredTensor(shape, dtype, pool, /*zeroed=*/true);
}

void materialize(const at::Tensor& tensor, bool written) {
  if (!tensor.defined() || !tensor.has_storage()) {
    return;
  }
  c10::StorageImpl& storage = *tensor.storage().unsafeGetStorageImpl();
  std::lock_guard<std::mutex> lock(deferredMutex());
  const c10::DeleterFnPtr deleter = storage.data_ptr().get_deleter();
  if (deleter == &deletePending) {
    materializeLocked(storage);
  } else if (deleter != &deleteBacking) {
    return;
  }
  if (written) {
    static_cast<Backing*>(storage.data_ptr().get_context())->writes.fetch_add(1);
  }
}

void materializeWritten(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& tensor : tensors) {
    materialize(tensor, /*written=*/true);
  }
}

void materializeRead(const std::vector<at::Tensor>& tensors) {
  for (const at::Tensor& tensor : tensors) {
    materialize(tensor);
  }
}

bool isDeferred(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.has_storage()) {
    return false;
  }
  std::lock_guard<std::mutex> lock(deferredMutex());
  return tensor.storage().data_ptr().get_deleter() == &deletePending;
}

void nameMemoryOf(const at::Tensor& tensor, const std::string& name) {
  if (!runtime::tracingTensorMemory() || !tensor.defined() || !tensor.has_storage()) {
    return;
  }
  std::lock_guard<std::mutex> lock(deferredMutex());
  const c10::DataPtr& data = tensor.storage().data_ptr();
  if (data.get_deleter() == &deletePending) {
    static_cast<Pending*>(data.get_context())->names.push_back(name);
    return;
  }
  runtime::nameTensorMemory(data.get(), name);
}

std::optional<int64_t> runBufferWrites(const c10::StorageImpl* storage) {
  std::lock_guard<std::mutex> lock(deferredMutex());
  const c10::DataPtr& data = storage->data_ptr();
  if (data.get_deleter() != &deleteBacking) {
    return std::nullopt;
  }
  const auto* backing = static_cast<const Backing*>(data.get_context());
  if (backing->escaped.load()) {
    return std::nullopt;
  }
  return backing->writes.load();
}

void markEscaped(const at::Tensor& tensor) {
  if (!tensor.defined() || !tensor.has_storage()) {
    return;
  }
  std::lock_guard<std::mutex> lock(deferredMutex());
  const c10::DataPtr& data = tensor.storage().data_ptr();
  if (data.get_deleter() == &deleteBacking) {
    static_cast<Backing*>(data.get_context())->escaped.store(true);
  }
}

}  // namespace hostir
