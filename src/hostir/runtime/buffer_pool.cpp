#include "hostir/runtime/buffer_pool.h"

#include "hostir/runtime/environment_count.h"

namespace hostir {

int64_t bufferPoolLimitBytes() {
  return countFromEnvironment("HOSTIR_BUFFER_POOL_MB", 2048, 0, int64_t{1} << 30,
                              "MiB the buffer pool may hold between runs (0: off)")
         << 20;
}

at::Tensor BufferPool::take(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  const auto bytes = static_cast<int64_t>(c10::multiply_integers(shape) * c10::elementSize(dtype));
  at::Tensor buffer;
  auto found = free_.find(bytes);
  if (bytes >= kMinBytes && found != free_.end()) {
    buffer = at::empty({0}, at::TensorOptions().dtype(dtype));
    buffer.set_(std::move(found->second), 0, shape);
    free_bytes_ -= found->first;
    free_.erase(found);
    ++reused_;
  } else {
    buffer = at::empty(shape, at::TensorOptions().dtype(dtype));
  }
  if (bytes >= kMinBytes) {
    handed_out_.push_back(buffer.storage());
  }
  return buffer;
}

void BufferPool::recycle() {
  const int64_t limit = bufferPoolLimitBytes();
  // What the last run did not ask for is released: the pool holds the last
  // run's buffers only, so sizes a program no longer uses do not stay.
  free_.clear();
  free_bytes_ = 0;
  for (c10::Storage& memory : handed_out_) {
    const auto bytes = static_cast<int64_t>(memory.nbytes());
    // One reference to the memory: this list's. An output the caller kept,
    // a view of it, or queued work holding it has another.
    if (memory.use_count() != 1 || free_bytes_ + bytes > limit) {
      continue;
    }
    free_bytes_ += bytes;
    free_.emplace(bytes, std::move(memory));
  }
  handed_out_.clear();
}

}  // namespace hostir
