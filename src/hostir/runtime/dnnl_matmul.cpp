#include "hostir/runtime/dnnl_matmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/runtime/target_detection.h"

namespace hostir {

namespace {

using dnnl::memory;

dnnl::engine& cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A CPU stream runs a primitive on the calling thread; one per thread keeps
// GEMMs posted on different stream workers independent.
dnnl::stream& threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

memory::desc plainDesc(const at::Tensor& t2d) {
  HOSTIR_CHECK(t2d.scalar_type() == at::kFloat, "oneDNN's GEMMs here take float32, got ",
               t2d.scalar_type());
  return memory::desc({t2d.size(0), t2d.size(1)}, memory::data_type::f32,
                      {t2d.stride(0), t2d.stride(1)});
}

memory::desc stridedDesc(const at::Tensor& t) {
  HOSTIR_CHECK(t.scalar_type() == at::kFloat, "oneDNN's GEMMs here take float32, got ",
               t.scalar_type());
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()), memory::data_type::f32,
                      memory::dims(t.strides().begin(), t.strides().end()));
}

memory::desc blockedDesc(const Layout& layout, int64_t k, int64_t n) {
  HOSTIR_CHECK(layout.kind == Layout::Kind::DnnlBlocked, "layout ", layout.toString(),
               " is not a oneDNN blocked layout");
  static const std::map<int64_t, memory::format_tag> tags = {{16, memory::format_tag::BA16a16b},
                                                             {32, memory::format_tag::BA16a32b},
                                                             {48, memory::format_tag::BA16a48b},
                                                             {64, memory::format_tag::BA16a64b}};
  auto tag = tags.find(layout.n_block);
  HOSTIR_CHECK(tag != tags.end(), "layout ", layout.toString(),
               " has no oneDNN format tag; oneDNN blocks N by 16, 32, 48 or 64");
  return memory::desc({k, n}, memory::data_type::f32, tag->second);
}

void reorder(const memory::desc& from_desc, void* from, const memory::desc& to_desc, void* to) {
  memory from_memory(from_desc, cpuEngine(), from);
  memory to_memory(to_desc, cpuEngine(), to);
  dnnl::reorder(from_memory, to_memory).execute(threadStream(), from_memory, to_memory);
  threadStream().wait();
}

void checkPackedSize(const at::Tensor& packed, const memory::desc& desc) {
  HOSTIR_CHECK(static_cast<size_t>(packed.nbytes()) == desc.get_size() && packed.is_contiguous(),
               "a tensor of sizes ", packed.sizes(), " cannot hold oneDNN's layout of ",
               desc.get_size(), " bytes; allocate the layout's blockedShape");
}

dnnl::matmul::primitive_desc matmulDesc(const memory::desc& src, const memory::desc& weights,
                                        const std::optional<memory::desc>& bias,
                                        const memory::desc& dst, const dnnl::primitive_attr& attr) {
  auto desc =
      bias ? dnnl::matmul::desc(src, weights, *bias, dst) : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, cpuEngine());
}

struct Primitive {
  dnnl::matmul matmul;
  memory::desc scratchpad;
  // oneDNN's reference implementation (a plain loop nest, ~1 GFLOP/s): what
  // it falls back to for strides its GEMM kernels do not read.
  bool reference = false;
};

// One primitive per shape, strides, layout and epilogue: creating one costs
// tens of microseconds (oneDNN generates its kernel), a GEMM of the main
// job milliseconds. At most kMaxPrimitives are kept (each causal key
// prefix is a shape of its own, so a program run at many sequence lengths
// would otherwise grow the cache without end); the oldest goes first, and
// a caller still running it holds its own reference.
constexpr size_t kMaxPrimitives = 512;

struct PrimitiveCache {
  std::mutex mutex;
  std::map<std::vector<int64_t>, std::shared_ptr<const Primitive>> by_key;
  std::deque<std::vector<int64_t>> by_age;
};

PrimitiveCache& primitiveCache() {
  static PrimitiveCache cache;
  return cache;
}

