#include "hostir/runtime/compiled_segment.h"

#include <ATen/Parallel.h>
#include <HalideRuntime.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "hostir/host_ir/gemm_epilogue.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/options.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/resize_gather_checks.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {

namespace {

// Kernels' parallel loops run on OpenMP, ATen's intra-op backend, with the
// thread count ATen gives this thread: the rank's thread budget
// (runtime/thread_budget_aten.h) holds for them too. Not through
// at::parallel_for: it is inline, and its lazy init would define ATen's
// per-thread init flag in this file, which the sanitizer build (this file
// without OpenMP: a serial loop) then links twice.
int parallelForOnAten(void* user_context, KernelTask task, int min, int size,
                      unsigned char* closure) {
  std::atomic<int> status{0};
  auto run = [&](int i) {
    int result = task(user_context, i, closure);
    if (result != 0) {
      status = result;
    }
  };
#ifdef _OPENMP
  const int threads = std::min(at::get_num_threads(), size);
  if (threads > 1 && omp_in_parallel() == 0) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = min; i < min + size; ++i) {
      run(i);
    }
    return status.load();
  }
#endif
  for (int i = min; i < min + size; ++i) {
    run(i);
  }
  return status.load();
}

halide_type_t halideType(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return halide_type_t(halide_type_float, 32);
    case at::kDouble: return halide_type_t(halide_type_float, 64);
    case at::kHalf: return halide_type_t(halide_type_float, 16);
    case at::kBFloat16: return halide_type_t(halide_type_bfloat, 16);
    case at::kInt: return halide_type_t(halide_type_int, 32);
    case at::kLong: return halide_type_t(halide_type_int, 64);
    case at::kBool: return halide_type_t(halide_type_uint, 1);
    default: break;
  }
  HOSTIR_THROW("a compiled kernel cannot take tensors of type ", type);
}

constexpr int64_t kMaxBufferBytes = (int64_t{1} << 31) - 1;

// A kernel buffer over a tensor's memory: Halide's dimension 0 is the
// tensor's innermost axis.
struct KernelBuffer {
  halide_buffer_t buffer{};
  std::vector<halide_dimension_t> dims;

  explicit KernelBuffer(const at::Tensor& tensor) {
    int64_t rank = tensor.dim();
    dims.resize(static_cast<size_t>(rank));
    for (int64_t axis = 0; axis < rank; ++axis) {
      halide_dimension_t& dim = dims[static_cast<size_t>(rank - 1 - axis)];
      dim.min = 0;
      dim.extent = static_cast<int32_t>(tensor.size(axis));
      // A size-1 axis is never stepped along: any stride will do.
      dim.stride = tensor.size(axis) == 1 ? 1 : static_cast<int32_t>(tensor.stride(axis));
      dim.flags = 0;
    }
    buffer.host = static_cast<uint8_t*>(tensor.data_ptr());
    buffer.type = halideType(tensor.scalar_type());
    buffer.dimensions = static_cast<int32_t>(rank);
    buffer.dim = dims.empty() ? nullptr : dims.data();
  }
  KernelBuffer(const KernelBuffer&) = delete;
};

bool innermostContiguous(const at::Tensor& tensor) {
  return tensor.dim() == 0 || tensor.size(-1) == 1 || tensor.stride(-1) == 1;
}

// Whether the kernel may write the caller's `output` buffer itself (its
// shape checked by FusionExecutor: the kernel checks no buffer it is given,
// docs/kernels.md, "Checks"). A kernel that may refuse its data midway
// (sin, cos: vector_trig.h) writes no buffer an input shares, which ATen
// then reads.
bool writableInPlace(const at::Tensor& output, const std::vector<at::Tensor>& inputs,
                     bool may_refuse) {
  if (!output.defined() || !innermostContiguous(output)) {
    return false;
  }
  return !may_refuse || std::none_of(inputs.begin(), inputs.end(),
                                     [&](const at::Tensor& in) { return in.is_alias_of(output); });
}

