// The `hostir._C` extension module: a fid-addressed builder over a C++
// Fusion (what the Python FusionDefinition replays its records into) and the
// executors that run it on torch tensors. The Python package (python/hostir)
// owns records, the FusionCache and the FusionState; this file owns the IR.

#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "distributed_bindings.h"
#include "hostir/autodiff/differentiate.h"
#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/gather_ops.h"
#include "hostir/ir/random_ops.h"
#include "hostir/ir/resize_ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/scan_ops.h"
#include "hostir/ir/scatter_ops.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/collective_fault.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/executor.h"
#include "hostir/runtime/finite_check.h"
#include "hostir/runtime/streams/number_of_streams.h"
#include "hostir/runtime/streams/stream_queue.h"
#include "hostir/runtime/tensor_memory.h"
#include "program_segments.h"

#ifndef HOSTIR_VERSION
#define HOSTIR_VERSION "0.0.0"
#endif

namespace py = pybind11;

namespace hostir::python {
namespace {

class Definition {
 public:
  Definition() : fusion_(std::make_unique<Fusion>()) {}
  // A finished fusion made in C++ (a forward or backward of differentiate):
  // it runs and prints; it has no records, so no fids.
  explicit Definition(std::unique_ptr<Fusion> fusion) : fusion_(std::move(fusion)) {}

  // Reverse-mode differentiation (autodiff/differentiate.h): the forward
  // that also returns the saved tensors and the backward, each a Definition,
  // with the positions that connect them.
  py::tuple differentiate(const std::vector<int64_t>& outputs, const std::vector<int64_t>& inputs,
                          const std::string& save) {
    DifferentiateOptions options{
        .outputs = outputs, .inputs = inputs, .save = savePolicyNamed(save)};
    Differentiated result = hostir::differentiate(*fusion_, options);
    return py::make_tuple(std::make_unique<Definition>(std::move(result.forward)),
                          std::make_unique<Definition>(std::move(result.backward)),
                          result.differentiated_outputs, result.grad_inputs, result.saved_outputs);
  }

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
  // A constant (value given) or a symbolic input scalar (value None); a
  // constant holds `dtype` (a Float constant is rounded to float).
  int64_t defineScalar(
      const std::optional<std::variant<bool, int64_t, double, std::complex<double>>>& value,
      DataType dtype) {
    FusionGuard guard(fusion_.get());
    if (!value.has_value()) {
      auto* scalar = IrBuilder::create<Scalar>(dtype);
      fusion_->addInput(scalar);
      int64_t fid = assignFid(scalar);
      input_fids_.push_back(fid);
      return fid;
    }
    const ScalarValue number = std::visit([](auto v) -> ScalarValue { return v; }, *value);
    Scalar* scalar = nullptr;
    try {
      scalar = IrBuilder::create<Scalar>(number, dtype);
    } catch (const Error& error) {
      HOSTIR_THROW("define_scalar: ", error.what());
    }
    return assignFid(scalar);
  }

  // --- ops ------------------------------------------------------------------

  // Unary and binary ops by their IR names (toString of the op type), so a
  // new op type needs no line here; "set" is the copy.
  int64_t unary(const std::string& op, int64_t x) {
    if (op == "set") {
      return build([&] { return hostir::set(tensor(x, op)); });
    }
    const std::vector<UnaryOpType> types = allUnaryOpTypes();
    auto it = std::find_if(types.begin(), types.end(), [&](UnaryOpType type) {
      return type != UnaryOpType::Cast && toString(type) == op;
    });
    HOSTIR_CHECK(it != types.end(), "unknown unary op '", op, "'");
    return build([&] { return hostir::unary(*it, val(x)); });
  }

