#include "hostir/host_ir/passes/specialize_encodings.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/passes/stream_axis.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/host_ir/set_encoding.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/mutation.h"
#include "hostir/ir/op_traits.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

// A tensor like `tv` (same extents, sharding and mesh) in the same container.
TensorView* tensorLike(TensorView* tv) {
  IrCloner cloner(tv->container());
  for (const auto* domain : {&tv->getLogicalDomain(), &tv->getLoopDomain()}) {
    for (IterDomain* id : *domain) {
      cloner.map(id->extent(), id->extent());
    }
  }
  return cloner.clone(tv);
}

// Which axis of the host tensor `tv` is a GEMM's N: from its readers (a
// HostUnit's reader is inside its fusion: the fusion input at the same
// position), else from the fusion input of a collective's reader.
std::optional<int64_t> hostNAxis(const TensorView* tv, int depth = 0) {
  if (std::optional<int64_t> n_axis = gemmNAxis(tv)) {
    return n_axis;
  }
  for (Expr* use : tv->uses()) {
    if (auto* post = dynamic_cast<PostOnStream*>(use)) {
      for (size_t i = 0; i < post->inputs().size(); ++i) {
        if (post->inputs()[i] == tv) {
          if (auto n_axis = gemmNAxis(post->hostUnit()->fusion()->inputs()[i]->as<TensorView>())) {
            return n_axis;
          }
        }
      }
    } else if (auto* comm = dynamic_cast<Communication*>(use); comm != nullptr && depth < 8) {
      // Sent on: the receivers' readers decide.
      if (auto n_axis = hostNAxis(comm->out(), depth + 1)) {
        return n_axis;
      }
    }
  }
  return std::nullopt;
}

// The encoded right operand of a GEMM, if `expr` is one.
TensorView* gemmRhs(Expr* expr) {
  if (auto* matmul = dynamic_cast<MatmulOp*>(expr)) {
    return matmul->b();
  }
  if (auto* linear = dynamic_cast<LinearOp*>(expr)) {
    return linear->weight();
  }
  return nullptr;
}

// Whether every use of `tv` reads it as a GEMM's right operand (and only
// so): what the panel layout can feed.
bool readsAsGemmRhsOnly(const TensorView* tv) {
  if (tv->uses().empty()) {
    return false;
  }
  for (Expr* use : tv->uses()) {
    if (gemmRhs(use) != tv || std::count(use->inputs().begin(), use->inputs().end(), tv) != 1) {
      return false;
    }
  }
  return true;
}

// Whether `reader` can read `tv` packed: a GEMM reading it as its right
// operand, a HostUnit launch whose segment reads it only so, a collective
// (which moves the bytes).
bool readsPacked(Expr* reader, const TensorView* tv) {
  if (reader->isA<Communication>()) {
    return true;
  }
  if (auto* post = dynamic_cast<PostOnStream*>(reader)) {
    for (size_t i = 0; i < post->inputs().size(); ++i) {
      if (post->inputs()[i] == tv &&
          !readsAsGemmRhsOnly(post->hostUnit()->fusion()->inputs()[i]->as<TensorView>())) {
        return false;
      }
    }
    return true;
  }
  return gemmRhs(reader) == tv &&
         std::count(reader->inputs().begin(), reader->inputs().end(), tv) == 1;
}

// Rebuilds `reader` (in `scope`) to read `new_input` where it read
// `old_input`; the Waits of a rebuilt collective wait for the new one.
Expr* replaceReaderInput(HostIrContainer& container, Scope& scope, Expr* reader, Val* old_input,
                         Val* new_input) {
  Expr* rebuilt = replaceValInExprInputs(reader, old_input, new_input);
  if (auto* post = dynamic_cast<PostOnStream*>(reader)) {
    // PostOnStream keeps its HostUnit (and variants) outside its operands.
    auto* new_post = IrBuilder::createInContainer<PostOnStream>(
        &container, post->hostUnit(), rebuilt->inputs(), rebuilt->outputs());
    new_post->setVariants(post->variants());
    detachExpr(rebuilt);
    rebuilt = new_post;
  }
  scope.replace(reader, {rebuilt});
  if (reader->isA<Communication>()) {
    for (const auto& [wait_scope, other] : allExprs(container)) {
      if (auto* wait = dynamic_cast<Wait*>(other); wait && wait->communication() == reader) {
        wait_scope->replace(wait, {IrBuilder::createInContainer<Wait>(&container, rebuilt)});
      }
    }
  }
  return rebuilt;
}

