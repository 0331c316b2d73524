#pragma once

#include <string>

#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"
#include "hostir/ir/types.h"

namespace hostir {

class TensorView;

// Allocates `buffer` (its output) with the shape given by its symbolic
// extents. It does not become the buffer's definition: the op that later
// fills the buffer stays its definition. Attributes: memory type, zero_init.
class Allocate : public Expr {
  HOSTIR_DECLARE_EXPR(Allocate)
  // Memory type taken from the buffer.
  Allocate(Fusion* container, TensorView* buffer, bool zero_init = false);
  Allocate(Fusion* container, TensorView* buffer, MemoryType memory_type, bool zero_init);

  TensorView* buffer() const;
  MemoryType memoryType() const {
    return static_cast<MemoryType>(attribute<int64_t>(0));
  }
  bool zeroInit() const {
    return attribute<bool>(1);
  }
  bool definesOutputs() const override {
    return false;
  }

  // The number of elements this rank allocates, as an expression of the
  // extents: the allocation domain without reduction and device axes, e.g.
  // "( i0 * i2 )"; "1" for a scalar tensor.
  std::string sizeString() const;
  // "T1_g_float[...] = ALLOCATE(mem_type=global,
  // size=( i0 * i2 ), zero_init=false)" on one line.
  std::string toString(int indent = 0) const override;
  // "Allocate(T1_g_float[...])".
  std::string toInlineString() const override;
};

// Releases `buffer` (its only input) once its queued uses are done.
class Deallocate : public Expr {
  HOSTIR_DECLARE_EXPR(Deallocate)
  Deallocate(Fusion* container, TensorView* buffer);

  TensorView* buffer() const;
  // "Deallocate T1_g_float[...]".
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