  int64_t binary(const std::string& op, int64_t lhs, int64_t rhs) {
    Val* a = val(lhs);
    Val* b = val(rhs);
    const std::string name = op == "ceil_div" ? "ceilDiv" : op;
    const std::vector<BinaryOpType> types = allBinaryOpTypes();
    auto it = std::find_if(types.begin(), types.end(),
                           [&](BinaryOpType type) { return toString(type) == name; });
    HOSTIR_CHECK(it != types.end(), "unknown binary op '", op, "'");
    return build([&] { return hostir::binary(*it, a, b); });
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
    return build([&] { return hostir::unary(UnaryOpType::Cast, val(x), dtype); });
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
  // widths: fids of integer scalars, torch.nn.functional.pad's order;
  // value: a scalar's fid, or none for zero.
  int64_t padOp(int64_t x, const std::vector<int64_t>& widths, std::optional<int64_t> value) {
    std::vector<Val*> vals;
    for (int64_t width : widths) {
      vals.push_back(scalar(width, "pad"));
    }
    return build(
        [&] { return pad(tensor(x, "pad"), vals, value ? scalar(*value, "pad") : nullptr); });
  }
  int64_t catOp(const std::vector<int64_t>& xs, int64_t dim) {
    std::vector<TensorView*> tensors;
    for (int64_t x : xs) {
      tensors.push_back(tensor(x, "cat"));
    }
    return build([&] { return cat(tensors, dim); });
  }
  // kind: "index_select" or "take_along_axis" (torch.gather).
  int64_t gatherOp(const std::string& kind, int64_t x, int64_t index, int64_t dim) {
    TensorView* in = tensor(x, kind);
    TensorView* positions = tensor(index, kind);
    return build([&] {
      return kind == "index_select" ? indexSelect(in, positions, dim)
                                    : takeAlongAxis(in, positions, dim);
    });
  }
  // kind: "scatter_add" or "index_add" (the gathers' grads).
  int64_t scatterAddOp(const std::string& kind, int64_t x, int64_t index, int64_t src,
                       int64_t dim) {
    TensorView* in = tensor(x, kind);
    TensorView* positions = tensor(index, kind);
    TensorView* added = tensor(src, kind);
    return build([&] {
      return kind == "index_add" ? indexAdd(in, positions, added, dim)
                                 : scatterAdd(in, positions, added, dim);
    });
  }
  // kind: "uniform" or "normal"; seed and offset both given or neither.
  int64_t randomOp(const std::string& kind, int64_t a, int64_t b, const std::vector<int64_t>& shape,
                   DataType dtype, std::optional<int64_t> seed, std::optional<int64_t> offset) {
    std::vector<Val*> extents;
    for (int64_t size : shape) {
      extents.push_back(scalar(size, kind));
    }
    Val* seed_val = seed ? scalar(*seed, kind) : nullptr;
    Val* offset_val = offset ? scalar(*offset, kind) : nullptr;
    return build([&] {
      return kind == "normal"
                 ? normal(scalar(a, kind), scalar(b, kind), extents, dtype, seed_val, offset_val)
                 : uniform(scalar(a, kind), scalar(b, kind), extents, dtype, seed_val, offset_val);
    });
  }
  int64_t cumsumOp(int64_t x, int64_t dim) {
    return build([&] { return cumsum(tensor(x, "cumsum"), dim); });
  }
  // src: a tensor's or a scalar's fid.
  int64_t scatterOp(int64_t x, int64_t index, int64_t src, int64_t dim) {
    return build(
        [&] { return scatter(tensor(x, "scatter"), tensor(index, "scatter"), val(src), dim); });
  }
  int64_t permuteOp(int64_t x, const std::vector<int64_t>& dims) {
    return build([&] { return permute(tensor(x, "permute"), dims); });
  }
  int64_t reshapeOp(int64_t x, const std::vector<int64_t>& new_sizes) {
    return build([&] { return reshape(tensor(x, "reshape"), new_sizes); });
  }
  // Sizes given as fids of integer scalars (known at run time).
  int64_t reshapeToScalarsOp(int64_t x, const std::vector<int64_t>& size_fids) {
    std::vector<Val*> sizes;
    for (int64_t fid : size_fids) {
      sizes.push_back(scalar(fid, "reshape"));
    }
    return build([&] { return reshapeToExtents(tensor(x, "reshape"), sizes); });
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
      result.emplace(irKey(v), fid);
    }
    return result;
  }
  int64_t numFids() const {
    return static_cast<int64_t>(vals_.size());
  }

  // --- segments ---------------------------------------------------------------

