#include "hostir/runtime/fusion_executor.h"

#include <atomic>
#include <iostream>
#include <unordered_map>

#include "hostir/ir/ops.h"
#include "hostir/ir/options.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/kernels/kernel_cache.h"
#include "hostir/runtime/aten_op_evaluator.h"
#include "hostir/runtime/expression_evaluator.h"
#include "hostir/runtime/input_validation.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/segment_engines.h"

namespace hostir {

namespace {
std::atomic<int64_t> gemms_with_post_ops{0};

// The panel layout a fusion output is written in, if its encoding resolved
// to one.
std::optional<Layout> panelLayout(const Val* output) {
  const auto* tv = dynamic_cast<const TensorView*>(output);
  if (tv == nullptr || !tv->hasEncoding() || !tv->encoding()->isResolved() ||
      tv->encoding()->resolved->isIdentity()) {
    return std::nullopt;
  }
  return tv->encoding()->resolved;
}
}  // namespace

FusionExecutor::FusionExecutor(std::unique_ptr<Fusion> fusion)
    : owned_(std::move(fusion)), fusion_(owned_.get()) {
  prepare();
}

std::unique_ptr<FusionExecutor> FusionExecutor::borrowing(const Fusion& fusion,
                                                          std::optional<SegmentEngine> engine) {
  return std::unique_ptr<FusionExecutor>(new FusionExecutor(&fusion, std::move(engine)));
}

FusionExecutor::FusionExecutor(const Fusion* fusion, std::optional<SegmentEngine> engine)
    : fusion_(fusion), engine_(std::move(engine)) {
  prepare();
  HOSTIR_ASSERT(!engine_.has_value() || engine_->kind != SegmentEngineKind::GemmWithPostOps ||
                    gemm_epilogue_.has_value(),
                "a segment recorded as a GEMM with post-ops has no linear and epilogue");
}

void FusionExecutor::prepare() {
  HOSTIR_CHECK(fusion_ != nullptr, "FusionExecutor needs a fusion");
  exprs_ = fusion_->exprs();
  // After the last expr reading an intermediate tensor, drop it: a long
  // chain then reuses freed memory as ATen code would, instead of touching
  // fresh pages for every op.
  std::unordered_map<const Val*, size_t> last_use;
  for (size_t i = 0; i < exprs_.size(); ++i) {
    for (const Val* input : exprs_[i]->inputs()) {
      last_use[input] = i;
    }
  }
  dead_after_.resize(exprs_.size());
  for (const auto& [val, index] : last_use) {
    if (val->vtype() == ValType::TensorView && !fusion_->isInput(val) && !fusion_->isOutput(val)) {
      dead_after_[index].push_back(val);
    }
  }
  for (Val* output : fusion_->outputs()) {
    HOSTIR_CHECK(output->vtype() == ValType::TensorView, "fusion output ", output->toInlineString(),
                 " is not a tensor");
  }
  gemm_epilogue_ = gemmEpilogueToRun(*fusion_);
}

std::vector<at::Tensor> FusionExecutor::run(const std::vector<at::Tensor>& inputs,
                                            const std::vector<at::Tensor>& outputs) {
  return run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs);
}

std::vector<at::Tensor> FusionExecutor::run(std::initializer_list<at::Tensor> inputs,
                                            const std::vector<at::Tensor>& outputs) {
  return run(std::vector<PolymorphicValue>(inputs.begin(), inputs.end()), outputs);
}

