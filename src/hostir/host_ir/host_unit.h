#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hostir/host_ir/segment_engine.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

// A compute segment of the host program: owns the segment's Fusion. It has
// no operands and is not itself part of the program order; a PostOnStream
// runs it on given Vals. Cloning deep-copies the fusion.
class HostUnit : public Expr {
  HOSTIR_DECLARE_EXPR(HostUnit)
  HostUnit(Fusion* container, std::unique_ptr<Fusion> fusion);

  Fusion* fusion() const;

  // The engine that runs the segment, once the compile stage decided it
  // (runtime/segment_engines.h); none in a program only lowered.
  const std::optional<SegmentEngine>& engine() const {
    return engine_;
  }
  void setEngine(SegmentEngine engine) {
    engine_ = std::move(engine);
  }

  // Same fusion text (the segment fusions print the same) and engine.
  bool sameAs(const Expr* other) const override;
  void cloneExtrasInto(Expr* clone, IrCloner& cloner) const override;
  // "HostUnit 0:" (with an engine "HostUnit 0 (compiled kernel ...):")
  // followed by the fusion, indented one level more.
  std::string toString(int indent = 0) const override;
  // "HostUnit 0".
  std::string toInlineString() const override;

 private:
  std::unique_ptr<Fusion> fusion_;
  std::optional<SegmentEngine> engine_;
};

// Runs a HostUnit on the current stream: the segment fusion's inputs are
// bound to `inputs` and its outputs to `outputs` (Vals of the host program,
// matched by position). Layout: inputs, outputs as given; the HostUnit is
// held as a reference (not an operand) and remapped on cloning.
class PostOnStream : public Expr {
  HOSTIR_DECLARE_EXPR(PostOnStream)
  PostOnStream(Fusion* container, HostUnit* host_unit, std::vector<Val*> inputs,
               std::vector<Val*> outputs);

  HostUnit* hostUnit() const;

  // Executable variants (specialize_encodings): the devices that run each
  // copy of the HostUnit. Empty: every device runs hostUnit().
  struct Variant {
    HostUnit* unit;
    std::vector<int64_t> devices;
  };
  const std::vector<Variant>& variants() const {
    return variants_;
  }
  void setVariants(std::vector<Variant> variants);
  // The copy `device` runs: its variant's, else hostUnit().
  HostUnit* hostUnitFor(int64_t device) const;

  bool sameAs(const Expr* other) const override;
  void cloneExtrasInto(Expr* clone, IrCloner& cloner) const override;
  // With variants: "PostOnStream (HostUnit 3 on (0 2) | HostUnit 9 on (1 3), inputs=...".
  // "PostOnStream (HostUnit 0, inputs=(T0_g_float[...]), outputs=(T1_g_float[...]))".
  std::string toString(int indent = 0) const override;

 private:
  HostUnit* host_unit_ = nullptr;
  std::vector<Variant> variants_;
};

}  // namespace hostir
