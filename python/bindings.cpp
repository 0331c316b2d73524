// The `hostir._C` extension module: a fid-addressed builder over a C++
// Fusion (what the Python FusionDefinition replays its records into) and the
// executors that run it on torch tensors. The Python package (python/hostir)
// owns records, the FusionCache and the FusionState; this file owns the IR.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/segment/host_lowering_policy.h"
#include "hostir/segment/segment_candidate_finder.h"

#ifndef HOSTIR_VERSION
#define HOSTIR_VERSION "0.0.0"
#endif

namespace py = pybind11;

namespace hostir::python {
namespace {

// "T3" for tensor 3, "S5" for scalar 5: a Val's identity inside its fusion,
// stable across rebuilds of the same records (names are given in creation
// order) and across copies (copyFusion keeps names).
std::string valKey(const Val* val) {
  // Appended, not `"T" + std::to_string(...)`: GCC 12 warns (-Wrestrict) on
  // that form, falsely (GCC PR 105329).
  std::string key(1, val->isA<TensorView>() ? 'T' : 'S');
  key += std::to_string(val->name());
  return key;
}

// One lowered program for one input signature.
struct Runner {
  std::unique_ptr<HostExecutor> single;
  std::unique_ptr<MultiDeviceExecutor> multi;
  // Per output: mesh devices, mesh shape, {parallel type: logical axis}.
  std::vector<TensorSharding> shardings;

  std::vector<at::Tensor> run(const std::vector<PolymorphicValue>& inputs,
                              const std::vector<at::Tensor>& outputs) {
    if (single) {
      return single->run(inputs, outputs);
    }
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size());
    for (const PolymorphicValue& input : inputs) {
      HOSTIR_CHECK(isTensor(input), "a fusion with a device mesh takes tensor inputs only; got ",
                   describeValue(input));
      tensors.push_back(std::get<at::Tensor>(input));
    }
    return multi->run(tensors, outputs);
  }
  std::string hostIr() const {
    return single ? single->hostProgram().toString() : multi->hostProgram().toString();
  }
};

// Input kinds in a signature.
enum SignatureKind : int64_t { kTensor = 1, kInt, kDouble, kBool, kUndefined };

class Definition {
 public:
  Definition() : fusion_(std::make_unique<Fusion>()) {}

  // --- definitions ---------------------------------------------------------

  int64_t defineTensor(const std::vector<int64_t>& shape,
                       const std::vector<std::optional<bool>>& contiguity, DataType dtype) {
    HOSTIR_CHECK(contiguity.empty() || contiguity.size() == shape.size(),
                 "define_tensor: contiguity has ", contiguity.size(), " entries but shape has ",
                 shape.size(), "; give one per axis (None for a broadcast axis)");
    FusionGuard guard(fusion_.get());
    std::vector<IterDomain*> ids;
    std::vector<bool> contiguous;
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      int64_t size = shape[axis];
      HOSTIR_CHECK(size >= -1, "define_tensor: shape[", axis, "] = ", size,
                   " is invalid; use -1 for a symbolic size, 1 for a broadcast axis");
      std::optional<bool> contig =
          contiguity.empty() ? std::optional<bool>(false) : contiguity[axis];
      HOSTIR_CHECK(contig.has_value() || size == 1, "define_tensor: contiguity[", axis,
                   "] is None (a broadcast axis) but shape[", axis, "] is ", size,
                   "; use None only where the size is 1");
      Val* extent =
          size == -1 ? IrBuilder::create<Scalar>(DataType::Int64) : IrBuilder::create<Scalar>(size);
      ids.push_back(IrBuilder::create<IterDomain>(
          extent, size == 1 ? IterType::Broadcast : IterType::Iteration));
      // A broadcast axis never breaks contiguity (its stride is irrelevant).
      contiguous.push_back(contig.value_or(true));
    }
    auto* domain = IrBuilder::create<TensorDomain>(ids, contiguous);
    auto* tv = IrBuilder::create<TensorView>(domain, dtype);
    fusion_->addInput(tv);
    int64_t fid = assignFid(tv);
    input_fids_.push_back(fid);
    for (size_t axis = 0; axis < ids.size(); ++axis) {
      extents_.push_back(ids[axis]->extent());
      auto extent_fid = -static_cast<int64_t>(extents_.size());
      extent_fids_.push_back({extent_fid, fid, static_cast<int64_t>(axis)});
      fid_of_.emplace(ids[axis]->extent(), extent_fid);
    }
    return fid;
  }