  // The segments of the program this definition runs (its executor's: the
  // compile stage's, engines decided), in run order: per segment a
  // Definition of its fusion, the values it reads and writes (an int: a fid
  // of this definition; a str: the program's name of an intermediate) and
  // its engine with the detail (program_segments.h).
  py::list compiledSegments() {
    std::vector<ProgramSegment> segments = programSegments(
        prepared().hostProgram(),
        DefinitionFids{.inputs = input_fids_, .outputs = output_fids_, .extents = extent_fids_});
    auto keys = [](const std::vector<SegmentValue>& values) {
      py::list list;
      for (const SegmentValue& value : values) {
        std::visit([&list](const auto& key) { list.append(key); }, value);
      }
      return list;
    };
    py::list result;
    for (ProgramSegment& segment : segments) {
      result.append(py::make_tuple(std::make_unique<Definition>(std::move(segment.fusion)),
                                   keys(segment.inputs), keys(segment.outputs), segment.engine,
                                   segment.detail));
    }
    return result;
  }

  // --- running ------------------------------------------------------------------

  // Computes without autograd: inputs (and output buffers) that require grad
  // are detached (same storage), so the results never require grad.
  std::vector<at::Tensor> execute(const py::list& inputs, const std::vector<at::Tensor>& outputs,
                                  int number_of_streams) {
    std::vector<PolymorphicValue> values;
    values.reserve(inputs.size());
    for (const py::handle item : inputs) {
      values.push_back(toValue(item, values.size()));
    }
    std::vector<at::Tensor> buffers;
    buffers.reserve(outputs.size());
    for (const at::Tensor& output : outputs) {
      buffers.push_back(withoutGrad(output));
    }
    Executor& executor = prepared();
    py::gil_scoped_release no_gil;
    at::NoGradGuard no_grad;
    try {
      std::vector<at::Tensor> results = executor.run(values, buffers, number_of_streams);
      executed_ = true;
      return results;
    } catch (const c10::Error& error) {
      throw Error(pythonMessage(error.what_without_backtrace()));
    } catch (const Error& error) {
      throw Error(pythonMessage(error.what()));
    }
  }

  // The program's compute alone (Executor::runComputeOnly): every collective
  // replaced by a local copy, for a sharded job's compute-only baseline.
  std::vector<at::Tensor> executeComputeOnly(const std::vector<at::Tensor>& inputs,
                                             int number_of_streams) {
    return runTensors(inputs, [number_of_streams](Executor& executor, const auto& tensors) {
      return executor.runComputeOnly(tensors, number_of_streams);
    });
  }

  // One execute with the tracer recording; exposureReport() then says what
  // each collective cost this rank (Executor::runMeasuringExposure).
  std::vector<at::Tensor> executeMeasuringExposure(const std::vector<at::Tensor>& inputs) {
    auto outputs = runTensors(inputs, [](Executor& executor, const auto& tensors) {
      return executor.runMeasuringExposure(tensors);
    });
    executed_ = true;
    return outputs;
  }
  std::string exposureReport() const {
    return executor_ == nullptr ? std::string() : executor_->exposureReport();
  }

  // `run(executor, inputs)` on the inputs without their autograd history,
  // without the GIL; errors become hostir.Error.
  template <typename Run>
  std::vector<at::Tensor> runTensors(const std::vector<at::Tensor>& inputs, const Run& run) {
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size());
    for (const at::Tensor& input : inputs) {
      tensors.push_back(withoutGrad(input));
    }
    Executor& executor = prepared();
    py::gil_scoped_release no_gil;
    at::NoGradGuard no_grad;
    try {
      return run(executor, tensors);
    } catch (const c10::Error& error) {
      throw Error(pythonMessage(error.what_without_backtrace()));
    } catch (const Error& error) {
      throw Error(pythonMessage(error.what()));
    }
  }

  // The lowered program (one per definition, whatever the inputs).
  std::string hostIr() {
    return prepared().hostProgram().toString();
  }

  // How each segment runs and what the runs so far ran on, run-time falls
  // back to ATen included (Executor::segmentExecution).
  std::string execution() {
    return prepared().segmentExecution();
  }

  // Whether a sharded definition without Stream annotations lets hostir
  // insert the stream splits at its first run (ExecutorParams::
  // automatic_stream_splits); unset: HOSTIR_OVERLAP decides. Fixed once the
  // definition has run: its program is lowered once.
  void setAutomaticStreamSplits(bool enabled) {
    HOSTIR_CHECK(executor_ == nullptr,
                 "automatic_stream_splits is set after the definition's first execute: its program "
                 "is already lowered; set it before the first execute");
    automatic_stream_splits_ = enabled;
  }
  bool automaticStreamSplits() const {
    return automatic_stream_splits_.value_or(
        ExecutorParams::automaticStreamSplitsFromEnvironment());
  }
  // What the automatic stream splits found and chose, per collective (empty
  // before the first execute, or when they did not run).
  std::string overlapReport() const {
    return executor_ == nullptr ? std::string() : executor_->overlapReport();
  }
  // The chunk count the automatic stream splits chose: the largest among
  // the collectives (1: none pipelined, or not decided yet).
  int64_t automaticChunks() const {
    return executor_ == nullptr ? 1 : executor_->automaticChunks();
  }

