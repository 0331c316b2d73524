#include "hostir/host_ir/host_ir_container.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_unit.h"
#include "hostir/host_ir/printing.h"
#include "hostir/host_ir/stream.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scalar_names.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

int64_t HostIrContainer::addKernel(std::unique_ptr<Fusion> kernel) {
  HOSTIR_CHECK(kernel != nullptr, "addKernel needs a segment fusion");
  HOSTIR_CHECK(kernel.get() != this, "a HostIrContainer cannot register itself as a kernel");
  kernels_.push_back(std::move(kernel));
  kernel_engines_.emplace_back();
  return numKernels() - 1;
}

const std::optional<SegmentEngine>& HostIrContainer::kernelEngine(int64_t kernel_id) const {
  kernel(kernel_id);  // checks the id
  return kernel_engines_[static_cast<size_t>(kernel_id)];
}

void HostIrContainer::setKernelEngine(int64_t kernel_id, SegmentEngine engine) {
  kernel(kernel_id);  // checks the id
  kernel_engines_[static_cast<size_t>(kernel_id)] = std::move(engine);
}

Fusion* HostIrContainer::kernel(int64_t kernel_id) const {
  HOSTIR_CHECK(kernel_id >= 0 && kernel_id < numKernels(), "no kernel with id ", kernel_id,
               " in this HostIrContainer; ids 0 to ", numKernels() - 1,
               " are registered (HostIrContainer::addKernel)");
  return kernels_[static_cast<size_t>(kernel_id)].get();
}

std::vector<HostUnit*> HostIrContainer::hostUnits() const {
  std::vector<HostUnit*> units;
  for (const auto& statement : statements()) {
    if (auto* unit = dynamic_cast<HostUnit*>(statement.get())) {
      units.push_back(unit);
    }
  }
  return units;
}

std::vector<HostUnit*> HostIrContainer::postedHostUnits() const {
  std::set<const HostUnit*> posted;
  std::vector<const Scope*> scopes{&top_level_};
  while (!scopes.empty()) {
    const Scope* scope = scopes.back();
    scopes.pop_back();
    for (const Expr* expr : *scope) {
      if (const auto* post = dynamic_cast<const PostOnStream*>(expr)) {
        posted.insert(post->hostUnit());
        for (const PostOnStream::Variant& variant : post->variants()) {
          posted.insert(variant.unit);
        }
      } else if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        scopes.push_back(&loop->body());
      }
    }
  }
  std::vector<HostUnit*> units = hostUnits();
  std::erase_if(units, [&](const HostUnit* unit) { return posted.count(unit) == 0; });
  return units;
}

std::unique_ptr<HostIrContainer> HostIrContainer::clone() const {
  auto copy = std::make_unique<HostIrContainer>();
  // copyFusion keeps every statement's name, so the copy prints the same;
  // loop bodies come along through ForLoop::cloneExtrasInto.
  IrCloner cloner = copyFusion(*this, *copy);
  copy->device_targets_ = device_targets_;
  for (const Expr* expr : top_level_) {
    copy->top_level_.push_back(cloner.clone(expr));
  }
  for (const auto& kernel : kernels_) {
    auto kernel_copy = std::make_unique<Fusion>();
    copyFusion(*kernel, *kernel_copy);
    copy->kernels_.push_back(std::move(kernel_copy));
  }
  copy->kernel_engines_ = kernel_engines_;
  return copy;
}

namespace {

// Which derived scalars a printed program names, and where it defines them.
// A derived scalar whose expression nests another derived one (e.g.
// `( StreamIdx * ceilDiv(ceilDiv(i0, 2), 4) )`) gets a name; one-level
// expressions of symbols (`ceilDiv(i0, 4)`, `( StreamIdx % numberOfStreams )`)
// stay inline. Each is defined at the top of the innermost loop whose index
// it depends on, or of the program.
class ScalarNaming {
 public:
  std::map<const Expr*, std::vector<const Scalar*>> run(const Scope& top) {
    walk(top);
    std::map<const Expr*, std::vector<const Scalar*>> by_scope;
    for (const auto& [scalar, scope] : named_) {
      by_scope[scope].push_back(scalar);
    }
    for (auto& [scope, scalars] : by_scope) {
      // Operands are created before the scalars they define.
      std::sort(scalars.begin(), scalars.end(),
                [](const Scalar* a, const Scalar* b) { return a->name() < b->name(); });
    }
    return by_scope;
  }

 private:
  void walk(const Scope& scope) {
    for (const Expr* expr : scope) {
      std::vector<const Val*> vals(expr->inputs().begin(), expr->inputs().end());
      vals.insert(vals.end(), expr->outputs().begin(), expr->outputs().end());
      vals.insert(vals.end(), expr->attributeVals().begin(), expr->attributeVals().end());
      for (const Val* val : vals) {
        visitVal(val);
      }
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        loops_.push_back(loop);
        walk(loop->body());
        loops_.pop_back();
      }
    }
  }

