#include "hostir/runtime/buffer_pool.h"

#include "hostir/runtime/environment_count.h"

namespace hostir {

int64_t bufferPoolLimitBytes() {
  return countFromEnvironment("HOSTIR_BUFFER_POOL_MB", 2048, 0, int64_t{1} << 30,
                              "MiB the buffer pool may hold between runs (0: off)")
         << 20;
}

at::Tensor BufferPool::take(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  auto found = free_.find(Key{dtype, shape});
  at::Tensor buffer;
  if (found != free_.end() && !found->second.empty()) {
    buffer = std::move(found->second.back());
    found->second.pop_back();
    free_bytes_ -= static_cast<int64_t>(buffer.nbytes());
    ++reused_;
  } else {
    buffer = at::empty(shape, at::TensorOptions().dtype(dtype));
  }
  if (static_cast<int64_t>(buffer.nbytes()) >= kMinBytes) {
    handed_out_.emplace_back(buffer, Key{dtype, shape});
  }
  return buffer;
}

void BufferPool::recycle() {
  const int64_t limit = bufferPoolLimitBytes();
  // What the last run did not ask for is released: the pool holds the last
  // run's buffers only, so sizes a program no longer uses do not stay.
  free_.clear();
  free_bytes_ = 0;
  for (auto& [buffer, key] : handed_out_) {
    const auto bytes =
        static_cast<int64_t>(c10::multiply_integers(key.second) * c10::elementSize(key.first));
    // One reference to the memory: this list's. An output the caller
    // kept, a view of it, or queued work holding it has another.
    if (buffer.storage().use_count() != 1 || buffer.use_count() != 1 ||
        static_cast<int64_t>(buffer.storage().nbytes()) < bytes || free_bytes_ + bytes > limit) {
      continue;
    }
    // Not the tensor the caller had: its autograd history, or a shape an
    // in-place op gave it, would reach the next run (a grad_fn makes an
    // `out=` op refuse it). The same memory, as it was handed out.
    at::Tensor fresh = at::empty({0}, at::TensorOptions().dtype(key.first));
    fresh.set_(buffer.storage(), 0, key.second);
    buffer.reset();
    free_bytes_ += bytes;
    free_[key].push_back(std::move(fresh));
  }
  handed_out_.clear();
}

}  // namespace hostir