// Step 1: a SetEncoding per encoded program input that the program reads
// packed (readsPacked); its other readers keep reading it plain.
void insertSetEncodings(HostIrContainer& container, const DeviceTargets& targets) {
  for (Val* input : container.inputs()) {
    auto* tv = dynamic_cast<TensorView*>(input);
    if (tv == nullptr || !tv->hasEncoding() || tv->encoding()->isResolved() || tv->uses().empty()) {
      continue;
    }
    std::vector<std::pair<Scope*, Expr*>> users;
    for (const auto& [scope, expr] : allExprs(container)) {
      if (std::find(expr->inputs().begin(), expr->inputs().end(), tv) != expr->inputs().end() &&
          readsPacked(expr, tv)) {
        users.emplace_back(scope, expr);
      }
    }
    if (users.empty()) {
      tv->setEncoding(std::nullopt);  // nothing reads it packed: it stays plain
      continue;
    }
    TensorView* encoded = tensorLike(tv);
    tv->setEncoding(std::nullopt);
    for (const auto& [scope, expr] : users) {
      replaceReaderInput(container, *scope, expr, tv, encoded);
    }
    std::optional<int64_t> n_axis = hostNAxis(encoded);
    DeviceLayouts layouts;
    std::vector<int64_t> devices;
    if (tv->hasDeviceMesh()) {
      devices = tv->getDeviceMesh().vector();
    } else {
      for (const auto& [device, target] : targets) {
        devices.push_back(device);
      }
    }
    for (int64_t device : devices) {
      if (targets.count(device) == 0) {
        continue;
      }
      layouts.devices.push_back(device);
      layouts.layouts.push_back(resolveLayout(encoded, targets.at(device), n_axis));
    }
    auto* set = IrBuilder::createInContainer<SetEncoding>(&container, tv, encoded, layouts);
    container.topLevel().push_front(set);
  }
}

// The devices an expr runs on: the mesh of its outputs, else of its inputs,
// else every device with a target.
std::vector<int64_t> runningDevices(const Expr* expr, const DeviceTargets& targets) {
  for (const auto* vals : {&expr->outputs(), &expr->inputs()}) {
    for (const Val* val : *vals) {
      if (const auto* tv = dynamic_cast<const TensorView*>(val); tv && tv->hasDeviceMesh()) {
        return tv->getDeviceMesh().vector();
      }
    }
  }
  std::vector<int64_t> devices;
  for (const auto& [device, target] : targets) {
    devices.push_back(device);
  }
  return devices;
}

// Collectives that keep every buffer's shape (the bytes of equal layouts
// combine or copy as they are); the others cut or concatenate along an
// axis, which panels do not allow.
bool keepsShape(CommunicationType type) {
  return type == CommunicationType::Broadcast || type == CommunicationType::SendRecv ||
         type == CommunicationType::Allreduce || type == CommunicationType::Reduce;
}

class Specializer {
 public:
  Specializer(HostIrContainer& container, const DeviceTargets& targets)
      : container_(container), targets_(targets) {
    for (const auto& [scope, expr] : allExprs(container)) {
      if (auto* comm = dynamic_cast<Communication*>(expr)) {
        brought_by_[comm->out()] = comm;
      } else if (auto* set = dynamic_cast<SetEncoding*>(expr)) {
        set_by_[set->out()] = set;
      }
    }
  }

  void run() {
    plainWhereNotOnlyGemmRead();
    resolveThroughCollectives();
    wrapEncodedOps();
    for (const auto& [scope, expr] : allExprs(container_)) {
      if (auto* post = dynamic_cast<PostOnStream*>(expr)) {
        specialize(post);
      }
    }
  }

 private:
  // The layout in which `device` holds the encoded host tensor `tv`: its
  // resolved layout, else the SetEncoding's choice for the device, else the
  // device's own target's resolution.
  Layout heldLayout(const TensorView* tv, int64_t device) {
    if (!tv->hasEncoding()) {
      return Layout::identity();
    }
    if (tv->encoding()->isResolved()) {
      return *tv->encoding()->resolved;
    }
    if (auto set = set_by_.find(tv); set != set_by_.end()) {
      if (auto layout = set->second->layoutFor(device)) {
        return *layout;
      }
    }
    return resolveLayout(tv, targetOf(targets_, device), hostNAxis(tv));
  }

