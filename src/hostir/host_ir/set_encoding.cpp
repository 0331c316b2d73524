#include "hostir/host_ir/set_encoding.h"

#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

std::vector<Attribute> layoutAttributes(const DeviceLayouts& layouts) {
  HOSTIR_ASSERT(layouts.devices.size() == layouts.layouts.size(), "one layout per device expected");
  std::vector<int64_t> tiles;
  std::vector<int64_t> n_axes;
  for (const Layout& layout : layouts.layouts) {
    tiles.push_back(layout.isIdentity() ? 0 : layout.n_block);
    n_axes.push_back(layout.n_axis);
  }
  return {layouts.devices, tiles, n_axes};
}

DeviceLayouts layoutsFromAttributes(const Expr* expr) {
  DeviceLayouts result;
  result.devices = expr->attribute<std::vector<int64_t>>(0);
  const auto& tiles = expr->attribute<std::vector<int64_t>>(1);
  const auto& n_axes = expr->attribute<std::vector<int64_t>>(2);
  for (size_t i = 0; i < tiles.size(); ++i) {
    result.layouts.push_back(tiles[i] == 0 ? Layout::identity()
                                           : Layout::dnnlBlocked(tiles[i], n_axes[i]));
  }
  return result;
}

std::optional<Layout> layoutOf(const Expr* expr, int64_t device) {
  DeviceLayouts layouts = layoutsFromAttributes(expr);
  for (size_t i = 0; i < layouts.devices.size(); ++i) {
    if (layouts.devices[i] == device) {
      return layouts.layouts[i];
    }
  }
  return std::nullopt;
}

// Checks the operands of a conversion between `plain` and `encoded`.
void validateConversion(const Expr* expr, const char* name, Val* plain_val, Val* encoded_val) {
  HOSTIR_ASSERT(expr->inputs().size() == 1 && expr->outputs().size() == 1 &&
                    expr->attributes().size() == 3 && expr->attributeVals().empty(),
                name, " built with the wrong number of operands");
  auto* plain = dynamic_cast<TensorView*>(plain_val);
  auto* encoded = dynamic_cast<TensorView*>(encoded_val);
  HOSTIR_CHECK(plain != nullptr && encoded != nullptr, name, " converts a tensor, got ",
               expr->input(0)->toInlineString(), " -> ", expr->output(0)->toInlineString());
  HOSTIR_CHECK(encoded->hasEncoding(), name, " of ", plain->toInlineString(), ": ",
               encoded->toInlineString(),
               " has no encoding; the encoded side must carry one (TensorView::setEncoding)");
  HOSTIR_CHECK(!plain->hasEncoding(), name, ": ", plain->toInlineString(),
               " already carries an encoding; the plain side must carry none");
  HOSTIR_CHECK(plain->dtype() == encoded->dtype() && plain->rank() == encoded->rank(), name, " of ",
               plain->toInlineString(), " and ", encoded->toInlineString(),
               ": both sides must have the same dtype and rank");
  for (size_t i = 0; i < expr->attribute<std::vector<int64_t>>(1).size(); ++i) {
    HOSTIR_CHECK(expr->attribute<std::vector<int64_t>>(1)[i] == 0 || encoded->rank() == 2, name,
                 " of ", encoded->toInlineString(), ": panel layouts need a 2-D tensor");
  }
}

std::string printConversion(const Expr* expr, const char* name, int indent,
                            const std::string& pad) {
  std::stringstream ss;
  ss << pad << expr->output(0)->toInlineString() << "\n"
     << pad << "   = " << name << "( " << expr->input(0)->toInlineString();
  DeviceLayouts layouts = layoutsFromAttributes(expr);
  if (!layouts.devices.empty()) {
    ss << ", layouts = (";
    for (size_t i = 0; i < layouts.devices.size(); ++i) {
      ss << (i == 0 ? "" : ", ") << layouts.devices[i] << ": " << layouts.layouts[i].toString();
    }
    ss << ")";
  }
  ss << " )\n";
  return ss.str();
}

}  // namespace

// ----------------------------------------------------------------- SetEncoding

SetEncoding::SetEncoding(Fusion* container, TensorView* in, TensorView* out,
                         const DeviceLayouts& layouts)
    : SetEncoding(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                  layoutAttributes(layouts)) {}

void SetEncoding::validateStructure() const {
  validateConversion(this, "SetEncoding", inputs_.at(0), outputs_.at(0));
}

TensorView* SetEncoding::in() const {
  return input(0)->as<TensorView>();
}
TensorView* SetEncoding::out() const {
  return output(0)->as<TensorView>();
}
DeviceLayouts SetEncoding::deviceLayouts() const {
  return layoutsFromAttributes(this);
}
std::optional<Layout> SetEncoding::layoutFor(int64_t device) const {
  return layoutOf(this, device);
}
std::string SetEncoding::toString(int indent) const {
  return printConversion(this, "SetEncoding", indent, indentString(indent));
}

// --------------------------------------------------------------- UnsetEncoding

UnsetEncoding::UnsetEncoding(Fusion* container, TensorView* in, TensorView* out,
                             const DeviceLayouts& layouts)
    : UnsetEncoding(container, std::vector<Val*>{in}, std::vector<Val*>{out},
                    layoutAttributes(layouts)) {}

void UnsetEncoding::validateStructure() const {
  validateConversion(this, "UnsetEncoding", outputs_.at(0), inputs_.at(0));
}

TensorView* UnsetEncoding::in() const {
  return input(0)->as<TensorView>();
}
TensorView* UnsetEncoding::out() const {
  return output(0)->as<TensorView>();
}
DeviceLayouts UnsetEncoding::deviceLayouts() const {
  return layoutsFromAttributes(this);
}
std::optional<Layout> UnsetEncoding::layoutFor(int64_t device) const {
  return layoutOf(this, device);
}
std::string UnsetEncoding::toString(int indent) const {
  return printConversion(this, "UnsetEncoding", indent, indentString(indent));
}

HOSTIR_DEFINE_HOST_EXPR(SetEncoding)
HOSTIR_DEFINE_HOST_EXPR(UnsetEncoding)

}  // namespace hostir