  // A constant (value given) or a symbolic input scalar (value None).
  int64_t defineScalar(const std::optional<std::variant<bool, int64_t, double>>& value,
                       DataType dtype) {
    FusionGuard guard(fusion_.get());
    Scalar* scalar = nullptr;
    if (!value.has_value()) {
      scalar = IrBuilder::create<Scalar>(dtype);
      fusion_->addInput(scalar);
      int64_t fid = assignFid(scalar);
      input_fids_.push_back(fid);
      return fid;
    }
    if (dtype == DataType::Bool) {
      HOSTIR_CHECK(std::holds_alternative<bool>(*value),
                   "define_scalar: a Bool scalar needs True or False");
      scalar = IrBuilder::create<Scalar>(std::get<bool>(*value));
    } else if (isIntegralType(dtype)) {
      HOSTIR_CHECK(std::holds_alternative<int64_t>(*value), "define_scalar: an ", toString(dtype),
                   " scalar needs an int value");
      scalar = IrBuilder::create<Scalar>(std::get<int64_t>(*value));
    } else {
      double number = std::visit([](auto v) { return static_cast<double>(v); }, *value);
      scalar = IrBuilder::create<Scalar>(number);
    }
    return assignFid(scalar);
  }

  // --- ops ------------------------------------------------------------------

  int64_t unary(const std::string& op, int64_t x) {
    static const std::map<std::string, TensorView* (*)(TensorView*)> ops = {
        {"set", &hostir::set},   {"neg", &hostir::neg},         {"abs", &hostir::abs},
        {"exp", &hostir::exp},   {"log", &hostir::log},         {"sqrt", &hostir::sqrt},
        {"relu", &hostir::relu}, {"sigmoid", &hostir::sigmoid}, {"tanh", &hostir::tanh},
        {"gelu", &hostir::gelu}, {"rsqrt", &hostir::rsqrt},     {"erf", &hostir::erf}};
    auto it = ops.find(op);
    HOSTIR_CHECK(it != ops.end(), "unknown unary op '", op, "'");
    return build([&] { return it->second(tensor(x, op)); });
  }

  int64_t binary(const std::string& op, int64_t lhs, int64_t rhs) {
    Val* a = val(lhs);
    Val* b = val(rhs);
    auto* ta = dynamic_cast<TensorView*>(a);
    auto* tb = dynamic_cast<TensorView*>(b);
    return build([&]() -> Val* {
      if (op == "ceil_div" || op == "mod") {
        HOSTIR_CHECK(!ta && !tb, op, "(", a->toInlineString(), ", ", b->toInlineString(),
                     "): takes integer scalars, not tensors");
        return op == "mod" ? mod(a, b) : ceilDiv(a, b);
      }
#define HOSTIR_PY_BINARY(name) \
  if (op == #name) {           \
    if (ta && tb)              \
      return name(ta, tb);     \
    if (ta)                    \
      return name(ta, b);      \
    if (tb)                    \
      return name(a, tb);      \
    return name(a, b);         \
  }
      HOSTIR_PY_BINARY(add)
      HOSTIR_PY_BINARY(sub)
      HOSTIR_PY_BINARY(mul)
      HOSTIR_PY_BINARY(div)
      HOSTIR_PY_BINARY(maximum)
      HOSTIR_PY_BINARY(minimum)
      HOSTIR_PY_BINARY(pow)
      HOSTIR_PY_BINARY(eq)
      HOSTIR_PY_BINARY(ne)
      HOSTIR_PY_BINARY(lt)
      HOSTIR_PY_BINARY(le)
      HOSTIR_PY_BINARY(gt)
      HOSTIR_PY_BINARY(ge)
#undef HOSTIR_PY_BINARY
      HOSTIR_THROW("unknown binary op '", op, "'");
    });
  }

  int64_t whereOp(int64_t condition, int64_t a, int64_t b) {
    return build([&] { return where(tensor(condition, "where"), val(a), val(b)); });
  }
  int64_t iotaOp(int64_t length, int64_t start, int64_t step, DataType dtype) {
    return build([&] {
      return iota(scalar(length, "iota"), scalar(start, "iota"), scalar(step, "iota"), dtype);
    });
  }