  void visitVal(const Val* val) {
    if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
      for (const auto* domain : {&tv->getLogicalDomain(), &tv->getLoopDomain()}) {
        for (const IterDomain* id : *domain) {
          visitScalar(id->extent());
        }
      }
    } else if (const auto* id = dynamic_cast<const IterDomain*>(val)) {
      visitScalar(id->extent());
    } else if (const auto* stream = dynamic_cast<const Stream*>(val)) {
      if (stream->hasIndex()) {
        visitScalar(stream->index());
      }
    } else {
      visitScalar(val);
    }
  }

  // Returns whether `val` is a derived scalar (has a definition).
  bool visitScalar(const Val* val) {
    const auto* scalar = dynamic_cast<const Scalar*>(val);
    if (scalar == nullptr || scalar->definition() == nullptr) {
      return false;
    }
    bool nests = false;
    for (const Val* operand : scalar->definition()->inputs()) {
      nests = visitScalar(operand) || nests;
    }
    if (nests && named_.count(scalar) == 0) {
      named_[scalar] = innermostLoopOf(scalar);
    }
    return true;
  }

  const Expr* innermostLoopOf(const Scalar* scalar) const {
    for (auto loop = loops_.rbegin(); loop != loops_.rend(); ++loop) {
      if (dependsOn(scalar, (*loop)->index())) {
        return *loop;
      }
    }
    return nullptr;
  }

  static bool dependsOn(const Val* val, const Val* index) {
    if (val == index) {
      return true;
    }
    if (const auto* scalar = dynamic_cast<const Scalar*>(val);
        scalar != nullptr && index->vtype() == ValType::Scalar) {
      const auto* index_scalar = static_cast<const Scalar*>(index);
      if (!scalar->symbol().empty() && scalar->symbol() == index_scalar->symbol()) {
        return true;  // the loop index symbol (StreamIdx), whichever Val holds it
      }
    }
    if (val->definition() == nullptr) {
      return false;
    }
    for (const Val* operand : val->definition()->inputs()) {
      if (dependsOn(operand, index)) {
        return true;
      }
    }
    return false;
  }

  std::vector<const ForLoop*> loops_;
  std::map<const Scalar*, const Expr*> named_;
};

}  // namespace

std::string HostIrContainer::toString() const {
  std::stringstream ss;
  {
    ScalarNames names(ScalarNaming().run(top_level_));
    // The program's inputs and outputs with their meshes, where they have
    // one: "T0_g_float[...] (DeviceMesh{0 1})".
    auto withMesh = [](const Val* val) {
      const auto* tv = dynamic_cast<const TensorView*>(val);
      return tv != nullptr ? tv->toString() : val->toInlineString();
    };
    auto list = [&withMesh](const std::vector<Val*>& vals, const std::string& separator) {
      std::string text;
      for (size_t i = 0; i < vals.size(); ++i) {
        text += (i == 0 ? "" : separator) + withMesh(vals[i]);
      }
      return text;
    };
    std::string header =
        "%HostIrContainer { (" + list(inputs_, ", ") + ") -> (" + list(outputs_, ", ") + ") :\n";
    if (header.size() > 120) {
      // One tensor a line: a header of several sharded tensors runs long.
      header = "%HostIrContainer {\n    (" + list(inputs_, ",\n     ") + ")\n -> (" +
               list(outputs_, ",\n     ") + ") :\n";
    }
    ss << header;
    if (!device_targets_.empty()) {
      // Wrapped so that a large mesh does not make one endless line.
      std::string line = "  targets:";
      for (const auto& [device, target] : device_targets_) {
        std::string entry = " " + std::to_string(device) + "=" + target.describe();
        if (line.size() + entry.size() > 150) {
          ss << line << "\n";
          line = "          ";
        }
        line += entry;
      }
      ss << line << "\n";
    }
    for (const Scalar* scalar : ScalarNames::definitionsIn(nullptr)) {
      ss << "  " << ScalarNames::definitionLine(scalar) << "\n";
    }
    ss << top_level_.toString(1) << "} // %HostIrContainer\n";
  }
  for (const HostUnit* unit : postedHostUnits()) {
    ss << "\n" << unit->toString();
  }
  for (size_t id = 0; id < kernels_.size(); ++id) {
    const std::optional<SegmentEngine>& engine = kernel_engines_[id];
    ss << "\nKernel " << id << (engine.has_value() ? " (" + describe(*engine) + ")" : "") << ":\n"
       << indentLines(kernels_[id]->toString(), 1);
  }
  return ss.str();
}

}  // namespace hostir
