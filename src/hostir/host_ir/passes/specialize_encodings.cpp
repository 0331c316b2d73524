#include "hostir/host_ir/passes/specialize_encodings.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "hostir/host_ir/communication.h"
#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/set_encoding.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/mutation.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

// Every expr of the program with the scope that holds it, loops included.
void collect(Scope& scope, std::vector<std::pair<Scope*, Expr*>>& out) {
  for (Expr* expr : scope) {
    out.emplace_back(&scope, expr);
    if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
      collect(loop->body(), out);
    }
  }
}

std::vector<std::pair<Scope*, Expr*>> allExprs(HostIrContainer& container) {
  std::vector<std::pair<Scope*, Expr*>> exprs;
  collect(container.topLevel(), exprs);
  return exprs;
}

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

// Step 1: a SetEncoding per encoded program input that the program reads.
void insertSetEncodings(HostIrContainer& container, const DeviceTargets& targets) {
  for (Val* input : container.inputs()) {
    auto* tv = dynamic_cast<TensorView*>(input);
    if (tv == nullptr || !tv->hasEncoding() || tv->encoding()->isResolved() || tv->uses().empty()) {
      continue;
    }
    TensorView* encoded = tensorLike(tv);
    tv->setEncoding(std::nullopt);
    std::vector<std::pair<Scope*, Expr*>> users;
    for (const auto& [scope, expr] : allExprs(container)) {
      if (std::find(expr->inputs().begin(), expr->inputs().end(), tv) != expr->inputs().end()) {
        users.emplace_back(scope, expr);
      }
    }
    for (const auto& [scope, expr] : users) {
      Expr* rebuilt = replaceValInExprInputs(expr, tv, encoded);
      if (auto* post = dynamic_cast<PostOnStream*>(expr)) {
        // PostOnStream keeps its HostUnit (and variants) outside its operands.
        auto* new_post = IrBuilder::createInContainer<PostOnStream>(
            &container, post->hostUnit(), rebuilt->inputs(), rebuilt->outputs());
        new_post->setVariants(post->variants());
        detachExpr(rebuilt);
        rebuilt = new_post;
      }
      scope->replace(expr, {rebuilt});
    }
    // Which axis is N: from the readers of the encoded tensor (a HostUnit's
    // reader is inside its fusion: the fusion input at the same position).
    std::optional<int64_t> n_axis = gemmNAxis(encoded);
    for (Expr* use : encoded->uses()) {
      if (auto* post = dynamic_cast<PostOnStream*>(use); post != nullptr && !n_axis) {
        for (size_t i = 0; i < post->inputs().size(); ++i) {
          if (post->inputs()[i] == encoded) {
            n_axis = gemmNAxis(post->hostUnit()->fusion()->inputs()[i]->as<TensorView>());
          }
        }
      }
    }
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

// The devices a launch runs on: the mesh of its outputs, else of its inputs,
// else every device with a target.
std::vector<int64_t> launchDevices(const PostOnStream* post, const DeviceTargets& targets) {
  for (const auto* vals : {&post->outputs(), &post->inputs()}) {
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
    for (const auto& [scope, expr] : allExprs(container_)) {
      if (auto* post = dynamic_cast<PostOnStream*>(expr)) {
        specialize(post);
      }
    }
  }

 private:
  // The layout in which device `device` finds operand `operand` (a host
  // tensor), read by the fusion input `reader`.
  Layout operandLayout(const Val* operand, const TensorView* reader, int64_t device) {
    if (auto set = set_by_.find(operand); set != set_by_.end()) {
      if (auto layout = set->second->layoutFor(device)) {
        return *layout;
      }
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

  void specialize(PostOnStream* post) {
    HostUnit* unit = post->hostUnit();
    Fusion* fusion = unit->fusion();
    bool any_encoding = false;
    for (const auto* vals : {&fusion->inputs(), &fusion->outputs()}) {
      for (const Val* val : *vals) {
        if (const auto* tv = dynamic_cast<const TensorView*>(val); tv && tv->hasEncoding()) {
          any_encoding = true;
        }
      }
    }
    // Encoded host operands (packed by a SetEncoding) count too.
    for (const Val* input : post->inputs()) {
      if (const auto* tv = dynamic_cast<const TensorView*>(input); tv && tv->hasEncoding()) {
        any_encoding = true;
      }
    }
    if (!any_encoding) {
      return;
    }
    // Key per device: operand layouts, then untied result layouts.
    using Key = std::vector<Layout>;
    std::vector<std::pair<Key, std::vector<int64_t>>> classes;  // in first-seen order
    std::map<std::string, size_t> class_of;  // equivalence classes by printed key
    for (int64_t device : launchDevices(post, targets_)) {
      Key key;
      std::string text;
      for (size_t i = 0; i < post->inputs().size(); ++i) {
        const auto* reader = dynamic_cast<const TensorView*>(fusion->inputs()[i]);
        if (reader == nullptr) {
          continue;
        }
        key.push_back(operandLayout(post->inputs()[i], encodingSource(post, i), device));
        text += key.back().toString() + ";";
      }
      for (size_t i = 0; i < post->outputs().size(); ++i) {
        const Val* result = post->outputs()[i];
        const auto* writer = dynamic_cast<const TensorView*>(fusion->outputs()[i]);
        bool tied =
            std::find(post->inputs().begin(), post->inputs().end(), result) != post->inputs().end();
        if (writer == nullptr || tied) {
          continue;
        }
        key.push_back(resolveLayout(writer, targetOf(targets_, device)));
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

  // Writes the class's layouts into the fusion inputs/outputs of `copy`.
  static void rewriteLayouts(const PostOnStream* post, HostUnit* copy,
                             const std::vector<Layout>& key) {
    Fusion* fusion = copy->fusion();
    size_t k = 0;
    auto apply = [&](Val* val) {
      auto* tv = dynamic_cast<TensorView*>(val);
      if (tv == nullptr) {
        return;
      }
      const Layout& layout = key.at(k++);
      if (tv->hasEncoding()) {
        tv->setEncoding(Encoding{tv->encoding()->kind, layout});
      }
    };
    for (Val* input : fusion->inputs()) {
      apply(input);
    }
    for (size_t i = 0; i < fusion->outputs().size(); ++i) {
      bool tied = std::find(post->inputs().begin(), post->inputs().end(), post->outputs()[i]) !=
                  post->inputs().end();
      if (!tied) {
        apply(fusion->outputs()[i]);
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