// " (hostir to Halide A ms, ...)": where a compile's time went; empty for a
// kernel loaded from the disk cache. The rest of the total is the cache's
// lock and files.
std::string compilePhases(const CompiledKernel& kernel) {
  if (kernel.fromDisk()) {
    return "";
  }
  const KernelCompileTimes& times = kernel.compileTimes();
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << " (hostir to Halide " << times.to_engine * 1e3
       << " ms, Halide's lowering " << times.engine_lowering * 1e3
       << " ms, LLVM's optimization and code generation " << times.code_generation * 1e3
       << " ms, link " << times.link * 1e3 << " ms";
  // Built, or waited for while another thread built it: once per process.
  if (times.engine_runtime > 0.0) {
    text << ", the engine's runtime " << times.engine_runtime * 1e3 << " ms";
  }
  text << ")";
  return text.str();
}

// Says why a segment did not run compiled; false, for `return`.
bool notRun(std::string* why_not, std::string reason) {
  if (why_not != nullptr) {
    *why_not = std::move(reason);
  }
  return false;
}

// Why a kernel buffer cannot hold `tensor` (its sizes and strides are int32
// per dimension), or nothing when it can.
std::optional<std::string> whyNotKernelBuffer(const at::Tensor& tensor) {
  std::ostringstream why;
  if (tensor.numel() == 0) {
    why << "is empty (sizes " << tensor.sizes() << ")";
    return why.str();
  }
  if (tensor.nbytes() > static_cast<size_t>(kMaxBufferBytes)) {
    why << "holds " << tensor.nbytes() << " bytes, past the kernels' 32-bit indexing (2^31 - 1)";
    return why.str();
  }
  for (int64_t axis = 0; axis < tensor.dim(); ++axis) {
    if (tensor.stride(axis) < 0 || tensor.stride(axis) > kMaxBufferBytes) {
      why << "has stride " << tensor.stride(axis) << " on axis " << axis
          << ", outside the kernels' int32 strides [0, 2^31 - 1]";
      return why.str();
    }
  }
  return std::nullopt;
}

void installParallelFor() {
  static std::once_flag once;
  std::call_once(once, [] { setKernelParallelFor(&parallelForOnAten); });
}

}  // namespace

CompiledSegment::CompiledSegment(KernelSignature signature,
                                 std::shared_ptr<const CompiledKernel> kernel, const Fusion& fusion)
    : signature_(std::move(signature)),
      kernel_(std::move(kernel)),
      fusion_(&fusion),
      may_refuse_(mayRefuseData(fusion)) {
  for (const Expr* expr : fusion.exprs()) {
    // A binary op on two tensors, and where (its condition and tensor
    // operands), read their operands at one index.
    auto tensors = std::count_if(expr->inputs().begin(), expr->inputs().end(),
                                 [](const Val* in) { return in->vtype() == ValType::TensorView; });
    if (expr->isA<SelectOp>() || expr->isA<ReshapeOp>() ||
        ((expr->isA<BinaryOp>() || expr->isA<WhereOp>()) && tensors >= 2)) {
      checked_.push_back(expr);
    }
  }
}

std::unique_ptr<CompiledSegment> CompiledSegment::compile(const Fusion& fusion,
                                                          std::string* why_not) {
  auto fail = [&](std::string reason) {
    if (why_not != nullptr) {
      *why_not = std::move(reason);
    }
    return nullptr;
  };
  if (!kernelsEnabled()) {
    return fail("HOSTIR_KERNELS=aten");
  }
  KernelSignature signature = analyzeSegment(fusion);
  if (signature.unsupported.has_value()) {
    return fail(*signature.unsupported);
  }
  installParallelFor();
  KernelTarget target = runnableKernelTarget(localTarget());
  std::shared_ptr<const CompiledKernel> kernel;
  try {
    kernel = KernelCache::global().get(fusion, signature, target);
  } catch (const Error& error) {
    std::cerr << "hostir: warning: a segment runs through ATen because its kernel failed to "
                 "compile: "
              << error.what() << std::endl;
    return fail(std::string("the kernel failed to compile: ") + error.what());
  }
  if (isDumpEnabled("kernels")) {
    static std::mutex dumped_mutex;
    static std::unordered_set<std::string> dumped;
    std::lock_guard<std::mutex> lock(dumped_mutex);
    if (dumped.insert(kernel->hash()).second) {
      std::cout << "=== kernel " << kernel->hash() << " for " << target.toString()
                << (kernel->fromDisk() ? ", loaded from the disk cache" : ", compiled") << " in "
                << kernel->seconds() * 1e3 << " ms" << compilePhases(*kernel) << "\n"
                << fusion.toString() << KernelCache::global().loopNest(fusion, signature, target)
                << std::flush;
    }
  }
  return std::unique_ptr<CompiledSegment>(
      new CompiledSegment(std::move(signature), std::move(kernel), fusion));
}

