#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hostir/ir/fusion.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/statement.h"
#include "hostir/multidevice/collective_type.h"

namespace hostir {

class TensorView;

// The collectives a Communication can be (SendRecv is a one-to-one copy
// from the root, the sender, to the other member of the team).
using CommunicationType = CollectiveType;

// How a reducing collective combines the contributions of the team: the
// same enum as a fusion's reductions (ir/ops.h).
using ReduceOp = ReductionOpType;

// Whether a type needs a root device (Gather, Scatter, Reduce, Broadcast,
// SendRecv).
bool hasRoot(CommunicationType type);
// Whether a type combines contributions (Reduce, Allreduce, ReduceScatter).
bool isReduction(CommunicationType type);

// What a Communication does, beyond its two tensors. A field that is not
// given stays std::nullopt; Communication checks that exactly the fields its
// type needs are given. Meant for designated initializers:
// `CommunicationParams{.type = CommunicationType::Reduce, .team = {0, 1},
//                      .root = 0, .reduce_op = ReduceOp::Sum}`.
struct CommunicationParams {
  CommunicationType type = CommunicationType::Allgather;
  // Device ids taking part, in rank order inside the collective.
  std::vector<int64_t> team = {};
  // Device id (a member of team): where Gather/Reduce land, where
  // Scatter/Broadcast start, the sender of SendRecv.
  std::optional<int64_t> root = std::nullopt;
  std::optional<ReduceOp> reduce_op = std::nullopt;
  // ReduceScatter only: the axis of the input's shape that is split across
  // the team after the reduction.
  std::optional<int64_t> scattered_axis = std::nullopt;
  // Scatter only: every member holds the whole input (it is replicated on
  // the team's mesh), so each cuts its own piece and nothing crosses the
  // link. Derived from the input's sharding, not printed.
  bool every_member_holds_input = false;
};

// One collective over a team of devices, reading `in` and writing `out`
// (both symbolic: each rank binds its local shards at run time). Posting it
// is asynchronous; a Wait on it completes it.
//
// Layout: inputs {in}, outputs {out}; attributes, in order: type, team,
// root, reduce op, scattered axis, where an absent root / reduce op /
// scattered axis is stored as kNotGiven (-1). Expr::sameAs therefore
// compares every field.
class Communication : public Expr {
  HOSTIR_DECLARE_EXPR(Communication)
  static constexpr int64_t kNotGiven = -1;

  Communication(Fusion* container, TensorView* in, TensorView* out,
                const CommunicationParams& params);

  CommunicationType type() const {
    return static_cast<CommunicationType>(attribute<int64_t>(0));
  }
  const std::vector<int64_t>& team() const {
    return attribute<std::vector<int64_t>>(1);
  }
  bool hasRoot() const {
    return attribute<int64_t>(2) != kNotGiven;
  }
  // The root device id; an internal error when the type has none.
  int64_t root() const;
  bool hasReduceOp() const {
    return attribute<int64_t>(3) != kNotGiven;
  }
  ReduceOp reduceOp() const;
  bool hasScatteredAxis() const {
    return attribute<int64_t>(4) != kNotGiven;
  }
  int64_t scatteredAxis() const;
  TensorView* in() const;
  TensorView* out() const;

  // "Communication 3 (type=Allgather, team=(0 1), input=..., output=...)".
  std::string toString(int indent = 0) const override;
  // "Communication 3", how a Wait refers to it.
  std::string toInlineString() const override;
};

enum class P2PCommunicationType { Send, Recv };
std::string toString(P2PCommunicationType type);

// A point-to-point transfer of a whole buffer with one peer device. A Send
// reads the buffer (inputs {buffer, peer}); a Recv writes it (inputs {peer},
// outputs {buffer}). The peer is a Val so that it may depend on the loop
// index or the rank. Attribute 0: P2PCommunicationType.
class P2PCommunication : public Expr {
  HOSTIR_DECLARE_EXPR(P2PCommunication)
  P2PCommunication(Fusion* container, P2PCommunicationType type, TensorView* buffer, Val* peer);

  P2PCommunicationType type() const {
    return static_cast<P2PCommunicationType>(attribute<int64_t>(0));
  }
  TensorView* buffer() const;
  Val* peer() const;

  // "P2PCommunication 4 (type=send, buffer=T0_g_float[...], peer=i5)".
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;
};

// Opens a group of communications that the runtime posts together (one
// batched call) when the matching EndCoalescing is reached.
class StartCoalescing : public Expr {
  HOSTIR_DECLARE_EXPR(StartCoalescing)
  explicit StartCoalescing(Fusion* container);
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;
};

// Closes a coalesced group; a Wait on it completes the whole group.
class EndCoalescing : public Expr {
  HOSTIR_DECLARE_EXPR(EndCoalescing)
  explicit EndCoalescing(Fusion* container);
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;
};

// Completes a posted Communication, P2PCommunication or coalesced group
// (EndCoalescing), in order on the current stream.
//
// Pairing: the n-th run of a Wait completes the n-th run of its post. So a
// post has at most one Wait, which follows it and runs as often: in the
// same loops, or in loops of its own over the same iterations (a prefetch
// loop posts chunk i, a compute loop's iteration i waits for it).
// verifyHostProgram checks it; the evaluator completes posts in that order.
//
// The Wait refers to the communication expr itself, not to its tensors: a
// Send has no output and one tensor may be communicated several times, so
// only the expr identifies the posted work unambiguously (the runtime keys
// work handles by expr). The reference is not an operand (Expr operands are
// Vals), so it is held here and remapped by cloneExtrasInto; build a Wait
// with the constructor taking the communication.
class Wait : public Expr {
  HOSTIR_DECLARE_EXPR(Wait)
  Wait(Fusion* container, Expr* communication);

  Expr* communication() const;

  bool sameAs(const Expr* other) const override;
  void cloneExtrasInto(Expr* clone, IrCloner& cloner) const override;
  // "Wait Communication 3".
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  Expr* communication_ = nullptr;
};

}  // namespace hostir