  // Shardings of the outputs of the last execute (None before one).
  py::object lastOutputShardings() const {
    if (!executed_) {
      return py::none();
    }
    py::list result;
    for (const Val* out : executor_->preparedFusion().outputs()) {
      const auto* tv = out->as<TensorView>();
      result.append(shardingTuple(shardingOf(tv), tv));
    }
    return result;
  }

  // Per fusion input: None for a scalar, else (mesh or None, {parallel
  // type: sharded logical axis}) as the definition annotates it.
  py::list inputShardings() const {
    py::list result;
    for (const Val* input : fusion_->inputs()) {
      const auto* tv = dynamic_cast<const TensorView*>(input);
      if (tv == nullptr) {
        result.append(py::none());
        continue;
      }
      result.append(shardingTuple(shardingOf(tv), tv));
    }
    return result;
  }

  int64_t numLowerings() const {
    return executor_ == nullptr ? 0 : 1;
  }
  // Stream workers of the definition's executor (created on first use and
  // shared by every run, whatever its number_of_streams).
  int64_t numStreamWorkers() const {
    return executor_ == nullptr
               ? 0
               : static_cast<int64_t>(executor_->evaluator().streamPool().createdStreamCount());
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

  // (mesh or None, {parallel type: logical axis}, {parallel type: dimension
  // of the torch tensor}); the two differ where a reduction keeps its
  // reduced axes in the logical domain.
  static py::tuple shardingTuple(const TensorSharding& sharding, const TensorView* tv) {
    py::object mesh = py::none();
    if (sharding.mesh.has_value()) {
      mesh = py::cast(*sharding.mesh);
    }
    py::dict axes;
    py::dict dims;
    const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
    for (const auto& [ptype, axis] : sharding.logical_axes) {
      axes[py::cast(ptype)] = axis;
      int64_t dim = 0;
      for (int64_t k = 0; k < axis && k < static_cast<int64_t>(logical.size()); ++k) {
        dim += logical[static_cast<size_t>(k)]->isReduction() ? 0 : 1;
      }
      dims[py::cast(ptype)] = dim;
    }
    return py::make_tuple(mesh, axes, dims);
  }

  // A sharded fusion needs one process per device of its meshes.
  void checkEnoughRanks() const {
    int64_t devices_needed = 0;
    std::string widest;
    for (const auto& statement : fusion_->statements()) {
      const auto* tv = dynamic_cast<const TensorView*>(statement.get());
      if (tv == nullptr || !tv->hasDeviceMesh()) {
        continue;
      }
      for (int64_t device : tv->getDeviceMesh().vector()) {
        if (device + 1 > devices_needed) {
          devices_needed = device + 1;
          widest = tv->getDeviceMesh().toString();
        }
      }
    }
    const LaunchEnvironment environment = LaunchEnvironment::fromEnvironment();
    if (devices_needed <= environment.world_size) {
      return;
    }
    const std::string n = std::to_string(devices_needed);
    HOSTIR_CHECK(!environment.isSingleProcess(), "this fusion runs on ", widest, " (", n,
                 " devices, one process each) but this process runs alone: no launcher set "
                 "RANK/WORLD_SIZE, OMPI_COMM_WORLD_RANK/SIZE or SLURM_PROCID/NTASKS. Start ",
                 n, " processes with a launcher: `hostir launch -n ", n,
                 " -- python3 script.py`, `python3 -m hostir.torchrun --standalone "
                 "--nproc_per_node=",
                 n, " script.py` or `mpirun -np ", n, " python3 script.py`");
    HOSTIR_THROW("this fusion runs on ", widest, " (devices up to ", devices_needed - 1,
                 ") but the job has ", environment.world_size, " ranks (", environment.toString(),
                 "); launch ", n, " ranks or use a smaller mesh");
  }

  static at::Tensor withoutGrad(const at::Tensor& tensor) {
    return tensor.defined() && tensor.requires_grad() ? tensor.detach() : tensor;
  }

  // The runtime's messages name C++ values; Python passes None for them.
  static std::string pythonMessage(std::string message) {
    const std::string cpp = "an undefined tensor (at::Tensor())";
    for (size_t at = message.find(cpp); at != std::string::npos; at = message.find(cpp, at)) {
      message.replace(at, cpp.size(), "None");
    }
    return message;
  }

  // The value of execute's input `index`; an int too large for any integer
  // dtype is an error naming the input, not pybind11's cast error.
  PolymorphicValue toValue(py::handle item, size_t index) const {
    if (THPVariable_Check(item.ptr())) {
      return withoutGrad(THPVariable_Unpack(item.ptr()));
    }
    if (item.is_none()) {
      return at::Tensor();  // an input this rank does not hold
    }
    if (py::isinstance<py::bool_>(item)) {
      return item.cast<bool>();
    }
    if (py::isinstance<py::int_>(item)) {
      int overflow = 0;
      const long long value = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
      if (overflow != 0) {
        const std::vector<Val*>& declared = fusion_->inputs();
        std::string input = index < declared.size()
                                ? " " + declared[index]->toInlineString() + " (dtype " +
                                      toString(declared[index]->dtype()) + ")"
                                : std::string();
        HOSTIR_THROW("scalar value out of its dtype: execute: input ", index, input, " got ",
                     std::string(py::str(item)),
                     ", which does not fit in a 64-bit integer; give an integer from ",
                     std::numeric_limits<int64_t>::min(), " to ",
                     std::numeric_limits<int64_t>::max(), " (a float, for a floating dtype)");
      }
      return static_cast<int64_t>(value);
    }
    if (py::isinstance<py::float_>(item)) {
      return item.cast<double>();
    }
    if (PyComplex_Check(item.ptr())) {
      return item.cast<std::complex<double>>();
    }
    HOSTIR_THROW("execute: inputs must be torch.Tensor, int, float, complex, bool or None, got ",
                 std::string(py::str(item.get_type())));
  }

  // The definition's one executor (executor.h: one copy, one lowering),
  // made by the first execute; every input signature and number_of_streams
  // runs through it.
  Executor& prepared() {
    if (executor_ != nullptr) {
      return *executor_;
    }
    try {
      ExecutorParams params;
      params.automatic_stream_splits = automaticStreamSplits();
      if (isMultiDevice()) {
        checkEnoughRanks();
        params.communicator = &Communicator::getInstance();
      }
      executor_ = std::make_unique<Executor>(*fusion_, params);
    } catch (const c10::Error& error) {
      throw Error(error.what_without_backtrace());
    }
    return *executor_;
  }

  std::unique_ptr<Fusion> fusion_;
  std::vector<Val*> vals_;     // fid >= 0
  std::vector<Val*> extents_;  // fid -1 - i
  std::unordered_map<const Val*, int64_t> fid_of_;
  std::vector<int64_t> input_fids_;
  std::vector<int64_t> output_fids_;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> extent_fids_;
  std::unique_ptr<Executor> executor_;
  std::optional<bool> automatic_stream_splits_;
  // An execute has finished (output shardings are known). Atomic: executes
  // on several threads set it with the GIL released.
  std::atomic<bool> executed_{false};
};

// Flattens a nested list/tuple of ints (rows of a 2-D mesh), appending to
// `devices`; `shape` gets the extents of the first path and every other
// path must match it.
void flattenMesh(py::handle item, size_t depth, std::vector<int64_t>& devices,
                 std::vector<int64_t>& shape) {
  if (py::isinstance<py::list>(item) || py::isinstance<py::tuple>(item)) {
    py::sequence sequence = py::reinterpret_borrow<py::sequence>(item);
    const auto length = static_cast<int64_t>(sequence.size());
    if (shape.size() == depth) {
      shape.push_back(length);
    }
    HOSTIR_CHECK(shape.size() > depth && shape[depth] == length,
                 "DeviceMesh: the nested lists are not rectangular (a row of ", length,
                 " where another has ", shape.size() > depth ? shape[depth] : 0,
                 "); give rows of equal length");
    for (py::handle element : sequence) {
      flattenMesh(element, depth + 1, devices, shape);
    }
    return;
  }
  HOSTIR_CHECK(py::isinstance<py::int_>(item) && !py::isinstance<py::bool_>(item),
               "DeviceMesh: device ids must be ints, got ", std::string(py::repr(item)),
               " of type ", std::string(py::str(item.get_type())));
  HOSTIR_CHECK(shape.size() == depth, "DeviceMesh: the nested lists are not rectangular (",
               std::string(py::repr(item)), " where a list was expected)");
  devices.push_back(item.cast<int64_t>());
}

// A DeviceMesh from a torch tensor of device ids (1-D or 2-D, as
// torch.arange(4).reshape(2, 2)) or a (nested) list / tuple of ints.
DeviceMesh meshFrom(py::handle devices_object, std::vector<int64_t> shape) {
  std::vector<int64_t> devices;
  std::vector<int64_t> nested_shape;
  if (THPVariable_Check(devices_object.ptr())) {
    const at::Tensor& tensor = THPVariable_Unpack(devices_object.ptr());
    HOSTIR_CHECK(!at::isFloatingType(tensor.scalar_type()) &&
                     !at::isComplexType(tensor.scalar_type()) && tensor.scalar_type() != at::kBool,
                 "DeviceMesh: a tensor of device ids must have an integer dtype, got ",
                 c10::toString(tensor.scalar_type()));
    at::Tensor ids = tensor.detach().to(at::kLong).contiguous();
    devices.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
    nested_shape = ids.sizes().vec();
  } else {
    flattenMesh(devices_object, 0, devices, nested_shape);
  }
  if (nested_shape.size() > 1) {
    HOSTIR_CHECK(shape.empty() || shape == nested_shape,
                 "DeviceMesh: shape=", std::string(py::repr(py::cast(shape))),
                 " contradicts the devices' own shape ",
                 std::string(py::repr(py::cast(nested_shape))), "; give one or the other");
    shape = nested_shape;
  }
  return DeviceMesh(std::move(devices), std::move(shape));
}

}  // namespace
}  // namespace hostir::python

