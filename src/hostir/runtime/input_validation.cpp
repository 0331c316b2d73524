#include "hostir/runtime/input_validation.h"

#include <ATen/MemoryOverlap.h>

#include <cstdint>
#include <limits>

#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {
// "input 2 T2_g_float[...]", formatted only when a check fails: validation
// runs on every call, and printing the tensor costs more than the checks.
struct InputName {
  size_t index;
  const TensorView* tv;
};

std::ostream& operator<<(std::ostream& os, const InputName& name) {
  return os << "input " << name.index << " " << name.tv->toInlineString();
}

// The size a constant extent has on `my_device`: its torch.chunk piece
// there (the last devices fewer rows, or none, when the devices do not
// divide it); the largest piece where the device is not known.
int64_t expectedSize(const TensorView* tv, const IterDomain* id, int64_t extent, int64_t devices,
                     int64_t my_device) {
  if (devices <= 1) {
    return extent;
  }
  const DeviceMesh& mesh = tv->getDeviceMesh();
  if (my_device < 0 || !mesh.has(my_device)) {
    return ceilDivRows(extent, devices);
  }
  return rowChunk(extent, devices, mesh.idxOf(my_device, shardingParallelType(tv, id))).rows;
}

void validateTensor(const TensorView* tv, const at::Tensor& tensor, size_t index,
                    const std::string& what, int64_t my_device) {
  const InputName name{index, tv};
  HOSTIR_CHECK(tensor.defined(), what, ": ", name, " is an undefined tensor");
  HOSTIR_CHECK(tensor.scalar_type() == toAtenType(tv->dtype()), what, ": ", name, " expects dtype ",
               toString(tv->dtype()), " but got ", c10::toString(tensor.scalar_type()));
  if (tv->hasEncoding() && tv->encoding()->isResolved() &&
      !tv->encoding()->resolved->isIdentity()) {
    // A launch must get its data in the layout its variant was compiled for.
    const int64_t n_block = tv->encoding()->resolved->n_block;
    HOSTIR_CHECK(tensor.dim() == 3 && tensor.size(2) == n_block, what, ": ", name, " expects ",
                 tv->encoding()->resolved->blockName(), ": blocks of ", n_block,
                 " columns [ceilDiv(N, ", n_block, "), K rounded up to ", Layout::kDnnlKBlock, ", ",
                 n_block, "] but got sizes ", tensor.sizes(),
                 "; the data was laid out for another target than this variant's");
    return;
  }
  std::vector<IterDomain*> shape = tv->shapeDomain();
  std::vector<int64_t> divisors = shardDivisors(tv);
  HOSTIR_CHECK(static_cast<int64_t>(shape.size()) == tensor.dim(), what, ": ", name,
               " expects rank ", shape.size(), " but got sizes ", tensor.sizes());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    int64_t size = tensor.size(static_cast<int64_t>(axis));
    if (shape[axis]->isBroadcast()) {
      HOSTIR_CHECK(size == 1, what, ": ", name, " axis ", axis, " ", shape[axis]->toInlineString(),
                   " is a broadcast axis and needs size 1, got ", size);
    }
    const auto* extent = shape[axis]->extent()->as<Scalar>();
    if (extent->isConstInt()) {
      const int64_t expected =
          expectedSize(tv, shape[axis], extent->constInt(), divisors[axis], my_device);
      HOSTIR_CHECK(expected == size, what, ": ", name, " axis ", axis, " expects size ", expected,
                   divisors[axis] > 1 ? " (this device's shard)" : "", " but got ", size);
    }
  }
  const std::vector<bool>& contiguity = tv->domain()->contiguity();
  bool needs_contiguous = !contiguity.empty() && std::all_of(contiguity.begin(), contiguity.end(),
                                                             [](bool c) { return c; });
  HOSTIR_CHECK(!needs_contiguous || tensor.is_contiguous(), what, ": ", name,
               " was declared contiguous (makeContigTensor) but got a tensor with strides ",
               tensor.strides(), "; pass tensor.contiguous() or declare it makeSymbolicTensor");
}

// A scalar input's value must be one its dtype holds: an integer for Int64
// and Int32 (in range; a bool counts as 0 or 1, as torch takes it), a bool
// or 0/1 for Bool, any real number for a floating dtype, any number for a
// complex one.
void validateScalar(const Val* input, const PolymorphicValue& value, size_t index,
                    const std::string& what) {
  const DataType dtype = input->dtype();
  auto fail = [&](const std::string& valid) {
    HOSTIR_THROW("scalar value out of its dtype: ", what, ": input ", index, " ",
                 input->toInlineString(), " has dtype ", toString(dtype), " but got ",
                 describeValue(value), "; give ", valid);
  };
  const auto* integer = std::get_if<int64_t>(&value);
  if (std::holds_alternative<std::complex<double>>(value) && !isComplexType(dtype)) {
    fail("a real number (a complex one needs a ComplexFloat or ComplexDouble scalar)");
  }
  if (dtype == DataType::Bool) {
    if (!std::holds_alternative<bool>(value) && !(integer && (*integer == 0 || *integer == 1))) {
      fail("True, False, 0 or 1");
    }
  } else if (dtype == DataType::Int32) {
    constexpr auto low = static_cast<int64_t>(std::numeric_limits<int32_t>::min());
    constexpr auto high = static_cast<int64_t>(std::numeric_limits<int32_t>::max());
    if (std::holds_alternative<double>(value) || (integer && (*integer < low || *integer > high))) {
      fail("an integer from -2147483648 to 2147483647 (or a bool)");
    }
  } else if (isIntegralType(dtype)) {
    if (std::holds_alternative<double>(value)) {
      fail("an integer (or a bool)");
    }
  }
}

