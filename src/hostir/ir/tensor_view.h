#pragma once

#include <optional>
#include <vector>

#include "hostir/ir/device_mesh.h"
#include "hostir/ir/encoding.h"
#include "hostir/ir/tensor_domain.h"

namespace hostir {

// A tensor in a fusion or host program: a domain, a dtype, a memory type and
// optionally the mesh of devices it lives on.
class TensorView : public Val {
 public:
  TensorView(Fusion* container, TensorDomain* domain, DataType dtype,
             MemoryType memory_type = MemoryType::Local);

  TensorDomain* domain() const {
    return domain_;
  }
  const std::vector<IterDomain*>& getLogicalDomain() const {
    return domain_->logical();
  }
  const std::vector<IterDomain*>& getLoopDomain() const {
    return domain_->loop();
  }
  const std::vector<IterDomain*>& getAllocationDomain() const {
    return domain_->allocation();
  }
  void setAllocationDomain(std::vector<IterDomain*> allocation, bool contiguous);
  // Logical axes without reductions: the tensor's shape.
  std::vector<IterDomain*> shapeDomain() const {
    return TensorDomain::noReductions(domain_->logical());
  }
  // Rank of the tensor's shape.
  int64_t rank() const {
    return static_cast<int64_t>(shapeDomain().size());
  }

  // Loop-domain access, as in nvFuser: axis(-1) is the innermost.
  int64_t nDims() const {
    return static_cast<int64_t>(domain_->loop().size());
  }
  IterDomain* axis(int64_t position) const;

  TensorView* split(int64_t axis, int64_t factor, bool inner_split = true);
  TensorView* split(int64_t axis, Val* factor, bool inner_split = true);
  TensorView* merge(int64_t axis_outer, int64_t axis_inner);
  TensorView* merge(int64_t axis_outer) {
    return merge(axis_outer, axis_outer + 1);
  }

  MemoryType getMemoryType() const {
    return memory_type_;
  }
  void setMemoryType(MemoryType memory_type) {
    memory_type_ = memory_type;
  }

  void setDeviceMesh(const DeviceMesh& mesh) {
    mesh_ = mesh;
  }
  bool hasDeviceMesh() const {
    return mesh_.has_value() && !mesh_->empty();
  }
  const DeviceMesh& getDeviceMesh() const;

  // An optional layout request (docs/targets.md), printed after the shape
  // ("T1_g_float[iS0{i0}, iS1{i1}]#matmul_rhs").
  void setEncoding(std::optional<Encoding> encoding) {
    encoding_ = std::move(encoding);
  }
  const std::optional<Encoding>& encoding() const {
    return encoding_;
  }
  bool hasEncoding() const {
    return encoding_.has_value();
  }

  // A fact about the values, not the layout: every entry (r, c) of the last
  // two axes with c > r is exactly 0 (a causal softmax's probabilities,
  // which differentiation saves for the backward). Whoever sets it vouches
  // for the values; GEMMs reading such a tensor skip its zero blocks
  // (skipCausalZeroBlocks). Printed as "#zero_above_diagonal".
  void setZeroAboveDiagonal(bool zero) {
    zero_above_diagonal_ = zero;
  }
  bool zeroAboveDiagonal() const {
    return zero_above_diagonal_;
  }

  bool sameAs(const Val* other) const override;
  Val* cloneInto(IrCloner& cloner) const override;
  // With the device mesh, when set.
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  TensorDomain* domain_;
  MemoryType memory_type_;
  std::optional<DeviceMesh> mesh_;
  std::optional<Encoding> encoding_;
  bool zero_above_diagonal_ = false;
};

}  // namespace hostir
