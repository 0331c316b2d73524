#pragma once

#include <utility>

#include "hostir/ir/statement.h"

namespace hostir {

// One axis of a tensor: an extent, whether it iterates, reduces or
// broadcasts, and how it is parallelized.
class IterDomain : public Val {
 public:
  IterDomain(Fusion* container, Val* extent, IterType iter_type = IterType::Iteration,
             ParallelType parallel_type = ParallelType::Serial);

  Val* extent() const {
    return extent_;
  }
  IterType iterType() const {
    return iter_type_;
  }
  ParallelType getParallelType() const {
    return parallel_type_;
  }
  void parallelize(ParallelType parallel_type);

  bool isReduction() const {
    return iter_type_ == IterType::Reduction;
  }
  bool isBroadcast() const {
    return iter_type_ == IterType::Broadcast;
  }
  bool isStream() const {
    return parallel_type_ == ParallelType::Stream;
  }
  bool isDeviceDim() const {
    return hostir::isDeviceDim(parallel_type_);
  }

  // A fresh IterDomain with the same extent and iter type (Serial).
  IterDomain* cloneWithoutParallelization(IterType iter_type) const;

  bool sameAs(const Val* other) const override;
  Val* cloneInto(IrCloner& cloner) const override;
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

  // Transforms. An inner split by f gives {ceilDiv(e, f), f}; an outer split
  // by f gives {f, ceilDiv(e, f)}. Both record a Split expr.
  static std::pair<IterDomain*, IterDomain*> split(IterDomain* in, Val* factor, bool inner_split);
  static IterDomain* merge(IterDomain* outer, IterDomain* inner);

 private:
  Val* extent_;
  IterType iter_type_;
  ParallelType parallel_type_;
};

// in -> (outer, inner). Inputs: {in, factor}; attribute: inner_split.
class Split : public Expr {
  HOSTIR_DECLARE_EXPR(Split)
  IterDomain* in() const {
    return input(0)->as<IterDomain>();
  }
  Val* factor() const {
    return input(1);
  }
  IterDomain* outer() const {
    return output(0)->as<IterDomain>();
  }
  IterDomain* inner() const {
    return output(1)->as<IterDomain>();
  }
  bool innerSplit() const {
    return attribute<bool>(0);
  }
  std::string toString(int indent = 0) const override;
};

// (outer, inner) -> out.
class Merge : public Expr {
  HOSTIR_DECLARE_EXPR(Merge)
  IterDomain* outer() const {
    return input(0)->as<IterDomain>();
  }
  IterDomain* inner() const {
    return input(1)->as<IterDomain>();
  }
  IterDomain* out() const {
    return output(0)->as<IterDomain>();
  }
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
