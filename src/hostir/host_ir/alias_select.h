#pragma once

#include <cstdint>
#include <string>

#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

class IterDomain;
class TensorView;

// Binds `out` to the view in.select(axis, index): writing `out` writes
// `in`. The output is bound, not defined (definesOutputs() is false), so the
// same buffer can be written through several views, e.g. one per loop
// iteration, while `out` keeps the definition of whatever op fills it.
// Layout: inputs {in, index}, outputs {out}; attribute 0: axis, a position
// in the input's shape (logical axes without reductions).
class HirAliasSelect : public Expr {
  HOSTIR_DECLARE_EXPR(HirAliasSelect)
  HirAliasSelect(Fusion* container, TensorView* in, TensorView* out, int64_t axis, Val* index);

  TensorView* in() const;
  TensorView* out() const;
  Val* index() const {
    return input(1);
  }
  int64_t axis() const {
    return attribute<int64_t>(0);
  }
  // The input's IterDomain at axis().
  IterDomain* selectedAxis() const;
  bool definesOutputs() const override {
    return false;
  }

  // "T2_l_float[iS4{i2}]\n   = HirAliasSelect( T0_g_float[iS0{i0}, iS1{i2}],
  // axis = iS0{i0}, index = StreamIdx )".
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