  // A computed tensor that the program returns, or that some reader cannot
  // read in panels (a pointwise op, a segment using it otherwise than as a
  // GEMM's right operand), is kept plain: its encoding resolves to identity
  // on every device, so the op computing it writes it plain.
  void plainWhereNotOnlyGemmRead() {
    auto keepPlain = [](TensorView* tv) {
      if (tv->hasEncoding() && !tv->encoding()->isResolved()) {
        tv->setEncoding(Encoding{tv->encoding()->kind, Layout::identity()});
      }
    };
    for (Val* output : container_.outputs()) {
      if (auto* tv = dynamic_cast<TensorView*>(output)) {
        keepPlain(tv);
      }
    }
    // Uses in the program (an expr a pass replaced may still be listed).
    std::unordered_set<const Expr*> in_program;
    for (const auto& [scope, expr] : allExprs(container_)) {
      in_program.insert(expr);
    }
    for (const auto& [scope, expr] : allExprs(container_)) {
      if (!expr->isA<PostOnStream>() && !hasTrait(expr, OpTrait::AtenEvaluable)) {
        continue;
      }
      for (Val* output : expr->outputs()) {
        auto* tv = dynamic_cast<TensorView*>(output);
        if (tv == nullptr || !tv->hasEncoding()) {
          continue;
        }
        for (Expr* use : tv->uses()) {
          const bool reads_data = in_program.count(use) != 0 &&
                                  (use->isA<PostOnStream>() || use->isA<Communication>() ||
                                   hasTrait(use, OpTrait::AtenEvaluable));
          if (reads_data && !readsPacked(use, tv)) {
            keepPlain(tv);
          }
        }
      }
    }
  }

