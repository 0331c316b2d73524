#pragma once

#include "hostir/ir/error.h"

namespace hostir {

// Every Expr kind, fusion ops first, then host IR nodes. Host IR classes are
// only forward-declared here; they live in host_ir/.
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
  F(Split)                             \
  F(Merge)

#define HOSTIR_FOR_ALL_HOST_EXPRS(F) \
  F(HostUnit)                        \
  F(PostOnStream)                    \
  F(LaunchKernel)                    \
  F(Allocate)                        \
  F(Deallocate)                      \
  F(ForLoop)                         \
  F(GetCurrentStream)                \
  F(SetCurrentStream)                \
  F(Synchronize)                     \
  F(HirAliasSelect)                  \
  F(Communication)                   \
  F(P2PCommunication)                \
  F(Wait)                            \
  F(StartCoalescing)                 \
  F(EndCoalescing)                   \
  F(SetEncoding)                     \
  F(UnsetEncoding)

#define HOSTIR_FOR_ALL_EXPRS(F)  \
  HOSTIR_FOR_ALL_FUSION_EXPRS(F) \
  HOSTIR_FOR_ALL_HOST_EXPRS(F)

class Expr;
#define HOSTIR_FORWARD_DECLARE(T) class T;
HOSTIR_FOR_ALL_EXPRS(HOSTIR_FORWARD_DECLARE)
#undef HOSTIR_FORWARD_DECLARE

// Opt-in visitor: every kind a subclass does not handle is an error naming it.
class OptInDispatch {
 public:
  virtual ~OptInDispatch() = default;
  void dispatch(const Expr* expr);

#define HOSTIR_DECLARE_HANDLE(T) virtual void handle(const T* expr);
  HOSTIR_FOR_ALL_EXPRS(HOSTIR_DECLARE_HANDLE)
#undef HOSTIR_DECLARE_HANDLE

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
