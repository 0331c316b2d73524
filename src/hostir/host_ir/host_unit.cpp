#include "hostir/host_ir/host_unit.h"

#include <algorithm>
#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/host_ir/printing.h"
#include "hostir/ir/cloner.h"

namespace hostir {

// -------------------------------------------------------------------- HostUnit

HostUnit::HostUnit(Fusion* container, std::unique_ptr<Fusion> fusion)
    : HostUnit(container, {}, {}, {}) {
  HOSTIR_CHECK(fusion != nullptr, "a HostUnit needs the fusion of its segment");
  HOSTIR_CHECK(fusion.get() != container, "a HostUnit cannot own its own container");
  fusion_ = std::move(fusion);
}

void HostUnit::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.empty() && outputs_.empty() && attributes_.empty() && attribute_vals_.empty(),
      "HostUnit takes no operands; PostOnStream gives it its Vals");
}

Fusion* HostUnit::fusion() const {
  HOSTIR_ASSERT(fusion_ != nullptr, "HostUnit ", name(), " has no fusion");
  return fusion_.get();
}

bool HostUnit::sameAs(const Expr* other) const {
  if (other == this) {
    return true;
  }
  const auto* unit = dynamic_cast<const HostUnit*>(other);
  return unit != nullptr && engine_ == unit->engine_ &&
         fusion()->toString() == unit->fusion()->toString();
}

void HostUnit::cloneExtrasInto(Expr* clone, IrCloner& /*cloner*/) const {
  auto copy = std::make_unique<Fusion>();
  copyFusion(*fusion(), *copy);
  clone->as<HostUnit>()->fusion_ = std::move(copy);
  clone->as<HostUnit>()->engine_ = engine_;
}

std::string HostUnit::toInlineString() const {
  return "HostUnit " + std::to_string(name());
}

std::string HostUnit::toString(int indent) const {
  std::string engine = engine_.has_value() ? " (" + describe(*engine_) + ")" : "";
  return indentString(indent) + toInlineString() + engine + ":\n" +
         indentLines(fusion()->toString(), indent + 1);
}

// ---------------------------------------------------------------- PostOnStream

PostOnStream::PostOnStream(Fusion* container, HostUnit* host_unit, std::vector<Val*> inputs,
                           std::vector<Val*> outputs)
    : PostOnStream(container, std::move(inputs), std::move(outputs), {}) {
  HOSTIR_CHECK(host_unit != nullptr, "PostOnStream needs the HostUnit it runs");
  HOSTIR_CHECK(host_unit->container() == container, "PostOnStream of ", host_unit->toInlineString(),
               ", which belongs to another container");
  const Fusion* segment = host_unit->fusion();
  auto check_matches = [&](const std::vector<Val*>& given, const std::vector<Val*>& expected,
                           const char* what) {
    HOSTIR_CHECK(given.size() == expected.size(), "PostOnStream of ", host_unit->toInlineString(),
                 " got ", given.size(), " ", what, " (", valListString(given),
                 ") but its fusion has ", expected.size(), " (", valListString(expected), ")");
    for (size_t i = 0; i < given.size(); ++i) {
      HOSTIR_CHECK(
          given[i]->vtype() == expected[i]->vtype() && given[i]->dtype() == expected[i]->dtype(),
          "PostOnStream of ", host_unit->toInlineString(), ": ", what, " ", i, " ",
          given[i]->toInlineString(), " does not match the fusion's ",
          expected[i]->toInlineString(), "; give a Val of the same kind and dtype");
    }
  };
  check_matches(inputs_, segment->inputs(), "inputs");
  check_matches(outputs_, segment->outputs(), "outputs");
  host_unit_ = host_unit;
}

void PostOnStream::validateStructure() const {
  HOSTIR_ASSERT(attributes_.empty() && attribute_vals_.empty(),
                "PostOnStream carries its HostUnit as a reference, not an attribute");
}

HostUnit* PostOnStream::hostUnit() const {
  HOSTIR_ASSERT(host_unit_ != nullptr, "PostOnStream ", name(), " has no HostUnit");
  return host_unit_;
}

void PostOnStream::setVariants(std::vector<Variant> variants) {
  for (const Variant& variant : variants) {
    HOSTIR_ASSERT(variant.unit != nullptr && variant.unit->container() == container(),
                  "a variant of PostOnStream must be a HostUnit of its container");
  }
  variants_ = std::move(variants);
  if (!variants_.empty()) {
    host_unit_ = variants_.front().unit;
  }
}

HostUnit* PostOnStream::hostUnitFor(int64_t device) const {
  for (const Variant& variant : variants_) {
    if (std::find(variant.devices.begin(), variant.devices.end(), device) !=
        variant.devices.end()) {
      return variant.unit;
    }
  }
  return hostUnit();
}

bool PostOnStream::sameAs(const Expr* other) const {
  if (other == this) {
    return true;
  }
  const auto* post = dynamic_cast<const PostOnStream*>(other);
  return post != nullptr && Expr::sameAs(other) && hostUnit()->sameAs(post->hostUnit());
}

void PostOnStream::cloneExtrasInto(Expr* clone, IrCloner& cloner) const {
  clone->as<PostOnStream>()->host_unit_ = cloner.clone(host_unit_);
  for (const Variant& variant : variants_) {
    clone->as<PostOnStream>()->variants_.push_back({cloner.clone(variant.unit), variant.devices});
  }
}

std::string PostOnStream::toString(int indent) const {
  std::stringstream ss;
  ss << indentString(indent) << "PostOnStream (";
  if (variants_.empty()) {
    ss << hostUnit()->toInlineString();
  }
  for (size_t i = 0; i < variants_.size(); ++i) {
    ss << (i == 0 ? "" : " | ") << variants_[i].unit->toInlineString() << " on (";
    for (size_t d = 0; d < variants_[i].devices.size(); ++d) {
      ss << (d == 0 ? "" : " ") << variants_[i].devices[d];
    }
    ss << ")";
  }
  ss << ", inputs=(" << valListString(inputs_) << "), outputs=(" << valListString(outputs_)
     << "))\n";
  return ss.str();
}

HOSTIR_DEFINE_HOST_EXPR(HostUnit)
HOSTIR_DEFINE_HOST_EXPR(PostOnStream)

}  // namespace hostir
