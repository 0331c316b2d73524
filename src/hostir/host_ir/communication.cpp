#include "hostir/host_ir/communication.h"
#include "hostir/ir/device_mesh.h"

#include <algorithm>
#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

std::string toString(P2PCommunicationType type) {
  return type == P2PCommunicationType::Send ? "send" : "recv";
}

bool hasRoot(CommunicationType type) {
  switch (type) {
    case CommunicationType::Gather:
    case CommunicationType::Scatter:
    case CommunicationType::Reduce:
    case CommunicationType::Broadcast:
    case CommunicationType::SendRecv: return true;
    default: return false;
  }
}

bool isReduction(CommunicationType type) {
  return type == CommunicationType::Reduce || type == CommunicationType::Allreduce ||
         type == CommunicationType::ReduceScatter;
}

namespace {

std::vector<Attribute> communicationAttributes(const CommunicationParams& params) {
  return {static_cast<int64_t>(params.type), params.team,
          params.root.value_or(Communication::kNotGiven),
          params.reduce_op.has_value() ? static_cast<int64_t>(*params.reduce_op)
                                       : Communication::kNotGiven,
          params.scattered_axis.value_or(Communication::kNotGiven)};
}

}  // namespace

// ---------------------------------------------------------------- Communication

Communication::Communication(Fusion* container, TensorView* in, TensorView* out,
                             const CommunicationParams& params)
    : Communication(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                    communicationAttributes(params)) {}

void Communication::validateStructure() const {
  HOSTIR_ASSERT(inputs_.size() == 1 && outputs_.size() == 1 && attributes_.size() == 5,
                "Communication built with the wrong number of operands");
  auto* in = dynamic_cast<TensorView*>(inputs_[0]);
  auto* out = dynamic_cast<TensorView*>(outputs_[0]);
  HOSTIR_CHECK(in != nullptr && out != nullptr, "a Communication moves tensors, got ",
               inputs_[0]->toInlineString(), " -> ", outputs_[0]->toInlineString());

  int64_t raw_type = std::get<int64_t>(attributes_[0]);
  HOSTIR_ASSERT(raw_type >= 0 && raw_type <= static_cast<int64_t>(CommunicationType::SendRecv),
                "bad CommunicationType ", raw_type);
  auto type = static_cast<CommunicationType>(raw_type);
  const auto& team = std::get<std::vector<int64_t>>(attributes_[1]);
  int64_t root = std::get<int64_t>(attributes_[2]);
  int64_t reduce_op = std::get<int64_t>(attributes_[3]);
  int64_t scattered_axis = std::get<int64_t>(attributes_[4]);

  const std::string what = hostir::toString(type) + " from " + in->toInlineString() + " to " +
                           out->toInlineString() + " over team " + teamToString(team);

  HOSTIR_CHECK(!team.empty(), "Communication ", what, ": the team is empty; list the device ids",
               " taking part");
  for (size_t i = 0; i < team.size(); ++i) {
    HOSTIR_CHECK(team[i] >= 0, "Communication ", what, ": device id ", team[i],
                 " is negative; device ids are >= 0");
    HOSTIR_CHECK(std::find(team.begin() + static_cast<std::ptrdiff_t>(i) + 1, team.end(),
                           team[i]) == team.end(),
                 "Communication ", what, ": device ", team[i],
                 " appears twice in the team; list each device once");
  }

  if (hostir::hasRoot(type)) {
    HOSTIR_CHECK(root != kNotGiven, "Communication ", what, ": ", hostir::toString(type),
                 " needs a root device; give one of the team ", teamToString(team));
    HOSTIR_CHECK(std::find(team.begin(), team.end(), root) != team.end(), "Communication ", what,
                 ": root ", root, " is not in the team; give one of ", teamToString(team));
  } else {
    HOSTIR_CHECK(root == kNotGiven, "Communication ", what, ": ", hostir::toString(type),
                 " has no root but root ", root,
                 " was given; only Gather, Scatter, Reduce, Broadcast and SendRecv take a root");
  }

  if (hostir::isReduction(type)) {
    HOSTIR_CHECK(reduce_op != kNotGiven, "Communication ", what, ": ", hostir::toString(type),
                 " needs a reduce op (sum, max, min or product)");
    HOSTIR_ASSERT(reduce_op >= 0 && reduce_op <= static_cast<int64_t>(ReduceOp::Product),
                  "bad ReduceOp ", reduce_op);
  } else {
    HOSTIR_CHECK(reduce_op == kNotGiven, "Communication ", what, ": ", hostir::toString(type),
                 " does not reduce but a reduce op was given; only Reduce, Allreduce and "
                 "ReduceScatter take one");
  }

  if (type == CommunicationType::ReduceScatter) {
    HOSTIR_CHECK(scattered_axis != kNotGiven, "Communication ", what,
                 ": ReduceScatter needs a scattered axis of ", in->toInlineString());
    HOSTIR_CHECK(scattered_axis >= 0 && scattered_axis < in->rank(), "Communication ", what,
                 ": scattered axis ", scattered_axis, " is out of range; ", in->toInlineString(),
                 " has axes 0 to ", in->rank() - 1);
  } else {
    HOSTIR_CHECK(scattered_axis == kNotGiven, "Communication ", what, ": ", hostir::toString(type),
                 " scatters no axis but scattered axis ", scattered_axis,
                 " was given; only ReduceScatter takes one");
  }

  if (type == CommunicationType::SendRecv) {
    HOSTIR_CHECK(team.size() <= 2, "Communication ", what,
                 ": SendRecv has one sender and one receiver; the team must list at most 2 "
                 "devices");
  }
}