namespace hostir::python {
namespace {

// hostir::Error (and ATen's c10::Error) raise hostir.Error.
void bindErrors(py::module_& m) {
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
}

// The process's kernel-cache counts, the NaN/Inf switch, and the test-only
// fault hooks.
void bindProcessHooks(py::module_& m) {
  // Where kernels came from in this process (docs/kernels.md, "The cache").
  m.def("kernel_cache_stats", [] {
    py::dict stats;
    stats["compiled"] = KernelCache::global().compiled();
    stats["loaded_from_disk"] = KernelCache::global().loadedFromDisk();
    stats["directory"] = KernelCache::global().directory().string();
    return stats;
  });

  // The opt-in NaN/Inf check (hostir.autograd.detect_anomaly, HOSTIR_CHECK_FINITE).
  m.def("unary_op_names", [] {
    std::vector<std::string> names;
    for (UnaryOpType type : allUnaryOpTypes()) {
      if (type != UnaryOpType::Cast) {
        names.push_back(toString(type));
      }
    }
    return names;
  });
  m.def("binary_op_names", [] {
    std::vector<std::string> names;
    for (BinaryOpType type : allBinaryOpTypes()) {
      names.push_back(type == BinaryOpType::CeilDiv ? "ceil_div" : toString(type));
    }
    return names;
  });
  m.def("check_finite", &runtime::checkFiniteEnabled);
  m.def("set_check_finite", &runtime::setCheckFinite, py::arg("enabled"));

  // CPU tensor bytes counted at c10's allocator (hostir.memory).
  m.def("count_tensor_memory", &runtime::countTensorMemory);
  m.def("live_tensor_bytes", &runtime::liveTensorBytes);
  m.def("peak_tensor_bytes", &runtime::peakTensorBytes);
  m.def("reset_peak_tensor_bytes", &runtime::resetPeakTensorBytes);

  // Fault injection for tests/python only, not part of the API (issue 22,
  // item 7): the next `starts` stream worker starts succeed, then each
  // fails as a refused pthread_create does; None lifts the limit.
  py::module_ testing = m.def_submodule("_testing", "test-only hooks; not part of hostir's API");
  testing.def("limit_worker_starts", &runtime::limitWorkerStartsForTesting, py::arg("starts"));
  testing.def("fault_at_collective", &runtime::injectFaultAtCollectiveForTesting, py::arg("nth"),
              py::arg("kind"));
}

void bindEnumsAndMesh(py::module_& m) {
  py::enum_<DataType>(m, "DataType")
      .value("Float", DataType::Float)
      .value("Double", DataType::Double)
      .value("Half", DataType::Half)
      .value("BFloat16", DataType::BFloat16)
      .value("Int32", DataType::Int32)
      .value("Int64", DataType::Int64)
      .value("Bool", DataType::Bool)
      .value("ComplexFloat", DataType::ComplexFloat)
      .value("ComplexDouble", DataType::ComplexDouble);
  py::enum_<ParallelType>(m, "ParallelType")
      .value("Serial", ParallelType::Serial)
      .value("Stream", ParallelType::Stream)
      .value("DIDx", ParallelType::DIDx)
      .value("DIDy", ParallelType::DIDy);

  py::class_<DeviceMesh>(m, "DeviceMesh")
      .def(py::init([](py::object devices, std::vector<int64_t> shape) {
             return hostir::python::meshFrom(devices, std::move(shape));
           }),
           py::arg("devices"), py::arg("shape") = std::vector<int64_t>{})
      .def(
          "idx_of",
          [](const DeviceMesh& mesh, int64_t device, std::optional<ParallelType> ptype) {
            return ptype ? mesh.idxOf(device, *ptype) : mesh.idxOf(device);
          },
          py::arg("device"), py::arg("parallel_type") = py::none())
      .def("has", &DeviceMesh::has)
      .def("__contains__", &DeviceMesh::has)
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
}

// The fid-addressed builder and executor of one definition.
void bindDefinition(py::module_& m) {
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
      .def("pad", &Definition::padOp)
      .def("cat", &Definition::catOp)
      .def("gather", &Definition::gatherOp)
      .def("random", &Definition::randomOp)
      .def("cumsum", &Definition::cumsumOp)
      .def("scatter", &Definition::scatterOp)
      .def("scatter_add", &Definition::scatterAddOp)
      .def("reshape_to_scalars", &Definition::reshapeToScalarsOp)
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
      .def("differentiate", &Definition::differentiate)
      .def("input_fids", &Definition::inputFids)
      .def("output_fids", &Definition::outputFids)
      .def("extent_fids", &Definition::extentFids)
      .def("val_to_fid", &Definition::valToFid)
      .def("num_fids", &Definition::numFids)
      .def("compiled_segments", &Definition::compiledSegments)
      .def("execute", &Definition::execute)
      .def("execute_compute_only", &Definition::executeComputeOnly)
      .def("execute_measuring_exposure", &Definition::executeMeasuringExposure)
      .def("exposure_report", &Definition::exposureReport)
      .def("host_ir", &Definition::hostIr)
      .def("execution", &Definition::execution)
      .def("set_automatic_stream_splits", &Definition::setAutomaticStreamSplits)
      .def("automatic_stream_splits", &Definition::automaticStreamSplits)
      .def("overlap_report", &Definition::overlapReport)
      .def("automatic_chunks", &Definition::automaticChunks)
      .def("last_output_shardings", &Definition::lastOutputShardings)
      .def("input_shardings", &Definition::inputShardings)
      .def("num_lowerings", &Definition::numLowerings)
      .def("num_stream_workers", &Definition::numStreamWorkers)
      .def("is_multidevice", &Definition::isMultiDevice);
}

}  // namespace
}  // namespace hostir::python

PYBIND11_MODULE(_C, m) {
  using namespace hostir;
  using hostir::python::Definition;
  m.doc() = "hostir's C++ core: fusion builder and executors (use the `hostir` package)";
  m.attr("__version__") = HOSTIR_VERSION;
  // The one default and the one check of number_of_streams (streams/number_of_streams.h).
  m.attr("default_number_of_streams") = runtime::kDefaultNumberOfStreams;
  m.def("checked_number_of_streams", &runtime::checkedNumberOfStreams,
        py::arg("number_of_streams"));
  m.def("number_of_streams_error", &runtime::numberOfStreamsError, py::arg("given"));

  hostir::python::bindErrors(m);
  hostir::python::bindProcessHooks(m);
  hostir::python::bindEnumsAndMesh(m);
  hostir::python::bindDistributed(m);

  hostir::python::bindDefinition(m);
}
