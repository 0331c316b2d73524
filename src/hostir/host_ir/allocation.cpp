#include "hostir/host_ir/allocation.h"

#include <sstream>

#include "hostir/host_ir/host_dispatch.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

// -------------------------------------------------------------------- Allocate

Allocate::Allocate(Fusion* container, TensorView* buffer, bool zero_init)
    : Allocate(container, buffer, buffer->getMemoryType(), zero_init) {}

Allocate::Allocate(Fusion* container, TensorView* buffer, MemoryType memory_type, bool zero_init)
    : Allocate(container, std::vector<Val*>{}, std::vector<Val*>{buffer},
               std::vector<Attribute>{static_cast<int64_t>(memory_type), zero_init}) {}

void Allocate::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.empty() && outputs_.size() == 1 && attributes_.size() == 2 && attribute_vals_.empty(),
      "Allocate built with the wrong number of operands");
  HOSTIR_CHECK(outputs_[0]->vtype() == ValType::TensorView, "ALLOCATE allocates a tensor, not ",
               outputs_[0]->toInlineString());
}

TensorView* Allocate::buffer() const {
  return output(0)->as<TensorView>();
}

std::string Allocate::sizeString() const {
  std::string size;
  for (IterDomain* id : buffer()->getAllocationDomain()) {
    if (id->isReduction() || id->isDeviceDim()) {
      continue;
    }
    std::string extent = id->extent()->toInlineString();
    size = size.empty() ? extent : "( " + size + " * " + extent + " )";
  }
  return size.empty() ? "1" : size;
}

std::string Allocate::toString(int indent) const {
  std::stringstream ss;
  // The buffer is the printed output; repeating it inside doubled the line.
  ss << indentString(indent) << buffer()->toInlineString()
     << " = ALLOCATE(mem_type=" << hostir::toString(memoryType()) << ", size=" << sizeString()
     << ", zero_init=" << (zeroInit() ? "true" : "false") << ")\n";
  return ss.str();
}

std::string Allocate::toInlineString() const {
  return "Allocate(" + buffer()->toInlineString() + ")";
}

// ------------------------------------------------------------------ Deallocate

Deallocate::Deallocate(Fusion* container, TensorView* buffer)
    : Deallocate(container, std::vector<Val*>{buffer}, std::vector<Val*>{}, {}) {}

void Deallocate::validateStructure() const {
  HOSTIR_ASSERT(
      inputs_.size() == 1 && outputs_.empty() && attributes_.empty() && attribute_vals_.empty(),
      "Deallocate built with the wrong number of operands");
  HOSTIR_CHECK(inputs_[0]->vtype() == ValType::TensorView, "Deallocate frees a tensor, not ",
               inputs_[0]->toInlineString());
}

TensorView* Deallocate::buffer() const {
  return input(0)->as<TensorView>();
}

std::string Deallocate::toString(int indent) const {
  return indentString(indent) + "Deallocate " + buffer()->toInlineString() + "\n";
}

HOSTIR_DEFINE_HOST_EXPR(Allocate)
HOSTIR_DEFINE_HOST_EXPR(Deallocate)

}  // namespace hostir