  int64_t cast(int64_t x, DataType dtype) {
    return build([&] { return castOp(dtype, tensor(x, "cast")); });
  }

  int64_t reduction(const std::string& op, int64_t x, const std::vector<int64_t>& axes,
                    bool keep_dim) {
    TensorView* in = tensor(x, op);
    return build([&]() -> Val* {
      if (op == "sum")
        return sum(in, axes, keep_dim);
      if (op == "max")
        return max(in, axes, keep_dim);
      if (op == "min")
        return min(in, axes, keep_dim);
      if (op == "prod")
        return prod(in, axes, keep_dim);
      HOSTIR_THROW("unknown reduction '", op, "'");
    });
  }

  int64_t broadcastOp(int64_t x, const std::vector<bool>& is_broadcast_dim) {
    return build([&] { return broadcast(tensor(x, "broadcast"), is_broadcast_dim); });
  }
  int64_t matmulOp(int64_t a, int64_t b) {
    return build([&] { return matmul(tensor(a, "matmul"), tensor(b, "matmul")); });
  }
  int64_t linearOp(int64_t x, int64_t w, std::optional<int64_t> bias) {
    return build([&] {
      return linear(tensor(x, "linear"), tensor(w, "linear"),
                    bias ? tensor(*bias, "linear") : nullptr);
    });
  }
  int64_t selectOp(int64_t x, int64_t dim, int64_t index) {
    return build([&] { return select(tensor(x, "select"), dim, scalar(index, "select")); });
  }
  int64_t sliceOp(int64_t x, int64_t dim, int64_t start, int64_t stop) {
    return build([&] {
      return slice(tensor(x, "slice"), dim, scalar(start, "slice"), scalar(stop, "slice"));
    });
  }
  int64_t permuteOp(int64_t x, const std::vector<int64_t>& dims) {
    return build([&] { return permute(tensor(x, "permute"), dims); });
  }
  int64_t reshapeOp(int64_t x, const std::vector<int64_t>& new_sizes) {
    return build([&] { return reshape(tensor(x, "reshape"), new_sizes); });
  }
  int64_t fullOp(const std::vector<int64_t>& shape, int64_t fill_value, DataType dtype) {
    std::vector<Val*> extents;
    for (int64_t fid : shape) {
      extents.push_back(scalar(fid, "full"));
    }
    return build([&] { return full(extents, scalar(fill_value, "full"), dtype); });
  }

  // The fid of tensor `x`'s extent along `dim` (of its shape): an existing fid
  // when that extent already has one (e.g. an input's extent: negative), else
  // a new one.
  std::pair<int64_t, bool> size(int64_t x, int64_t dim) {
    TensorView* tv = tensor(x, "size");
    std::vector<IterDomain*> shape = tv->shapeDomain();
    const auto rank = static_cast<int64_t>(shape.size());
    HOSTIR_CHECK(dim >= -rank && dim < rank, "size(", tv->toInlineString(), ", dim=", dim,
                 "): dim out of range for rank ", rank);
    Val* extent = shape[static_cast<size_t>(dim < 0 ? dim + rank : dim)]->extent();
    auto it = fid_of_.find(extent);
    if (it != fid_of_.end()) {
      return {it->second, false};
    }
    return {assignFid(extent), true};
  }

  void addOutput(int64_t fid) {
    Val* v = val(fid);
    HOSTIR_CHECK(v->isA<TensorView>(), "add_output(", v->toInlineString(),
                 "): outputs must be tensors");
    HOSTIR_CHECK(!fusion_->isOutput(v), "add_output(", v->toInlineString(), "): already an output");
    fusion_->addOutput(v);
    output_fids_.push_back(fid);
  }

  // --- schedule -------------------------------------------------------------

  void split(int64_t x, int64_t axis, int64_t factor, bool inner_split) {
    FusionGuard guard(fusion_.get());
    tensor(x, "split")->split(axis, factor, inner_split);
  }
  void merge(int64_t x, int64_t axis_outer, int64_t axis_inner) {
    FusionGuard guard(fusion_.get());
    tensor(x, "merge")->merge(axis_outer, axis_inner);
  }
  void parallelize(int64_t x, int64_t axis, ParallelType parallel_type) {
    tensor(x, "parallelize")->axis(axis)->parallelize(parallel_type);
  }
  void setDeviceMesh(int64_t x, const DeviceMesh& mesh) {
    tensor(x, "set_device_mesh")->setDeviceMesh(mesh);
  }