std::vector<at::Tensor> FusionExecutor::run(const std::vector<PolymorphicValue>& inputs,
                                            const std::vector<at::Tensor>& outputs) {
  fusion_->printIfDumpEnabled("fusion");
  validateInputs(fusion_->inputs(), inputs, "the fusion");
  const std::vector<Val*>& fusion_outputs = fusion_->outputs();
  HOSTIR_CHECK(outputs.empty() || outputs.size() == fusion_outputs.size(), "the fusion has ",
               fusion_outputs.size(), " outputs but ", outputs.size(),
               " preallocated buffers were given; give all or none");

  ExpressionEvaluator ee;
  ee.setDevice(device_);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ee.bind(fusion_->inputs()[i], inputs[i]);
  }
  std::string why_not;
  const SegmentEngineKind kind = engine().kind;
  if (kind != SegmentEngineKind::Aten && !kernelsEnabled()) {
    // Turned off after the compile stage chose the engine: honoured, and
    // reported as a fall back.
    recordRun("HOSTIR_KERNELS=aten");
  } else if (kind == SegmentEngineKind::Kernel) {
    CompiledSegment* segment = compiled();
    std::vector<at::Tensor> results(outputs);
    for (size_t i = 0; segment != nullptr && i < results.size(); ++i) {
      validateOutputBuffer(fusion_outputs[i], results[i],
                           ee.evaluateShape(fusion_outputs[i]->as<TensorView>()));
    }
    if (segment != nullptr && segment->run(ee, inputs, results, &why_not)) {
      recordRun(std::nullopt);
      return results;
    }
    recordRun(segment != nullptr ? why_not : kernel_lost_);
  } else if (kind == SegmentEngineKind::GemmWithPostOps) {
    std::vector<at::Tensor> results(outputs);
    if (runGemmEpilogue(ee, results, why_not)) {
      recordRun(std::nullopt);
      return results;
    }
    recordRun(why_not);
  }
  return runWithAten(ee, outputs);
}

void FusionExecutor::recordRun(const std::optional<std::string>& fallback) {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  if (!fallback.has_value()) {
    ++runs_.on_planned_engine;
    return;
  }
  if (++runs_.fallbacks[*fallback] == 1 && isDumpEnabled("kernels")) {
    std::cout << "=== segment falls back to ATen at run time: " << *fallback << "\n"
              << fusion_->toString() << std::flush;
  }
}

SegmentRuns FusionExecutor::runs() const {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  return runs_;
}

bool FusionExecutor::runGemmEpilogue(ExpressionEvaluator& ee, std::vector<at::Tensor>& results,
                                     std::string& why_not) {
  const GemmEpilogue& gemm = *gemm_epilogue_;
  MatmulEpilogue epilogue;
  if (gemm.linear->hasBias()) {
    epilogue.bias = ee.evaluateTensor(gemm.linear->bias());
  } else if (gemm.bias != nullptr) {
    epilogue.bias = ee.evaluateTensor(gemm.bias);
  }
  if (gemm.activation.has_value()) {
    epilogue.activation =
        *gemm.activation == UnaryOpType::Gelu ? MatmulActivation::Gelu : MatmulActivation::Relu;
  }
  if (gemm.residual != nullptr) {
    epilogue.residual = ee.evaluateTensor(gemm.residual);
  }
  at::Tensor weight = ee.evaluateTensor(gemm.linear->weight());
  if (isPacked(gemm.linear->weight(), weight)) {
    why_not = "an encoded weight: ATen's path runs its packed GEMM, then the epilogue op by op";
    return false;
  }
  const std::vector<int64_t> shape = ee.evaluateShape(gemm.out);
  if (results.empty()) {
    results.push_back(at::empty(shape, at::TensorOptions().dtype(at::kFloat)));
  } else {
    validateOutputBuffer(gemm.out, results[0], shape);
  }
  if (!linearThroughDnnlOut(results[0], ee.evaluateTensor(gemm.linear->in()), weight, epilogue,
                            &why_not)) {
    return false;
  }
  ++gemms_with_post_ops;
  return true;
}

int64_t gemmsWithPostOpsRun() {
  return gemms_with_post_ops.load();
}

const SegmentEngine& FusionExecutor::engine() {
  std::lock_guard<std::mutex> lock(compile_mutex_);
  if (!engine_.has_value()) {
    engine_ = decideSegmentEngine(*fusion_);  // run alone: no compile stage decided it
  }
  return *engine_;
}