int64_t Communication::root() const {
  HOSTIR_ASSERT(hasRoot(), toInlineString(), " (", hostir::toString(type()), ") has no root");
  return attribute<int64_t>(2);
}

ReduceOp Communication::reduceOp() const {
  HOSTIR_ASSERT(hasReduceOp(), toInlineString(), " (", hostir::toString(type()),
                ") has no reduce op");
  return static_cast<ReduceOp>(attribute<int64_t>(3));
}

int64_t Communication::scatteredAxis() const {
  HOSTIR_ASSERT(hasScatteredAxis(), toInlineString(), " (", hostir::toString(type()),
                ") has no scattered axis");
  return attribute<int64_t>(4);
}

TensorView* Communication::in() const {
  return input(0)->as<TensorView>();
}

TensorView* Communication::out() const {
  return output(0)->as<TensorView>();
}

std::string Communication::toInlineString() const {
  return "Communication " + std::to_string(name());
}

std::string Communication::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << toInlineString() << " (type=" << hostir::toString(type())
     << ", team=" << teamToString(team());
  if (hasRoot()) {
    ss << ", root=" << root();
  }
  if (hasReduceOp()) {
    ss << ", reduce_op=" << hostir::toString(reduceOp());
  }
  if (hasScatteredAxis()) {
    ss << ", scattered_axis=" << scatteredAxis();
  }
  std::string head = ss.str() + ",";
  std::string operands =
      "input=" + in()->toInlineString() + ", output=" + out()->toInlineString() + ")";
  // Long lines continue under the node, as the printer writes an op's operands.
  if (head.size() + 1 + operands.size() > 150) {
    return head + "\n" + indentString(indent) + "     " + operands + "\n";
  }
  return head + " " + operands + "\n";
}

// ------------------------------------------------------------- P2PCommunication

P2PCommunication::P2PCommunication(Fusion* container, P2PCommunicationType type, TensorView* buffer,
                                   Val* peer)
    : P2PCommunication(
          container,
          type == P2PCommunicationType::Send ? std::vector<Val*>{buffer, peer}
                                             : std::vector<Val*>{peer},
          type == P2PCommunicationType::Send ? std::vector<Val*>{} : std::vector<Val*>{buffer},
          std::vector<Attribute>{static_cast<int64_t>(type)}) {}