bool CompiledSegment::run(ExpressionEvaluator& ee, const std::vector<PolymorphicValue>& inputs,
                          std::vector<at::Tensor>& outputs, std::string* why_not) {
  auto refuse = [&](const char* role, const TensorView* tv, const std::string& why) {
    if (why_not != nullptr) {
      *why_not = std::string(role) + " " + tv->toInlineString() + " " + why;
    }
    return false;
  };
  std::vector<at::Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (const auto* tensor = std::get_if<at::Tensor>(&inputs[i])) {
      at::Tensor input = innermostContiguous(*tensor) ? *tensor : tensor->contiguous();
      if (std::optional<std::string> why = whyNotKernelBuffer(input)) {
        return refuse("the input", fusion_->inputs()[i]->as<TensorView>(), *why);
      }
      tensors.push_back(input);
    }
  }
  HOSTIR_ASSERT(tensors.size() == signature_.tensor_inputs.size(),
                "compiled segment: tensor inputs do not match its signature");
  checkShapes(ee);
  if (std::optional<std::string> why = whyResizeOrGatherNeedsAten(*fusion_, ee, inputs)) {
    if (why_not != nullptr) {
      *why_not = *why;
    }
    return false;
  }
  union ScalarSlot {
    int64_t integer;
    double floating;
  };
  std::vector<ScalarSlot> scalars(signature_.scalars.size());
  for (size_t i = 0; i < scalars.size(); ++i) {
    const KernelScalarArgument& argument = signature_.scalars[i];
    if (argument.kind == KernelScalarArgument::Kind::Extent) {
      scalars[i].integer = ee.evaluateShape(argument.tensor)[argument.axis];
      continue;
    }
    PolymorphicValue value = ee.evaluate(argument.value);
    if (argument.floating) {
      if (const auto* d = std::get_if<double>(&value)) {
        scalars[i].floating = *d;
      } else if (const auto* n = std::get_if<int64_t>(&value)) {
        scalars[i].floating = static_cast<double>(*n);
      } else {
        scalars[i].floating = std::get<bool>(value) ? 1.0 : 0.0;
      }
    } else if (const auto* n = std::get_if<int64_t>(&value)) {
      scalars[i].integer = *n;
    } else if (const auto* b = std::get_if<bool>(&value)) {
      scalars[i].integer = *b ? 1 : 0;
    } else {
      HOSTIR_THROW("the scalar ", argument.value->toInlineString(), " should be an integer, got ",
                   describeValue(value));
    }
  }
  // Outputs: the caller's buffers where the kernel can write them, else a
  // fresh tensor copied into the caller's buffer afterwards.
  std::vector<at::Tensor> targets(signature_.outputs.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const TensorView* tv = signature_.outputs[i];
    if (i < outputs.size() && writableInPlace(outputs[i], tensors, may_refuse_)) {
      targets[i] = outputs[i];
    } else {
      targets[i] =
          at::empty(ee.evaluateShape(tv), at::TensorOptions().dtype(toAtenType(tv->dtype())));
    }
    // An empty output of a non-empty input also runs through ATen, which
    // knows the op's empty-input rules.
    if (std::optional<std::string> why = whyNotKernelBuffer(targets[i])) {
      return refuse("the output", tv, *why);
    }
  }
  std::vector<std::unique_ptr<KernelBuffer>> buffers;
  std::vector<void*> args;
  for (const at::Tensor& tensor : tensors) {
    buffers.push_back(std::make_unique<KernelBuffer>(tensor));
    args.push_back(&buffers.back()->buffer);
  }
  for (ScalarSlot& slot : scalars) {
    args.push_back(&slot);
  }
  for (const at::Tensor& tensor : targets) {
    buffers.push_back(std::make_unique<KernelBuffer>(tensor));
    args.push_back(&buffers.back()->buffer);
  }
  if (std::optional<std::string> refused = kernel_->call(args.data())) {
    return notRun(why_not, "the kernel refused its data: " + *refused);
  }
  outputs.resize(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    if (outputs[i].defined() && !outputs[i].is_same(targets[i])) {
      outputs[i].copy_(targets[i]);
    } else {
      outputs[i] = targets[i];
    }
  }
  return true;
}