std::shared_ptr<const Primitive> primitiveFor(const memory::desc& src, const memory::desc& weights,
                                              const std::optional<memory::desc>& bias,
                                              const memory::desc& dst, MatmulActivation activation,
                                              const std::optional<memory::desc>& residual) {
  std::vector<int64_t> key;
  auto add = [&key](const memory::desc& desc) {
    const dnnl_memory_desc_t& data = desc.data;
    key.push_back(data.ndims);
    for (int i = 0; i < data.ndims; ++i) {
      key.push_back(data.dims[i]);
      key.push_back(data.format_desc.blocking.strides[i]);
    }
    key.push_back(data.format_desc.blocking.inner_nblks);
    for (int i = 0; i < data.format_desc.blocking.inner_nblks; ++i) {
      key.push_back(data.format_desc.blocking.inner_blks[i]);
    }
  };
  add(src);
  add(weights);
  add(dst);
  key.push_back(bias.has_value());
  key.push_back(static_cast<int64_t>(activation));
  key.push_back(residual.has_value());
  if (residual) {
    add(*residual);
  }
  PrimitiveCache& cache = primitiveCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto found = cache.by_key.find(key);
  if (found != cache.by_key.end()) {
    return found->second;
  }
  dnnl::post_ops post_ops;
  if (activation == MatmulActivation::Gelu) {
    post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  } else if (activation == MatmulActivation::Relu) {
    post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  }
  if (residual) {
    post_ops.append_binary(dnnl::algorithm::binary_add, *residual);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  // The caller passes the scratch memory: a shared one would make two
  // threads running the same primitive write over each other.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pd = matmulDesc(src, weights, bias, dst, attr);
  if (cache.by_key.size() >= kMaxPrimitives) {
    cache.by_key.erase(cache.by_age.front());
    cache.by_age.pop_front();
  }
  auto made = std::make_shared<const Primitive>(
      Primitive{dnnl::matmul(pd), pd.scratchpad_desc(),
                std::string(pd.impl_info_str()).rfind("ref", 0) == 0});
  cache.by_key.emplace(key, made);
  cache.by_age.push_back(std::move(key));
  return made;
}

}  // namespace

void dnnlReorderToBlocked(const at::Tensor& plain_kn, const Layout& layout,
                          const at::Tensor& packed) {
  memory::desc blocked = blockedDesc(layout, plain_kn.size(0), plain_kn.size(1));
  checkPackedSize(packed, blocked);
  reorder(plainDesc(plain_kn), plain_kn.data_ptr(), blocked, packed.data_ptr());
}

void dnnlReorderFromBlocked(const at::Tensor& packed, const Layout& layout,
                            const at::Tensor& plain_kn) {
  memory::desc blocked = blockedDesc(layout, plain_kn.size(0), plain_kn.size(1));
  checkPackedSize(packed, blocked);
  reorder(blocked, packed.data_ptr(), plainDesc(plain_kn), plain_kn.data_ptr());
}

void dnnlMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& packed,
                   const Layout& layout, const MatmulEpilogue& epilogue) {
  const int64_t k = lhs.size(-1);
  const int64_t n = out.size(-1);
  const memory::desc weights = blockedDesc(layout, k, n);
  checkPackedSize(packed, weights);
  at::Tensor x = lhs.reshape({-1, k});
  const int64_t m = x.size(0);
  const bool direct = out.is_contiguous();
  at::Tensor result = direct ? out.view({m, n}) : at::empty({m, n}, out.options());

  std::optional<memory::desc> bias_desc;
  at::Tensor bias;
  if (epilogue.bias) {
    bias = epilogue.bias->contiguous().view({1, n});
    bias_desc = plainDesc(bias);
  }
  std::optional<memory::desc> residual_desc;
  at::Tensor residual;
  if (epilogue.residual) {
    residual = epilogue.residual->numel() == n
                   ? epilogue.residual->contiguous().view({1, n})
                   : epilogue.residual->expand(out.sizes()).reshape({m, n});
    residual_desc = plainDesc(residual);
  }
  const memory::desc src = plainDesc(x);
  const memory::desc dst = plainDesc(result);
  const std::shared_ptr<const Primitive> held =
      primitiveFor(src, weights, bias_desc, dst, epilogue.activation, residual_desc);
  const Primitive& primitive = *held;

  at::Tensor scratch = at::empty({static_cast<int64_t>(primitive.scratchpad.get_size())},
                                 at::TensorOptions().dtype(at::kByte));
  auto wrap = [](const memory::desc& desc, const at::Tensor& t) {
    return memory(desc, cpuEngine(), t.data_ptr());
  };
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, wrap(src, x)},
      {DNNL_ARG_WEIGHTS, wrap(weights, packed)},
      {DNNL_ARG_DST, wrap(dst, result)},
      {DNNL_ARG_SCRATCHPAD, wrap(primitive.scratchpad, scratch)}};
  if (bias_desc) {
    args.emplace(DNNL_ARG_BIAS, wrap(*bias_desc, bias));
  }
  if (residual_desc) {
    // After the activation, when there is one.
    const int post_op_index = epilogue.activation != MatmulActivation::None ? 1 : 0;
    args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_index) | DNNL_ARG_SRC_1,
                 wrap(*residual_desc, residual));
  }
  primitive.matmul.execute(threadStream(), args);
  threadStream().wait();
  if (!direct) {
    out.copy_(result.view(out.sizes()));
  }
}

