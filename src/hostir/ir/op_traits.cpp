#include "hostir/ir/op_traits.h"

#include <string_view>
#include <unordered_map>

#include "hostir/ir/statement.h"

namespace hostir {
namespace {

using Traits = std::uint32_t;

constexpr Traits operator|(OpTrait a, OpTrait b) {
  return static_cast<Traits>(a) | static_cast<Traits>(b);
}
constexpr Traits operator|(Traits a, OpTrait b) {
  return a | static_cast<Traits>(b);
}

// By the expr's class (opName). Only the core IR's ops: host IR nodes
// (host_ir/) are placed by their own passes and have no op traits.
const std::unordered_map<std::string_view, Traits>& table() {
  using enum OpTrait;
  static const std::unordered_map<std::string_view, Traits> traits{
      {"LoadStoreOp", Pointwise | HostLowerable | StreamParallelizable | AtenEvaluable},
      {"UnaryOp", Pointwise | StreamParallelizable | AtenEvaluable | Forwardable},
      {"BinaryOp", Pointwise | StreamParallelizable | AtenEvaluable},
      {"ReductionOp", Reduction | StreamParallelizable | AtenEvaluable},
      {"BroadcastOp", View | StreamParallelizable | AtenEvaluable | Forwardable},
      {"MatmulOp", Contraction | HostLowerable | StreamParallelizable | AtenEvaluable},
      {"LinearOp", Contraction | HostLowerable | StreamParallelizable | AtenEvaluable},
      {"SelectOp", View | HostLowerable | AtenEvaluable},
      {"SliceOp", View | HostLowerable | AtenEvaluable},
      {"PermuteOp", View | AtenEvaluable},
      {"ReshapeOp", View | AtenEvaluable},
      {"FullOp", Factory | AtenEvaluable | Forwardable},
      // where is pointwise over three operands: merged into compiled
      // segments and stream-parallelized like a BinaryOp.
      {"WhereOp", Pointwise | StreamParallelizable | AtenEvaluable},
      // iota has no tensor operand: recomputed in every segment, like full.
      {"IotaOp", Factory | AtenEvaluable | Forwardable},
      // pad and cat (resize_ops.h) write their inputs into a larger tensor:
      // merged into segments, which run through ATen (no kernel lowering).
      {"PadOp", Traits{0} | AtenEvaluable},
      {"CatOp", Traits{0} | AtenEvaluable},
      // index_select and take_along_axis (gather_ops.h): through ATen too.
      {"GatherOp", Traits{0} | AtenEvaluable},
      // uniform and normal (random_ops.h): not Forwardable, a recomputation
      // in another segment would draw other values.
      {"RandomOp", Factory | AtenEvaluable},
      // cumsum (scan_ops.h) and scatter (scatter_ops.h): through ATen.
      {"ScanOp", Traits{0} | AtenEvaluable},
      {"ScatterOp", Traits{0} | AtenEvaluable},
      // scatter_add and index_add (scatter_ops.h, the gathers' grads):
      // through ATen (why: ScatterAddOp's comment).
      {"ScatterAddOp", Traits{0} | AtenEvaluable},
  };
  return traits;
}

}  // namespace

bool hasTrait(const Expr* expr, OpTrait trait) {
  auto it = table().find(expr->opName());
  if (it == table().end() || (it->second & static_cast<Traits>(trait)) == 0) {
    return false;
  }
  // A fusion op is ATen-evaluable only with one tensor output (a BinaryOp
  // on two scalars is scalar arithmetic, evaluated on demand).
  if (trait == OpTrait::AtenEvaluable) {
    return expr->outputs().size() == 1 && expr->output(0)->vtype() == ValType::TensorView;
  }
  return true;
}

std::string traitsToString(const Expr* expr) {
  static constexpr std::pair<OpTrait, const char*> kNames[] = {
      {OpTrait::View, "View"},
      {OpTrait::Pointwise, "Pointwise"},
      {OpTrait::Reduction, "Reduction"},
      {OpTrait::Contraction, "Contraction"},
      {OpTrait::Factory, "Factory"},
      {OpTrait::HostLowerable, "HostLowerable"},
      {OpTrait::StreamParallelizable, "StreamParallelizable"},
      {OpTrait::AtenEvaluable, "AtenEvaluable"},
      {OpTrait::Forwardable, "Forwardable"},
  };
  std::string text;
  for (const auto& [trait, name] : kNames) {
    if (hasTrait(expr, trait)) {
      if (!text.empty()) {
        text += '|';
      }
      text += name;
    }
  }
  return text;
}

}  // namespace hostir