// Whether two tensors may share bytes. ATen decides for dense tensors; for
// strided ones it gives up (TooHard) and the spans of their storage decide,
// which may reject two interleaved views that never touch (a column each).
bool mayOverlap(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) {
    return false;
  }
  at::MemOverlapStatus status = at::get_overlap_status(a, b);
  if (status != at::MemOverlapStatus::TooHard) {
    return status != at::MemOverlapStatus::No;
  }
  if (!a.storage().is_alias_of(b.storage())) {
    return false;
  }
  auto span = [](const at::Tensor& t) {
    int64_t low = t.storage_offset();
    int64_t high = t.storage_offset();
    for (int64_t axis = 0; axis < t.dim(); ++axis) {
      const int64_t reach = (t.size(axis) - 1) * t.stride(axis);
      (reach < 0 ? low : high) += reach;
    }
    const auto bytes = static_cast<int64_t>(t.element_size());
    return std::pair<int64_t, int64_t>{low * bytes, (high + 1) * bytes};
  };
  auto [a_low, a_high] = span(a);
  auto [b_low, b_high] = span(b);
  return a_low < b_high && b_low < a_high;
}
}  // namespace

void validateOutputsDoNotAliasInputs(const std::vector<Val*>& input_vals,
                                     const std::vector<PolymorphicValue>& inputs,
                                     const std::vector<Val*>& output_vals,
                                     const std::vector<at::Tensor>& outputs,
                                     const std::string& what) {
  for (size_t o = 0; o < outputs.size() && o < output_vals.size(); ++o) {
    for (size_t i = 0; i < inputs.size() && i < input_vals.size(); ++i) {
      const auto* input = std::get_if<at::Tensor>(&inputs[i]);
      // An output that is the input itself is returned as given.
      if (input == nullptr || output_vals[o] == input_vals[i] || !mayOverlap(outputs[o], *input)) {
        continue;
      }
      HOSTIR_THROW("an output buffer aliases an input: ", what, ": the buffer given for output ", o,
                   " ", output_vals[o]->toInlineString(), " shares memory with input ", i, " ",
                   input_vals[i]->toInlineString(),
                   "; the program would overwrite the input while reading it. Give an output "
                   "tensor of its own (e.g. torch.empty_like), or clone the input");
    }
  }
}

void validateInputs(const std::vector<Val*>& expected, const std::vector<PolymorphicValue>& given,
                    const std::string& what, int64_t my_device) {
  HOSTIR_CHECK(expected.size() == given.size(), what, " expects ", expected.size(),
               " inputs but got ", given.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const Val* input = expected[i];
    if (const auto* tv = dynamic_cast<const TensorView*>(input)) {
      HOSTIR_CHECK(isTensor(given[i]), what, ": input ", i, " ", tv->toInlineString(),
                   " expects a tensor but got ", describeValue(given[i]));
      const at::Tensor& tensor = std::get<at::Tensor>(given[i]);
      bool absent_here =
          my_device >= 0 && tv->hasDeviceMesh() && !tv->getDeviceMesh().has(my_device);
      if (absent_here) {
        HOSTIR_CHECK(!tensor.defined(), what, ": input ", i, " ", tv->toInlineString(),
                     " lives on ", tv->getDeviceMesh().toString(), ", not on device ", my_device,
                     "; pass an undefined tensor (at::Tensor()) for it");
        continue;
      }
      validateTensor(tv, tensor, i, what, my_device);
    } else {
      HOSTIR_CHECK(hasValue(given[i]) && !isTensor(given[i]), what, ": input ", i, " ",
                   input->toInlineString(), " expects a scalar but got ", describeValue(given[i]));
      validateScalar(input, given[i], i, what);
    }
  }
}

void validateOutputBuffer(const Val* output, const at::Tensor& buffer,
                          const std::vector<int64_t>& sizes) {
  HOSTIR_CHECK(buffer.defined(), "the buffer given for output ", output->toInlineString(),
               " is undefined");
  HOSTIR_CHECK(buffer.scalar_type() == toAtenType(output->dtype()), "the buffer given for output ",
               output->toInlineString(), " has dtype ", c10::toString(buffer.scalar_type()),
               "; expected ", toString(output->dtype()));
  HOSTIR_CHECK(buffer.sizes() == at::IntArrayRef(sizes), "the buffer given for output ",
               output->toInlineString(), " has sizes ", buffer.sizes(), "; expected ",
               at::IntArrayRef(sizes));
}

}  // namespace hostir
