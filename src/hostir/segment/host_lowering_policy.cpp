#include "hostir/segment/host_lowering_policy.h"

#include <algorithm>

#include "hostir/ir/dispatch.h"

namespace hostir {

namespace {

// A visitor rather than casts: host IR nodes are only forward-declared at
// this layer (segment/ must not depend on host_ir/).
class HostLowerableCheck : public OptOutDispatch {
 public:
  static bool check(const Expr* expr) {
    HostLowerableCheck checker;
    checker.dispatch(expr);
    return checker.host_lowerable_;
  }

 private:
  void handle(const LoadStoreOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const BinaryOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const ReductionOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const MatmulOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const LinearOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const SelectOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const SliceOp* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const Communication* /*expr*/) override {
    host_lowerable_ = true;
  }
  void handle(const P2PCommunication* /*expr*/) override {
    host_lowerable_ = true;
  }

  bool host_lowerable_ = false;
};

bool holdsHostLowerableOp(const SegmentedGroup& group) {
  return std::any_of(group.exprs().begin(), group.exprs().end(), isHostLowerable);
}

}  // namespace

bool isHostLowerable(const Expr* expr) {
  return HostLowerableCheck::check(expr);
}

MergePredicate hostLoweringMergePolicy() {
  return [](const SegmentedGroup& producer, const SegmentedGroup& consumer) {
    return !holdsHostLowerableOp(producer) && !holdsHostLowerableOp(consumer);
  };
}

}  // namespace hostir