void CompiledSegment::checkShapes(ExpressionEvaluator& ee) const {
  for (const Expr* expr : checked_) {
    if (const auto* select = dynamic_cast<const SelectOp*>(expr)) {
      int64_t n = ee.evaluateShape(select->in())[select->dim()];
      int64_t index = ee.evaluateInt(select->index());
      HOSTIR_CHECK(index >= -n && index < n, "select: index ", index, " is out of range for ",
                   select->in()->toInlineString(), " whose axis ", select->dim(), " has ", n,
                   " elements; valid indices are [", -n, ", ", n, ")");
    } else if (const auto* reshape = dynamic_cast<const ReshapeOp*>(expr)) {
      auto count = [](const std::vector<int64_t>& sizes) {
        int64_t n = 1;
        for (int64_t size : sizes) {
          n *= size;
        }
        return n;
      };
      std::vector<int64_t> in = ee.evaluateShape(reshape->in());
      std::vector<int64_t> out = ee.evaluateShape(reshape->out());
      HOSTIR_CHECK(count(in) == count(out), "reshape: ", reshape->in()->toInlineString(), " has ",
                   count(in), " elements but the shape ", at::IntArrayRef(out), " of ",
                   reshape->out()->toInlineString(), " holds ", count(out), " in\n",
                   expr->toString(1), "a reshape keeps the element count");
    } else {
      std::vector<const TensorView*> operands;
      for (const Val* in : expr->inputs()) {
        if (const auto* tv = dynamic_cast<const TensorView*>(in)) {
          operands.push_back(tv);
        }
      }
      for (size_t p = 0; p < operands.size(); ++p) {
        for (size_t q = p + 1; q < operands.size(); ++q) {
          const TensorView* lhs = operands[p];
          const TensorView* rhs = operands[q];
          std::vector<int64_t> a = ee.evaluateShape(lhs);
          std::vector<int64_t> b = ee.evaluateShape(rhs);
          std::vector<IterDomain*> a_ids = lhs->shapeDomain();
          std::vector<IterDomain*> b_ids = rhs->shapeDomain();
          for (size_t k = 1; k <= std::min(a.size(), b.size()); ++k) {
            size_t i = a.size() - k;
            size_t j = b.size() - k;
            if (a_ids[i]->isBroadcast() || b_ids[j]->isBroadcast()) {
              continue;
            }
            HOSTIR_CHECK(a[i] == b[j], "size mismatch in\n", expr->toString(1), "  ",
                         lhs->toInlineString(), " axis ", i, " has ", a[i], " elements but ",
                         rhs->toInlineString(), " axis ", j, " has ", b[j], "; the operands of ",
                         expr->displayName(),
                         " must have equal sizes on every axis that is not broadcast");
          }
        }
      }
    }
  }
}

std::string describeSegmentExecution(const Fusion& fusion) {
  if (!kernelsEnabled()) {
    return "ATen (HOSTIR_KERNELS=aten)";
  }
  KernelSignature signature = analyzeSegment(fusion);
  if (signature.unsupported.has_value()) {
    if (std::optional<GemmEpilogue> gemm = matchGemmEpilogue(fusion)) {
      return "GEMM with post-ops: " + describe(*gemm) +
             " (oneDNN on the weight packed where oneDNN packs it, else ATen op by op)";
    }
    return "ATen: " + *signature.unsupported;
  }
  return "compiled kernel for " + runnableKernelTarget(localTarget()).toString();
}

}  // namespace hostir