  // Collectives move encoded bytes: the output of a collective whose input
  // carries an encoding is laid out as the senders hold the input (the
  // root of a Broadcast/SendRecv; every member of an Allreduce/Reduce when
  // they agree). Its encoding is resolved to that layout, the same on
  // every receiver, so the receivers allocate it so and its readers are
  // keyed on it (a variant reading the producer's layout). A collective
  // that cannot carry the senders' layouts (senders that disagree, panels
  // through one that cuts or concatenates) gets conversions instead
  // (convertAround).
  void resolveThroughCollectives() {
    std::unordered_set<const Expr*> done;
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [scope, expr] : allExprs(container_)) {
        auto* comm = dynamic_cast<Communication*>(expr);
        if (comm == nullptr || !done.insert(comm).second || !comm->in()->hasEncoding()) {
          continue;
        }
        TensorView* in = comm->in();
        std::vector<int64_t> senders = comm->team();
        if (comm->type() == CommunicationType::Broadcast ||
            comm->type() == CommunicationType::SendRecv ||
            comm->type() == CommunicationType::Scatter) {
          senders = {comm->root()};
        }
        std::vector<Layout> layouts;
        bool agree = true;
        for (int64_t sender : senders) {
          layouts.push_back(heldLayout(in, sender));
          agree = agree && layouts.back() == layouts.front();
        }
        const Layout layout = layouts.empty() ? Layout::identity() : layouts.front();
        if (!agree || (!layout.isIdentity() && !keepsShape(comm->type()))) {
          convertAround(*scope, comm, senders, layouts, done);
          changed = true;
          break;  // the program changed: walk it again
        }
        comm->out()->setEncoding(Encoding{in->encoding()->kind, layout});
      }
    }
  }

  // The collective `comm` cannot carry the layouts its senders hold its
  // input in (`layouts`, one per sender): each sender unpacks to the plain
  // layout first (an UnsetEncoding; none when the input is a SetEncoding of
  // a plain tensor, which the collective then reads), the collective moves
  // plain data, and the receivers pack it again in their own layouts (a
  // SetEncoding after the collective's Wait) when every reader reads it
  // packed; else the received tensor stays plain.
  void convertAround(Scope& scope, Communication* comm, const std::vector<int64_t>& senders,
                     const std::vector<Layout>& layouts, std::unordered_set<const Expr*>& done) {
    TensorView* in = comm->in();
    const EncodingKind kind = in->encoding()->kind;
    bool other_readers = false;
    for (const auto& [other_scope, expr] : allExprs(container_)) {
      other_readers =
          other_readers || (expr != comm && std::find(expr->inputs().begin(), expr->inputs().end(),
                                                      in) != expr->inputs().end());
    }
    TensorView* plain = nullptr;
    if (auto set = set_by_.find(in);
        set != set_by_.end() && !set->second->in()->hasEncoding() && scope.contains(set->second)) {
      plain = set->second->in();
    } else if (!other_readers && set_by_.count(in) == 0 && !in->isFusionInput() &&
               !in->encoding()->isResolved()) {
      // Computed for the collective only: it is computed plain and sent so.
      in->setEncoding(Encoding{kind, Layout::identity()});
      plain = in;
    } else {
      plain = tensorLike(in);
      plain->setEncoding(std::nullopt);
      DeviceLayouts held{senders, layouts};
      auto* unset = IrBuilder::createInContainer<UnsetEncoding>(&container_, in, plain, held);
      scope.insertBefore(comm, unset);
    }
    auto* rebuilt =
        plain == in ? comm
                    : replaceReaderInput(container_, scope, comm, in, plain)->as<Communication>();
    done.insert(rebuilt);
    if (auto set = set_by_.find(in); set != set_by_.end() && set->second->in() == plain) {
      // The collective read the packed copy; drop the packing if no one else does.
      bool read = false;
      for (const auto& [other_scope, expr] : allExprs(container_)) {
        read = read ||
               std::find(expr->inputs().begin(), expr->inputs().end(), in) != expr->inputs().end();
      }
      if (!read) {
        scope.erase(set->second);
        set_by_.erase(set);
      }
    }
    TensorView* out = rebuilt->out();
    brought_by_[out] = rebuilt;

    // Readers in the program (an expr a pass replaced may still be listed).
    std::vector<std::pair<Scope*, Expr*>> readers;
    bool is_output = std::find(container_.outputs().begin(), container_.outputs().end(), out) !=
                     container_.outputs().end();
    bool all_packed = !is_output;
    Expr* wait = nullptr;
    for (const auto& [reader_scope, expr] : allExprs(container_)) {
      if (auto* w = dynamic_cast<Wait*>(expr); w != nullptr && w->communication() == rebuilt) {
        wait = w;
      }
      if (std::find(expr->inputs().begin(), expr->inputs().end(), out) != expr->inputs().end()) {
        readers.emplace_back(reader_scope, expr);
        all_packed = all_packed && readsPacked(expr, out);
      }
    }
    if (readers.empty() || !all_packed) {
      out->setEncoding(Encoding{kind, Layout::identity()});  // received plain, read plain
      return;
    }
    out->setEncoding(std::nullopt);
    TensorView* encoded = tensorLike(out);
    encoded->setEncoding(Encoding{kind, std::nullopt});
    for (const auto& [reader_scope, reader] : readers) {
      replaceReaderInput(container_, *reader_scope, reader, out, encoded);
    }
    const std::optional<int64_t> n_axis = hostNAxis(encoded);
    DeviceLayouts receivers;
    for (int64_t device : out->hasDeviceMesh() ? out->getDeviceMesh().vector() : rebuilt->team()) {
      if (targets_.count(device) != 0) {
        receivers.devices.push_back(device);
        receivers.layouts.push_back(resolveLayout(encoded, targets_.at(device), n_axis));
      }
    }
    auto* set = IrBuilder::createInContainer<SetEncoding>(&container_, out, encoded, receivers);
    scope.insertAfter(wait != nullptr && scope.contains(wait) ? wait : rebuilt, set);
    set_by_[encoded] = set;
  }

  // A top-level fusion op that writes an encoded result (which a device
  // holds in panels), or a top-level matmul/linear whose encoded weight its
  // devices lay out differently, becomes a launch of a one-op HostUnit, so
  // that it is specialized like any other executable (one copy per set of
  // devices with equal layouts, each checking its data's layout and writing
  // its result in its layout).
  void wrapEncodedOps() {
    for (const auto& [scope, expr] : allExprs(container_)) {
      if (!hasTrait(expr, OpTrait::AtenEvaluable) || hasTrait(expr, OpTrait::View) ||
          expr->isA<Communication>() || expr->outputs().size() != 1) {
        continue;
      }
      auto* out = dynamic_cast<TensorView*>(expr->output(0));
      if (out == nullptr || findStreamAxis(out).has_value()) {
        continue;  // stream parallelization turns it into a loop of its own
      }
      TensorView* rhs = gemmRhs(expr);
      bool differs = false;
      std::optional<Layout> first_rhs;
      for (int64_t device : runningDevices(expr, targets_)) {
        if (rhs != nullptr && rhs->hasEncoding()) {
          Layout layout = heldLayout(rhs, device);
          differs = differs || (first_rhs.has_value() && *first_rhs != layout);
          first_rhs = layout;
        }
        differs = differs || (out->hasEncoding() && !heldLayout(out, device).isIdentity());
      }
      if (!differs) {
        continue;
      }
      auto fusion = std::make_unique<Fusion>();
      std::vector<Val*> inputs;
      {
        FusionGuard fg(fusion.get());
        IrCloner cloner(fusion.get());
        for (Val* input : expr->inputs()) {
          const auto* scalar = dynamic_cast<const Scalar*>(input);
          if (scalar == nullptr || !scalar->isConst()) {  // constants are cloned with the op
            inputs.push_back(input);
            fusion->addInput(cloner.clone(input));
          }
        }
        cloner.clone(expr);
        fusion->addOutput(cloner.clone(out));
      }
      auto* unit = IrBuilder::createInContainer<HostUnit>(&container_, std::move(fusion));
      auto* post = IrBuilder::createInContainer<PostOnStream>(&container_, unit, inputs,
                                                              std::vector<Val*>{out});
      scope->replace(expr, {post});
      detachExpr(expr);
    }
  }

  // The layout in which device `device` finds operand `operand` (a host
  // tensor), read by the fusion input `reader`.
  Layout operandLayout(const Val* operand, const TensorView* reader, int64_t device) {
    if (const auto* host = dynamic_cast<const TensorView*>(operand);
        host != nullptr && host->hasEncoding()) {
      return heldLayout(host, device);
    }
    auto brought = brought_by_.find(operand);
    if (brought == brought_by_.end()) {
      return resolveLayout(reader, targetOf(targets_, device));  // produced here
    }
    const Communication* comm = brought->second;
    if (comm->hasRoot()) {
      return resolveLayout(reader, targetOf(targets_, comm->root()));
    }
    // Every member of the team contributes: they must agree.
    std::optional<Layout> agreed;
    for (int64_t member : comm->team()) {
      Layout layout = resolveLayout(reader, targetOf(targets_, member));
      HOSTIR_CHECK(!agreed.has_value() || *agreed == layout, reader->toInlineString(),
                   " arrives on device ", device, " through ", comm->toInlineString(),
                   " from devices whose targets lay it out differently (", agreed->toString(),
                   " and ", layout.toString(), " on device ", member,
                   "); a collective with several senders needs one layout: give the team "
                   "devices of one target, or send the tensor plain and encode it after");
      agreed = layout;
    }
    return agreed.value_or(Layout::identity());
  }

  // The layout in which `device` writes result `result`, computed by the
  // fusion output `writer`: the host tensor's layout on the device when it
  // carries an encoding (N from its readers), else the writer's own request
  // resolved with the device's target.
  Layout resultLayout(const Val* result, const TensorView* writer, int64_t device) {
    if (const auto* host = dynamic_cast<const TensorView*>(result);
        host != nullptr && host->hasEncoding()) {
      return heldLayout(host, device);
    }
    return resolveLayout(writer, targetOf(targets_, device));
  }

  static bool isTied(const PostOnStream* post, size_t output) {
    return std::find(post->inputs().begin(), post->inputs().end(), post->outputs()[output]) !=
           post->inputs().end();
  }

  void specialize(PostOnStream* post) {
    HostUnit* unit = post->hostUnit();
    Fusion* fusion = unit->fusion();
    bool any_encoding = false;
    for (const auto* vals :
         {&fusion->inputs(), &fusion->outputs(), &post->inputs(), &post->outputs()}) {
      for (const Val* val : *vals) {
        if (const auto* tv = dynamic_cast<const TensorView*>(val); tv && tv->hasEncoding()) {
          any_encoding = true;
        }
      }
    }
    if (!any_encoding) {
      return;
    }
    // Key per device: operand layouts, then untied result layouts.
    using Key = std::vector<Layout>;
    std::vector<std::pair<Key, std::vector<int64_t>>> classes;  // in first-seen order
    std::map<std::string, size_t> class_of;  // equivalence classes by printed key
    for (int64_t device : runningDevices(post, targets_)) {
      Key key;
      std::string text;
      for (size_t i = 0; i < post->inputs().size(); ++i) {
        if (dynamic_cast<const TensorView*>(fusion->inputs()[i]) == nullptr) {
          continue;
        }
        key.push_back(operandLayout(post->inputs()[i], encodingSource(post, i), device));
        text += key.back().toString() + ";";
      }
      for (size_t i = 0; i < post->outputs().size(); ++i) {
        const auto* writer = dynamic_cast<const TensorView*>(fusion->outputs()[i]);
        if (writer == nullptr || isTied(post, i)) {
          continue;
        }
        key.push_back(resultLayout(post->outputs()[i], writer, device));
        text += key.back().toString() + ";";
      }
      auto [it, inserted] = class_of.emplace(text, classes.size());
      if (inserted) {
        classes.push_back({key, {}});
      }
      classes[it->second].second.push_back(device);
    }
    if (classes.empty()) {
      return;
    }
    std::vector<PostOnStream::Variant> variants;
    for (size_t c = 0; c < classes.size(); ++c) {
      HostUnit* copy = c == 0 ? unit : IrCloner(&container_).clone(unit);
      rewriteLayouts(post, copy, classes[c].first);
      variants.push_back({copy, classes[c].second});
    }
    post->setVariants(std::move(variants));
  }

  // The tensor whose encoding an operand's layout is resolved from: the
  // fusion input when it carries one, else the host operand (packed by a
  // SetEncoding) seen through the fusion input's uses.
  static const TensorView* encodingSource(const PostOnStream* post, size_t i) {
    auto* reader = post->hostUnit()->fusion()->inputs()[i]->as<TensorView>();
    if (reader->hasEncoding()) {
      return reader;
    }
    const auto* host = dynamic_cast<const TensorView*>(post->inputs()[i]);
    if (host != nullptr && host->hasEncoding() && !host->encoding()->isResolved()) {
      // The reader inside the fusion decides N; give it the host's request.
      reader->setEncoding(Encoding{host->encoding()->kind, std::nullopt});
    }
    return reader;
  }

  // Writes the class's layouts into the fusion inputs/outputs of `copy`: a
  // tensor that carries an encoding gets its layout; one that carries none
  // gets the host tensor's encoding when its layout is not the identity
  // (its data arrives, or must leave, laid out so).
  static void rewriteLayouts(const PostOnStream* post, HostUnit* copy,
                             const std::vector<Layout>& key) {
    Fusion* fusion = copy->fusion();
    size_t k = 0;
    auto apply = [&](Val* val, const Val* host_val) {
      auto* tv = dynamic_cast<TensorView*>(val);
      if (tv == nullptr) {
        return;
      }
      const Layout& layout = key.at(k++);
      const auto* host = dynamic_cast<const TensorView*>(host_val);
      if (tv->hasEncoding()) {
        tv->setEncoding(Encoding{tv->encoding()->kind, layout});
      } else if (!layout.isIdentity() && host != nullptr && host->hasEncoding()) {
        tv->setEncoding(Encoding{host->encoding()->kind, layout});
      }
    };
    for (size_t i = 0; i < fusion->inputs().size(); ++i) {
      apply(fusion->inputs()[i], post->inputs()[i]);
    }
    for (size_t i = 0; i < fusion->outputs().size(); ++i) {
      if (!isTied(post, i)) {
        apply(fusion->outputs()[i], post->outputs()[i]);
      }
    }
  }

  HostIrContainer& container_;
  const DeviceTargets& targets_;
  std::unordered_map<const Val*, const Communication*> brought_by_;
  std::unordered_map<const Val*, const SetEncoding*> set_by_;
};

}  // namespace

void specializeEncodings(HostIrContainer& container, const DeviceTargets& given_targets) {
  const DeviceTargets targets = given_targets.empty() ? container.deviceTargets() : given_targets;
  if (container.deviceTargets().empty()) {
    container.setDeviceTargets(targets);
  }
  insertSetEncodings(container, targets);
  if (targets.empty()) {
    return;
  }
  Specializer(container, targets).run();
}

}  // namespace hostir
