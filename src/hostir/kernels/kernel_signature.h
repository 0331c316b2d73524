#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"

namespace hostir {

class TensorView;

// A scalar a compiled kernel receives at run time, evaluated by the caller:
// either a scalar Val of the segment (a scalar input, a slice bound, a
// select index, a fill value) or the extent of one axis of a tensor's shape
// on this device. Extents are arguments, not constants, so one kernel serves
// every size of its segment.
struct KernelScalarArgument {
  enum class Kind { Value, Extent };
  Kind kind = Kind::Value;
  const Val* value = nullptr;          // Kind::Value
  const TensorView* tensor = nullptr;  // Kind::Extent
  int64_t axis = 0;                    // Kind::Extent: axis of tensor's shape
  // The kernel takes it as an int64 (extents, indices, integer scalars) or as
  // a double (floating-point scalars; bool scalars are passed as int64).
  bool floating = false;
};

// What a segment's kernel is, independent of any engine: whether it can be
// compiled and why not, its arguments in call order (tensor inputs, then
// scalars, then outputs), and its canonical form, the cache key's content.
// Two segments that differ only in their Vals' names or their extents have
// the same canonical form.
struct KernelSignature {
  // Set when the segment cannot be compiled: the cause, naming the op.
  std::optional<std::string> unsupported;
  std::vector<const TensorView*> tensor_inputs;  // in the fusion's input order
  std::vector<KernelScalarArgument> scalars;
  std::vector<const TensorView*> outputs;  // the fusion's outputs, in order
  std::string canonical;

  // Index into `scalars` of a Value argument / an Extent argument; adds it
  // the first time.
  size_t valueArgument(const Val* value);
  size_t extentArgument(const TensorView* tensor, int64_t axis);
};

// Whether the kernel of `fusion` may refuse its data at run time: float32
// sin and cos fail the kernel with a requirement past their exact range
// (vector_trig.h), which the caller answers by running the segment through
// ATen. Only such a kernel keeps the engine's run-time checks
// (docs/kernels.md, "Checks").
bool mayRefuseData(const Fusion& fusion);

// Analyzes `fusion` (a segment) for compilation. Never throws for an
// unsupported op: it records why in `unsupported`.
KernelSignature analyzeSegment(const Fusion& fusion);

}  // namespace hostir
