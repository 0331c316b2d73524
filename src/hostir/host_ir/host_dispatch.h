#pragma once

#include "hostir/ir/dispatch.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

// Every host IR node. Adding one means its class in this folder (declared
// with HOSTIR_DECLARE_EXPR, defined with HOSTIR_DEFINE_HOST_EXPR) and its
// entry here; the core IR (ir/) knows none of them by name.
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

#define HOSTIR_FORWARD_DECLARE(T) class T;
HOSTIR_FOR_ALL_HOST_EXPRS(HOSTIR_FORWARD_DECLARE)
#undef HOSTIR_FORWARD_DECLARE

// Opt-in visitor over host programs: the core IR's kinds and the host nodes.
// A host node dispatched to a plain OptInDispatch is unhandled there.
class HostIrDispatch : public OptInDispatch {
 public:
  using OptInDispatch::handle;
#define HOSTIR_DECLARE_HANDLE(T) virtual void handle(const T* expr);
  HOSTIR_FOR_ALL_HOST_EXPRS(HOSTIR_DECLARE_HANDLE)
#undef HOSTIR_DECLARE_HANDLE
};

// Defines the out-of-line boilerplate of a host node in its .cpp file: its
// accept() reaches HostIrDispatch::handle, or the core dispatcher's
// extension point when the visitor is not a host IR one.
#define HOSTIR_DEFINE_HOST_EXPR(ClassName)                                    \
  HOSTIR_DEFINE_EXPR_NEW_OBJECT(ClassName)                                    \
  void ClassName::accept(OptInDispatch& dispatcher) const {                   \
    if (auto* host_dispatcher = dynamic_cast<HostIrDispatch*>(&dispatcher)) { \
      host_dispatcher->handle(this);                                          \
    } else {                                                                  \
      dispatcher.handleOtherLayerKind(this);                                  \
    }                                                                         \
  }                                                                           \
  void HostIrDispatch::handle(const ClassName* expr) {                        \
    unhandled(expr);                                                          \
  }

}  // namespace hostir