  // --- introspection ----------------------------------------------------------

  bool isTensor(int64_t fid) const {
    return val(fid)->isA<TensorView>();
  }
  int64_t rank(int64_t fid) const {
    return tensor(fid, "rank")->rank();
  }
  DataType dtype(int64_t fid) const {
    return val(fid)->dtype();
  }
  std::string irName(int64_t fid) const {
    return val(fid)->toInlineString();
  }
  // Per axis of a tensor's shape: its size if constant, else -1.
  std::vector<int64_t> staticShape(int64_t fid) const {
    std::vector<int64_t> shape;
    for (IterDomain* id : tensor(fid, "shape")->shapeDomain()) {
      const auto* extent = dynamic_cast<const Scalar*>(id->extent());
      shape.push_back(extent != nullptr && extent->isConstInt() ? extent->constInt() : -1);
    }
    return shape;
  }
  std::string fusionIr() const {
    return fusion_->toString();
  }
  const std::vector<int64_t>& inputFids() const {
    return input_fids_;
  }
  const std::vector<int64_t>& outputFids() const {
    return output_fids_;
  }
  // (extent fid, input tensor fid, axis), extent fids -1, -2, ...
  const std::vector<std::tuple<int64_t, int64_t, int64_t>>& extentFids() const {
    return extent_fids_;
  }
  // IR name ("T3", "S5") -> fid for every Val with a fid.
  std::map<std::string, int64_t> valToFid() const {
    std::map<std::string, int64_t> result;
    for (const auto& [v, fid] : fid_of_) {
      result.emplace(valKey(v), fid);
    }
    return result;
  }
  int64_t numFids() const {
    return static_cast<int64_t>(vals_.size());
  }

  // --- segments ---------------------------------------------------------------

  // The segments the host lowering would form, in run order: per segment the
  // fids of its inputs (values it reads, including scalars such as extents:
  // negative fids), of its outputs, and of the tensors its exprs compute.
  // A group input without a fid (a derived scalar) is reported as its IR
  // string in `unmapped`.
  py::list segments() const {
    Fusion work;
    IrCloner cloner = copyFusion(*fusion_, work);
    std::unordered_map<const Val*, int64_t> fid_of_copy;
    for (const auto& [v, fid] : fid_of_) {
      fid_of_copy.emplace(cloner.clone(v), fid);
    }
    SegmentOptions options;
    options.should_merge = hostLoweringMergePolicy();
    std::unique_ptr<SegmentedFusion> segmented = SegmentCandidateFinder::segment(&work, options);
    auto fidOf = [&](const Val* v) -> py::object {
      auto it = fid_of_copy.find(v);
      if (it == fid_of_copy.end()) {
        return py::str(v->toInlineString());
      }
      return py::int_(it->second);
    };
    py::list groups;
    for (const SegmentedGroup* group : segmented->runOrder()) {
      py::list inputs, outputs, computed;
      for (const Val* in : group->inputs()) {
        inputs.append(fidOf(in));
      }
      for (const Val* out : group->outputs()) {
        outputs.append(fidOf(out));
      }
      for (const Expr* expr : group->exprs()) {
        for (const Val* out : expr->outputs()) {
          computed.append(fidOf(out));
        }
      }
      // A group reads an extent it does not list as an input from the shape
      // of a tensor input carrying it: (extent fid, tensor fid, axis).
      py::list extents_of_inputs;
      for (const Val* in : group->inputs()) {
        const auto* tv = dynamic_cast<const TensorView*>(in);
        auto tensor_fid = fid_of_copy.find(in);
        if (tv == nullptr || tensor_fid == fid_of_copy.end()) {
          continue;
        }
        std::vector<IterDomain*> shape = tv->shapeDomain();
        for (size_t axis = 0; axis < shape.size(); ++axis) {
          auto extent_fid = fid_of_copy.find(shape[axis]->extent());
          if (extent_fid != fid_of_copy.end()) {
            extents_of_inputs.append(
                py::make_tuple(extent_fid->second, tensor_fid->second, static_cast<int64_t>(axis)));
          }
        }
      }
      groups.append(py::make_tuple(inputs, outputs, computed, extents_of_inputs));
    }
    return groups;
  }