namespace {

// out = lhs @ rhs (batched where 3-D) on the operands as they are; false,
// computing nothing, where oneDNN has no implementation for their strides
// or, with `fast_only`, none but its reference loop nest.
bool stridedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs,
                      bool fast_only) {
  const memory::desc src = stridedDesc(lhs);
  const memory::desc weights = stridedDesc(rhs);
  const memory::desc dst = stridedDesc(out);
  std::shared_ptr<const Primitive> primitive;
  try {
    primitive = primitiveFor(src, weights, std::nullopt, dst, MatmulActivation::None, std::nullopt);
  } catch (const dnnl::error&) {
    return false;  // no implementation for these strides
  }
  if (fast_only && primitive->reference) {
    return false;
  }
  at::Tensor scratch = at::empty({static_cast<int64_t>(primitive->scratchpad.get_size())},
                                 at::TensorOptions().dtype(at::kByte));
  auto wrap = [](const memory::desc& desc, const at::Tensor& t) {
    return memory(desc, cpuEngine(), t.data_ptr());
  };
  primitive->matmul.execute(threadStream(),
                            {{DNNL_ARG_SRC, wrap(src, lhs)},
                             {DNNL_ARG_WEIGHTS, wrap(weights, rhs)},
                             {DNNL_ARG_DST, wrap(dst, out)},
                             {DNNL_ARG_SCRATCHPAD, wrap(primitive->scratchpad, scratch)}});
  threadStream().wait();
  return true;
}

}  // namespace

bool dnnlBatchedMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs) {
  return stridedMatmulOut(out, lhs, rhs, /*fast_only=*/false);
}

bool dnnlPlainMatmulOut(const at::Tensor& out, const at::Tensor& lhs, const at::Tensor& rhs) {
  HOSTIR_CHECK(out.dim() == 2 && lhs.dim() == 2 && rhs.dim() == 2,
               "dnnlPlainMatmulOut takes 2-D operands, got ", lhs.sizes(), " @ ", rhs.sizes(),
               " into ", out.sizes());
  // As a batch of one: oneDNN 2.6 serves the 2-D problem with plain B by
  // brg:avx512_core copying B's blocks per call, the 3-D one by gemm:jit,
  // its sgemm: medians 0.83-0.95x the time of packing B first in three
  // interleaved runs (avx512, 1 thread, the MLP step's wgrad shapes:
  // docs/performance.md), where the 2-D one took 1.11-1.21x.
  return stridedMatmulOut(out.unsqueeze(0), lhs.unsqueeze(0), rhs.unsqueeze(0),
                          /*fast_only=*/true);
}

size_t dnnlCachedPrimitives() {
  PrimitiveCache& cache = primitiveCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.by_key.size();
}

std::string dnnlPreferredLayout(int64_t k, int64_t n) {
  memory::desc src({1, k}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc any({k, n}, memory::data_type::f32, memory::format_tag::any);
  memory::desc dst({1, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc chosen = matmulDesc(src, any, std::nullopt, dst, {}).weights_desc();
  const auto& blocking = chosen.data.format_desc.blocking;
  // oneDNN's verbose naming: outer dims outermost first (capital when
  // blocked), then the inner blocks.
  std::vector<int> order =
      blocking.strides[1] > blocking.strides[0] ? std::vector<int>{1, 0} : std::vector<int>{0, 1};
  std::string name;
  for (int dim : order) {
    bool blocked = false;
    for (int i = 0; i < blocking.inner_nblks; ++i) {
      blocked = blocked || blocking.inner_idxs[i] == dim;
    }
    name += static_cast<char>((blocked ? 'A' : 'a') + dim);
  }
  for (int i = 0; i < blocking.inner_nblks; ++i) {
    name +=
        std::to_string(blocking.inner_blks[i]) + static_cast<char>('a' + blocking.inner_idxs[i]);
  }
  return name;
}

int64_t dnnlPreferredNBlock(int64_t k, int64_t n) {
  // A process whose target keeps weights plain (HOSTIR_TARGET=cpu:avx2 on an
  // AVX-512 machine, as the isa_avx2 tests run) takes the plain path its
  // target's machine would, whatever this CPU's oneDNN would pick.
  if (localTarget().matmul_rhs_n_block == 0) {
    return 0;
  }
  static std::mutex mutex;
  static std::map<std::pair<int64_t, int64_t>, int64_t> blocks;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = blocks.try_emplace({k, n}, 0);
  if (inserted) {
    memory::desc src({1, k}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc any({k, n}, memory::data_type::f32, memory::format_tag::any);
    memory::desc dst({1, n}, memory::data_type::f32, memory::format_tag::ab);
    const auto& blocking =
        matmulDesc(src, any, std::nullopt, dst, {}).weights_desc().data.format_desc.blocking;
    const bool n_outer_k_inner = blocking.strides[1] > blocking.strides[0];
    if (n_outer_k_inner && blocking.inner_nblks == 2 && blocking.inner_idxs[0] == 0 &&
        blocking.inner_blks[0] == Layout::kDnnlKBlock && blocking.inner_idxs[1] == 1) {
      it->second = blocking.inner_blks[1];
    }
  }
  return it->second;
}

std::string dnnlImplementationFor(const Layout& layout, int64_t k, int64_t n) {
  memory::desc src({1, k}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc dst({1, n}, memory::data_type::f32, memory::format_tag::ab);
  return matmulDesc(src, blockedDesc(layout, k, n), std::nullopt, dst, {}).impl_info_str();
}

}  // namespace hostir