CompiledSegment* FusionExecutor::compiled() {
  std::lock_guard<std::mutex> lock(compile_mutex_);
  if (!compile_tried_) {
    compile_tried_ = true;
    // The compile stage compiled it: this takes it from the kernel cache.
    std::string why_not;
    compiled_ = CompiledSegment::compile(*fusion_, &why_not);
    if (compiled_ == nullptr) {
      kernel_lost_ = "the recorded kernel is not available: " + why_not;
    }
  }
  return compiled_.get();
}

namespace {

std::string times(int64_t n) {
  return std::to_string(n) + (n == 1 ? " time" : " times");
}

}  // namespace

std::string FusionExecutor::execution() {
  const SegmentEngine& planned = engine();
  const std::string plan = describe(planned);
  if (planned.kind == SegmentEngineKind::Aten) {
    return plan;
  }
  const SegmentRuns done = runs();
  if (done.on_planned_engine == 0 && done.fallbacks.empty()) {
    return plan;
  }
  std::string report = plan + "; ran it " + times(done.on_planned_engine);
  for (const auto& [reason, count] : done.fallbacks) {
    report += ", fell back to ATen " + times(count) + ": " + reason;
  }
  return report;
}

std::vector<at::Tensor> FusionExecutor::runWithAten(ExpressionEvaluator& ee,
                                                    const std::vector<at::Tensor>& outputs) {
  const std::vector<Val*>& fusion_outputs = fusion_->outputs();
  std::unordered_map<const Val*, at::Tensor> preallocated;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!panelLayout(fusion_outputs[i]).has_value()) {
      preallocated[fusion_outputs[i]] = outputs[i];  // panels are packed at the end
    }
  }
  for (size_t i = 0; i < exprs_.size(); ++i) {
    Expr* expr = exprs_[i];
    if (!isAtenEvaluable(expr)) {
      continue;  // scalar arithmetic is evaluated on demand
    }
    Val* out = expr->output(0);
    auto given = preallocated.find(out);
    if (given != preallocated.end()) {
      validateOutputBuffer(out, given->second, ee.evaluateShape(out->as<TensorView>()));
      evaluateFusionOpInto(expr, ee, given->second);
      ee.bind(out, given->second);
    } else {
      ee.bind(out, evaluateFusionOp(expr, ee).at(0));
    }
    for (const Val* dead : dead_after_[i]) {
      ee.unbind(dead);
    }
  }

  std::vector<at::Tensor> results;
  for (size_t i = 0; i < fusion_outputs.size(); ++i) {
    if (std::optional<Layout> layout = panelLayout(fusion_outputs[i])) {
      // A result this executable writes in panels (docs/targets.md).
      at::Tensor packed = packMatmulRhs(ee.evaluateTensor(fusion_outputs[i]), *layout);
      if (!outputs.empty()) {
        HOSTIR_CHECK(outputs[i].sizes() == packed.sizes(), "fusion output ",
                     fusion_outputs[i]->toInlineString(), " is written in panels of sizes ",
                     packed.sizes(), " but its buffer has sizes ", outputs[i].sizes(),
                     "; allocate it in this executable's layout");
        outputs[i].copy_(packed);
        rememberPlainSizes(outputs[i], *plainSizesOf(packed));
        packed = outputs[i];
      }
      results.push_back(packed);
      continue;
    }
    if (!outputs.empty()) {
      at::Tensor value = ee.evaluateTensor(fusion_outputs[i]);
      // An output that is an input (or aliases another output) still lands
      // in the caller's buffer.
      if (!value.is_same(outputs[i])) {
        outputs[i].copy_(value);
      }
      results.push_back(outputs[i]);
    } else {
      results.push_back(ee.evaluateTensor(fusion_outputs[i]));
    }
  }
  return results;
}

}  // namespace hostir