  // --- running ------------------------------------------------------------------

  std::vector<at::Tensor> execute(const py::list& inputs, const std::vector<at::Tensor>& outputs,
                                  int number_of_streams) {
    std::vector<PolymorphicValue> values;
    values.reserve(inputs.size());
    for (const py::handle item : inputs) {
      values.push_back(toValue(item));
    }
    Runner& runner = runnerFor(values, number_of_streams);
    last_runner_ = &runner;
    py::gil_scoped_release no_gil;
    try {
      return runner.run(values, outputs);
    } catch (const c10::Error& error) {
      throw Error(error.what_without_backtrace());
    }
  }

  std::string hostIr(const py::list& inputs, int number_of_streams) {
    std::vector<PolymorphicValue> values;
    for (const py::handle item : inputs) {
      values.push_back(toValue(item));
    }
    return runnerFor(values, number_of_streams).hostIr();
  }

  // Shardings of the outputs of the last execute (None before one).
  py::object lastOutputShardings() const {
    if (last_runner_ == nullptr) {
      return py::none();
    }
    py::list result;
    for (const TensorSharding& sharding : last_runner_->shardings) {
      py::object mesh = py::none();
      if (sharding.mesh.has_value()) {
        mesh = py::cast(*sharding.mesh);
      }
      py::dict axes;
      for (const auto& [ptype, axis] : sharding.logical_axes) {
        axes[py::cast(ptype)] = axis;
      }
      result.append(py::make_tuple(mesh, axes));
    }
    return result;
  }

  int64_t numLowerings() const {
    return lowerings_;
  }
  int64_t numRunners() const {
    return static_cast<int64_t>(runners_.size());
  }
  bool isMultiDevice() const {
    for (const auto& statement : fusion_->statements()) {
      const auto* tv = dynamic_cast<const TensorView*>(statement.get());
      if (tv != nullptr && tv->hasDeviceMesh()) {
        return true;
      }
    }
    return false;
  }

 private:
  int64_t assignFid(Val* v) {
    auto fid = static_cast<int64_t>(vals_.size());
    vals_.push_back(v);
    fid_of_.emplace(v, fid);
    return fid;
  }

  template <typename F>
  int64_t build(F&& make) {
    FusionGuard guard(fusion_.get());
    return assignFid(make());
  }

  Val* val(int64_t fid) const {
    if (fid < 0) {
      auto index = static_cast<size_t>(-fid - 1);
      HOSTIR_CHECK(index < extents_.size(), "fid ", fid,
                   " names no input extent (extent fids are -1 .. -", extents_.size(), ")");
      return extents_[index];
    }
    HOSTIR_CHECK(static_cast<size_t>(fid) < vals_.size(), "fid ", fid,
                 " names no value of this definition (fids are 0 .. ", vals_.size(), ")");
    return vals_[static_cast<size_t>(fid)];
  }
  TensorView* tensor(int64_t fid, const std::string& op) const {
    Val* v = val(fid);
    auto* tv = dynamic_cast<TensorView*>(v);
    HOSTIR_CHECK(tv != nullptr, op, ": ", v->toInlineString(), " (fid ", fid,
                 ") is a scalar; this argument must be a tensor");
    return tv;
  }
  Val* scalar(int64_t fid, const std::string& op) const {
    Val* v = val(fid);
    HOSTIR_CHECK(!v->isA<TensorView>(), op, ": ", v->toInlineString(), " (fid ", fid,
                 ") is a tensor; this argument must be a scalar");
    return v;
  }

  static PolymorphicValue toValue(py::handle item) {
    if (THPVariable_Check(item.ptr())) {
      return THPVariable_Unpack(item.ptr());
    }
    if (item.is_none()) {
      return at::Tensor();  // an input this rank does not hold
    }
    if (py::isinstance<py::bool_>(item)) {
      return item.cast<bool>();
    }
    if (py::isinstance<py::int_>(item)) {
      return item.cast<int64_t>();
    }
    if (py::isinstance<py::float_>(item)) {
      return item.cast<double>();
    }
    HOSTIR_THROW("execute: inputs must be torch.Tensor, int, float, bool or None, got ",
                 std::string(py::str(item.get_type())));
  }

