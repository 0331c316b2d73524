#pragma once

#include <cstdint>
#include <functional>

namespace hostir::runtime {

// The bytes of CPU tensor memory a process holds, counted at c10's CPU
// allocator (every at::empty on the CPU, hostir's and torch's alike), for
// reporting the peak memory of a training step (docs/training.md, "Peak
// memory of a step"). Memory allocated outside that allocator (oneDNN's and
// Gloo's own, malloc'd small objects) is not counted.
//
// countTensorMemory() puts a counting allocator in front of c10's CPU
// allocator, once per process; tensors allocated before it are not counted
// (neither when made nor when freed). Thread-safe.
void countTensorMemory();
bool countingTensorMemory();
// Bytes allocated since counting started and not freed yet.
int64_t liveTensorBytes();
// The most liveTensorBytes() reached since the last resetPeakTensorBytes().
int64_t peakTensorBytes();
void resetPeakTensorBytes();

// Counting on, the peak live bytes while `body` runs above those live before
// it: what `body` needed at most on top of what existed already.
int64_t peakTensorBytesOf(const std::function<void()>& body);

}  // namespace hostir::runtime
