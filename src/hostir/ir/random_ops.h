#pragma once

#include <string>
#include <vector>

#include "hostir/ir/statement.h"

namespace hostir {

class TensorView;

// The distribution of a RandomOp (new values go at the end).
enum class RandomKind { Uniform, Normal };
// "uniform" or "normal" (the op's printed name).
std::string toString(RandomKind kind);

// out = a tensor of out's shape and floating dtype drawn from
// uniform [a, b) (torch.Tensor.uniform_) or normal with mean a and standard
// deviation b (normal_). Inputs: {a, b, extent_0, ...} or, with a seed,
// {a, b, seed, offset, extent_0, ...}; attribute 0: RandomKind, 1: 1 when
// seed and offset are given. Without them each run draws from torch's
// default CPU generator (torch.manual_seed makes runs reproducible, and
// every run draws new values, as torch's own ops); with them the values
// depend on (seed, offset) only: a generator seeded with both. Evaluated by
// ATen (no kernel lowering); never recomputed in another segment.
class RandomOp : public Expr {
  HOSTIR_DECLARE_EXPR(RandomOp)
  static void validate(const std::vector<Val*>& inputs, const std::vector<Attribute>& attributes);
  RandomKind kind() const {
    return static_cast<RandomKind>(attribute<int64_t>(0));
  }
  bool hasSeed() const {
    return attribute<int64_t>(1) != 0;
  }
  Val* a() const {
    return input(0);
  }
  Val* b() const {
    return input(1);
  }
  Val* seed() const {
    return hasSeed() ? input(2) : nullptr;
  }
  Val* offset() const {
    return hasSeed() ? input(3) : nullptr;
  }
  TensorView* out() const;
  std::string displayName() const override {
    return hostir::toString(kind());
  }
  std::vector<std::string> attributeNames() const override {
    return {"", "seeded"};
  }
};

// torch.empty(shape, dtype).uniform_(low, high) / .normal_(mean, std);
// seed and offset both null (torch's default generator) or both integer
// scalars. dtype a floating one.
TensorView* uniform(Val* low, Val* high, const std::vector<Val*>& shape, DataType dtype,
                    Val* seed = nullptr, Val* offset = nullptr);
TensorView* normal(Val* mean, Val* std, const std::vector<Val*>& shape, DataType dtype,
                   Val* seed = nullptr, Val* offset = nullptr);

}  // namespace hostir