  std::vector<int64_t> signature(const std::vector<PolymorphicValue>& inputs,
                                 int number_of_streams) const {
    std::vector<int64_t> key{number_of_streams, static_cast<int64_t>(inputs.size())};
    const std::vector<Val*>& declared = fusion_->inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const PolymorphicValue& value = inputs[i];
      if (const auto* tensor = std::get_if<at::Tensor>(&value)) {
        if (!tensor->defined()) {
          key.push_back(kUndefined);
          continue;
        }
        key.push_back(kTensor);
        key.push_back(static_cast<int64_t>(tensor->scalar_type()));
        key.push_back(tensor->dim());
        key.push_back(tensor->is_contiguous());
        const auto* tv =
            i < declared.size() ? dynamic_cast<const TensorView*>(declared[i]) : nullptr;
        std::vector<IterDomain*> shape;
        if (tv != nullptr) {
          shape = tv->shapeDomain();
        }
        for (int64_t axis = 0; axis < tensor->dim(); ++axis) {
          const int64_t size = tensor->size(axis);
          bool fixed = false;
          if (static_cast<size_t>(axis) < shape.size()) {
            const auto* extent = dynamic_cast<const Scalar*>(shape[axis]->extent());
            fixed = extent != nullptr && extent->isConst();
          }
          // Fixed sizes are part of the key; otherwise only the broadcast
          // pattern (size 1 or not).
          key.push_back(fixed ? size : (size == 1 ? -1 : -2));
        }
      } else if (std::holds_alternative<bool>(value)) {
        key.push_back(kBool);
      } else if (std::holds_alternative<int64_t>(value)) {
        key.push_back(kInt);
      } else {
        key.push_back(kDouble);
      }
    }
    return key;
  }

  Runner& runnerFor(const std::vector<PolymorphicValue>& inputs, int number_of_streams) {
    std::vector<int64_t> key = signature(inputs, number_of_streams);
    auto it = runners_.find(key);
    if (it != runners_.end()) {
      return *it->second;
    }
    auto runner = std::make_unique<Runner>();
    try {
      if (isMultiDevice()) {
        runner->multi = std::make_unique<MultiDeviceExecutor>(
            *fusion_, Communicator::getInstance(),
            MultiDeviceExecutorParams{.number_of_streams = number_of_streams});
        for (const Val* out : runner->multi->preparedFusion().outputs()) {
          runner->shardings.push_back(shardingOf(out->as<TensorView>()));
        }
      } else {
        runner->single = std::make_unique<HostExecutor>(
            *fusion_, HostIrEvaluatorParams{.number_of_streams = number_of_streams});
        for (const Val* out : fusion_->outputs()) {
          runner->shardings.push_back(shardingOf(out->as<TensorView>()));
        }
      }
    } catch (const c10::Error& error) {
      throw Error(error.what_without_backtrace());
    }
    ++lowerings_;
    return *runners_.emplace(std::move(key), std::move(runner)).first->second;
  }

  std::unique_ptr<Fusion> fusion_;
  std::vector<Val*> vals_;     // fid >= 0
  std::vector<Val*> extents_;  // fid -1 - i
  std::unordered_map<const Val*, int64_t> fid_of_;
  std::vector<int64_t> input_fids_;
  std::vector<int64_t> output_fids_;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> extent_fids_;
  std::map<std::vector<int64_t>, std::unique_ptr<Runner>> runners_;
  Runner* last_runner_ = nullptr;
  int64_t lowerings_ = 0;
};

}  // namespace
}  // namespace hostir::python

