#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class ExpressionEvaluator;

// Run-time checks of a fusion against concrete inputs that the lowered host
// program cannot make by itself. A stream loop slices its operands by the
// extent of the *output*, so an operand larger than the fusion says (a
// stream-parallel `add` of a [4, 4] and an [8, 4] input) would be read in
// part, silently, and a split factor of 0 would leave the output unwritten.
// So, once per input signature (dtypes, sizes, scalar values), before the
// program runs:
//
//  - every split factor (Stream or DID split of any tensor) is positive;
//  - every op of the fusion is evaluated by ATen on meta tensors (sizes and
//    dtypes, no data): what the same fusion without Stream axes would
//    reject, this rejects, naming the op;
//  - every tensor's evaluated extents are non-negative, its element count
//    fits in 64 bits, and the sizes ATen computes for an op's output are
//    the extents the fusion gives it (what its consumers' loops use).
//
// Errors are hostir::Error, cause first, then the op and its operands'
// sizes. Thread-safe; the cost after the first run of a signature is one
// set lookup.
class FusionChecks {
 public:
  // Reads `fusion`, which outlives this object.
  explicit FusionChecks(const Fusion& fusion);

  // Throws hostir::Error if `inputs` (already validated against the
  // program's inputs, whose messages come first) do not fit the fusion.
  // The first run of each input signature (`signature` is
  // inputSignature(inputs)) checks; later ones return at once.
  void check(const std::vector<PolymorphicValue>& inputs, const std::vector<int64_t>& signature);

  // How many distinct signatures have been checked (for tests).
  size_t checkedSignatures() const;

 private:
  void checkOnce(const std::vector<PolymorphicValue>& inputs);

  const Fusion& fusion_;
  mutable std::mutex mutex_;
  std::set<std::vector<int64_t>> checked_;
};

// Throws hostir::Error if a split factor of any tensor of `fusion` that `ee`
// can evaluate is not positive, naming the tensor and the split.
void checkSplitFactors(const Fusion& fusion, ExpressionEvaluator& ee);

// The one key of a run's inputs (executor.h): per input, its kind, dtype,
// sizes (tensors) or value bits (scalars). FusionChecks keys its cache by it;
// a sharded run's ranks compare its hash.
std::vector<int64_t> inputSignature(const std::vector<PolymorphicValue>& inputs);

}  // namespace hostir
