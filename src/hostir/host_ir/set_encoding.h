#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/encoding.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

class TensorView;

// Per-device concrete layouts of an encoded host tensor, as the
// specialize_encodings pass resolved them: device d holds the data in
// layoutFor(d). Stored as attributes (devices, tiles, n axes) so sameAs,
// cloning and printing need no extra code.
struct DeviceLayouts {
  std::vector<int64_t> devices;
  std::vector<Layout> layouts;
};

// Converts the plain tensor `in` into `out` (same shape, carrying an
// encoding) in the layout of the device that runs it: each rank packs its
// own data with its own target. The layouts per device are printed; a
// device without an entry resolves `out`'s encoding with its own target at
// run time. Layout: inputs {in}, outputs {out}; attributes: devices, tiles
// (0 = identity), n axes.
class SetEncoding : public Expr {
  HOSTIR_DECLARE_EXPR(SetEncoding)
  SetEncoding(Fusion* container, TensorView* in, TensorView* out,
              const DeviceLayouts& layouts = {});
  TensorView* in() const;
  TensorView* out() const;
  DeviceLayouts deviceLayouts() const;
  // The layout the pass chose for `device`, if any.
  std::optional<Layout> layoutFor(int64_t device) const;
  // "T3_g_float[...]#matmul_rhs\n   = SetEncoding( T1_g_float[...],
  // layouts = (0: BA16a64b(n=0), 1: identity) )".
  std::string toString(int indent = 0) const override;
};

// The inverse: `in` (encoded, in layoutFor(device) or this device's
// resolution) back to the plain row-major `out`. Same layout of operands
// and attributes as SetEncoding.
class UnsetEncoding : public Expr {
  HOSTIR_DECLARE_EXPR(UnsetEncoding)
  UnsetEncoding(Fusion* container, TensorView* in, TensorView* out,
                const DeviceLayouts& layouts = {});
  TensorView* in() const;
  TensorView* out() const;
  DeviceLayouts deviceLayouts() const;
  std::optional<Layout> layoutFor(int64_t device) const;
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