PYBIND11_MODULE(_C, m) {
  using namespace hostir;
  using hostir::python::Definition;
  m.doc() = "hostir's C++ core: fusion builder and executors (use the `hostir` package)";
  m.attr("__version__") = HOSTIR_VERSION;
  m.attr("default_number_of_streams") = runtime::StreamPool::kDefaultNumberOfStreams;

  static py::exception<Error> error_class(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) {
        std::rethrow_exception(pointer);
      }
    } catch (const Error& error) {
      error_class(error.what());
    } catch (const c10::Error& error) {
      error_class(error.what_without_backtrace());
    }
  });

  // Where kernels came from in this process (docs/kernels.md, "The cache").
  m.def("kernel_cache_stats", [] {
    py::dict stats;
    stats["compiled"] = KernelCache::global().compiled();
    stats["loaded_from_disk"] = KernelCache::global().loadedFromDisk();
    stats["directory"] = KernelCache::global().directory().string();
    return stats;
  });

  py::enum_<DataType>(m, "DataType")
      .value("Float", DataType::Float)
      .value("Double", DataType::Double)
      .value("Half", DataType::Half)
      .value("BFloat16", DataType::BFloat16)
      .value("Int32", DataType::Int32)
      .value("Int64", DataType::Int64)
      .value("Bool", DataType::Bool);
  py::enum_<ParallelType>(m, "ParallelType")
      .value("Serial", ParallelType::Serial)
      .value("Stream", ParallelType::Stream)
      .value("DIDx", ParallelType::DIDx)
      .value("DIDy", ParallelType::DIDy);

  py::class_<DeviceMesh>(m, "DeviceMesh")
      .def(py::init<std::vector<int64_t>, std::vector<int64_t>>(), py::arg("devices"),
           py::arg("shape") = std::vector<int64_t>{})
      .def_static("create_for_num_devices", &DeviceMesh::createForNumDevices)
      .def_property_readonly("devices", &DeviceMesh::vector)
      .def_property_readonly("shape", &DeviceMesh::shape)
      .def("size", py::overload_cast<>(&DeviceMesh::size, py::const_))
      .def("__len__", py::overload_cast<>(&DeviceMesh::size, py::const_))
      .def(
          "__eq__", [](const DeviceMesh& a, const DeviceMesh& b) { return a == b; },
          py::is_operator())
      .def("__hash__",
           [](const DeviceMesh& mesh) {
             return py::hash(py::make_tuple(py::cast(mesh.vector()), py::cast(mesh.shape())));
           })
      .def("__repr__", [](const DeviceMesh& mesh) {
        std::string text = "hostir.DeviceMesh(" + std::string(py::repr(py::cast(mesh.vector())));
        if (mesh.shape().size() > 1) {
          text += ", shape=" + std::string(py::repr(py::cast(mesh.shape())));
        }
        return text + ")";
      });

  py::class_<Definition>(m, "Definition")
      .def(py::init<>())
      .def("define_tensor", &Definition::defineTensor)
      .def("define_scalar", &Definition::defineScalar)
      .def("unary", &Definition::unary)
      .def("binary", &Definition::binary)
      .def("cast", &Definition::cast)
      .def("where", &Definition::whereOp)
      .def("iota", &Definition::iotaOp)
      .def("reduction", &Definition::reduction)
      .def("broadcast", &Definition::broadcastOp)
      .def("matmul", &Definition::matmulOp)
      .def("linear", &Definition::linearOp)
      .def("select", &Definition::selectOp)
      .def("slice", &Definition::sliceOp)
      .def("permute", &Definition::permuteOp)
      .def("reshape", &Definition::reshapeOp)
      .def("full", &Definition::fullOp)
      .def("size", &Definition::size)
      .def("add_output", &Definition::addOutput)
      .def("split", &Definition::split)
      .def("merge", &Definition::merge)
      .def("parallelize", &Definition::parallelize)
      .def("set_device_mesh", &Definition::setDeviceMesh)
      .def("is_tensor", &Definition::isTensor)
      .def("rank", &Definition::rank)
      .def("dtype", &Definition::dtype)
      .def("ir_name", &Definition::irName)
      .def("static_shape", &Definition::staticShape)
      .def("fusion_ir", &Definition::fusionIr)
      .def("input_fids", &Definition::inputFids)
      .def("output_fids", &Definition::outputFids)
      .def("extent_fids", &Definition::extentFids)
      .def("val_to_fid", &Definition::valToFid)
      .def("num_fids", &Definition::numFids)
      .def("segments", &Definition::segments)
      .def("execute", &Definition::execute)
      .def("host_ir", &Definition::hostIr)
      .def("last_output_shardings", &Definition::lastOutputShardings)
      .def("num_lowerings", &Definition::numLowerings)
      .def("num_runners", &Definition::numRunners)
      .def("is_multidevice", &Definition::isMultiDevice);
}
