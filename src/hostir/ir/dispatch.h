#pragma once

#include "hostir/ir/error.h"

namespace hostir {

// Every Expr kind of the core IR. A layer above (host IR) declares its own
// kinds and its own dispatcher (host_ir/host_dispatch.h); this layer names
// none of them.
#define HOSTIR_FOR_ALL_FUSION_EXPRS(F) \
  F(LoadStoreOp)                       \
  F(UnaryOp)                           \
  F(BinaryOp)                          \
  F(ReductionOp)                       \
  F(BroadcastOp)                       \
  F(MatmulOp)                          \
  F(LinearOp)                          \
  F(SelectOp)                          \
  F(SliceOp)                           \
  F(PermuteOp)                         \
  F(ReshapeOp)                         \
  F(FullOp)                            \
  F(WhereOp)                           \
  F(IotaOp)                            \
  F(PadOp)                             \
  F(CatOp)                             \
  F(GatherOp)                          \
  F(RandomOp)                          \
  F(ScanOp)                            \
  F(ScatterOp)                         \
  F(ScatterAddOp)                      \
  F(Split)                             \
  F(Merge)

class Expr;
#define HOSTIR_FORWARD_DECLARE(T) class T;
HOSTIR_FOR_ALL_FUSION_EXPRS(HOSTIR_FORWARD_DECLARE)
#undef HOSTIR_FORWARD_DECLARE

// Opt-in visitor: every kind a subclass does not handle is an error naming it.
class OptInDispatch {
 public:
  virtual ~OptInDispatch() = default;
  void dispatch(const Expr* expr);

#define HOSTIR_DECLARE_HANDLE(T) virtual void handle(const T* expr);
  HOSTIR_FOR_ALL_FUSION_EXPRS(HOSTIR_DECLARE_HANDLE)
#undef HOSTIR_DECLARE_HANDLE

  // The extension point for kinds of an upper layer: such a node's accept()
  // calls it when `this` is not that layer's dispatcher, which makes the
  // node unhandled here (an error, or skipped by an opt-out visitor).
  void handleOtherLayerKind(const Expr* expr) {
    unhandled(expr);
  }

 protected:
  // Called for kinds without an override.
  virtual void unhandled(const Expr* expr);
};

// Opt-out visitor: kinds a subclass does not handle are skipped.
class OptOutDispatch : public OptInDispatch {
 protected:
  void unhandled(const Expr* /*expr*/) override {}
};

}  // namespace hostir