void P2PCommunication::validateStructure() const {
  HOSTIR_ASSERT(attributes_.size() == 1, "P2PCommunication needs its type attribute");
  bool is_send =
      std::get<int64_t>(attributes_[0]) == static_cast<int64_t>(P2PCommunicationType::Send);
  HOSTIR_ASSERT(is_send ? (inputs_.size() == 2 && outputs_.empty())
                        : (inputs_.size() == 1 && outputs_.size() == 1),
                "P2PCommunication built with the wrong number of operands");
  Val* buffer = is_send ? inputs_[0] : outputs_[0];
  Val* peer = is_send ? inputs_[1] : inputs_[0];
  HOSTIR_CHECK(buffer->vtype() == ValType::TensorView, "P2PCommunication ",
               is_send ? "send" : "recv", ": the buffer must be a tensor, got ",
               buffer->toInlineString());
  HOSTIR_CHECK(peer->vtype() == ValType::Scalar && isIntegralType(peer->dtype()),
               "P2PCommunication ", is_send ? "send of " : "recv into ", buffer->toInlineString(),
               ": the peer must be an integer scalar (a device id), got ", peer->toInlineString());
}

TensorView* P2PCommunication::buffer() const {
  return (type() == P2PCommunicationType::Send ? input(0) : output(0))->as<TensorView>();
}

Val* P2PCommunication::peer() const {
  return type() == P2PCommunicationType::Send ? input(1) : input(0);
}

std::string P2PCommunication::toInlineString() const {
  return "P2PCommunication " + std::to_string(name());
}

std::string P2PCommunication::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << toInlineString() << " (type=" << hostir::toString(type())
     << ", buffer=" << buffer()->toInlineString() << ", peer=" << peer()->toInlineString() << ")\n";
  return ss.str();
}

// ------------------------------------------------------------------ Coalescing

StartCoalescing::StartCoalescing(Fusion* container) : StartCoalescing(container, {}, {}, {}) {}

void StartCoalescing::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.empty() && outputs_.empty() && attributes_.empty() && attribute_vals_.empty(),
      "StartCoalescing takes no operands");
}

std::string StartCoalescing::toInlineString() const {
  return "StartCoalescing " + std::to_string(name());
}

std::string StartCoalescing::toString(int indent) const {
  return indentString(indent) + "StartCoalescing\n";
}

EndCoalescing::EndCoalescing(Fusion* container) : EndCoalescing(container, {}, {}, {}) {}

void EndCoalescing::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.empty() && outputs_.empty() && attributes_.empty() && attribute_vals_.empty(),
      "EndCoalescing takes no operands");
}

std::string EndCoalescing::toInlineString() const {
  return "EndCoalescing " + std::to_string(name());
}

std::string EndCoalescing::toString(int indent) const {
  return indentString(indent) + "EndCoalescing\n";
}

// ------------------------------------------------------------------------ Wait

Wait::Wait(Fusion* container, Expr* communication) : Wait(container, {}, {}, {}) {
  HOSTIR_CHECK(communication != nullptr, "Wait needs the communication it completes");
  HOSTIR_CHECK(communication->isA<Communication>() || communication->isA<P2PCommunication>() ||
                   communication->isA<EndCoalescing>(),
               "Wait completes a Communication, P2PCommunication or EndCoalescing, not ",
               communication->opName(), ":\n", communication->toString());
  HOSTIR_CHECK(communication->container() == container, "Wait on ", communication->toInlineString(),
               ", which belongs to another container");
  communication_ = communication;
}

void Wait::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.empty() && outputs_.empty() && attributes_.empty() && attribute_vals_.empty(),
      "Wait takes no operands; its communication is set by the constructor");
}

Expr* Wait::communication() const {
  HOSTIR_ASSERT(communication_ != nullptr, "Wait ", name(), " has no communication");
  return communication_;
}

bool Wait::sameAs(const Expr* other) const {
  if (other == this) {
    return true;
  }
  const auto* wait = dynamic_cast<const Wait*>(other);
  return wait != nullptr && communication()->sameAs(wait->communication());
}

void Wait::cloneExtrasInto(Expr* clone, IrCloner& cloner) const {
  clone->as<Wait>()->communication_ = cloner.clone(communication_);
}

std::string Wait::toInlineString() const {
  return "Wait " + communication()->toInlineString();
}

std::string Wait::toString(int indent) const {
  return indentString(indent) + toInlineString() + "\n";
}

HOSTIR_DEFINE_HOST_EXPR(Communication)
HOSTIR_DEFINE_HOST_EXPR(P2PCommunication)
HOSTIR_DEFINE_HOST_EXPR(StartCoalescing)
HOSTIR_DEFINE_HOST_EXPR(EndCoalescing)
HOSTIR_DEFINE_HOST_EXPR(Wait)

}  // namespace hostir
