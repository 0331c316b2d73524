#include "hostir/multidevice/target.h"

#include <sstream>

#include "hostir/ir/error.h"
#include "hostir/ir/ops.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {

namespace {

constexpr Isa kAllIsas[] = {Isa::Generic, Isa::Avx2, Isa::Avx512, Isa::Neon};

std::string isaName(Isa isa) {
  switch (isa) {
    case Isa::Generic: return "generic";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
  }
  HOSTIR_ASSERT(false, "unknown Isa");
  return "";
}

bool hasWord(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  std::string token;
  while (words >> token) {
    if (token == word) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string Target::toString() const {
  std::ostringstream ss;
  ss << backend << ":" << isaName(isa);
  return ss.str();
}

std::string Target::describe() const {
  std::stringstream ss;
  ss << toString() << " (";
  if (vector_bits > 0) {
    ss << vector_bits << "-bit vectors, matmul_rhs "
       << (matmul_rhs_n_block > 0 ? Layout::dnnlBlocked(matmul_rhs_n_block, 1).blockName()
                                  : std::string("plain"));
  } else {
    ss << "no vector assumption, identity layouts";
  }
  ss << ")";
  return ss.str();
}

Target targetForIsa(Isa isa) {
  Target target;
  target.isa = isa;
  switch (isa) {
    case Isa::Generic: break;
    case Isa::Avx2: target.vector_bits = 256; break;
    case Isa::Avx512:
      target.vector_bits = 512;
      target.matmul_rhs_n_block = 64;
      break;
    case Isa::Neon: target.vector_bits = 128; break;
  }
  return target;
}

std::string validTargetNames() {
  std::ostringstream names;
  const char* separator = "";
  for (Isa isa : kAllIsas) {
    names << separator << targetForIsa(isa).toString();
    separator = ", ";
  }
  return names.str();
}

Target parseTarget(const std::string& text) {
  std::string isa_name = text;
  if (auto colon = text.find(':'); colon != std::string::npos) {
    std::string backend = text.substr(0, colon);
    HOSTIR_CHECK(backend == "cpu", "unknown target backend '", backend, "' in '", text,
                 "'; the only backend is cpu; valid targets are ", validTargetNames());
    isa_name = text.substr(colon + 1);
  }
  for (Isa isa : kAllIsas) {
    if (isaName(isa) == isa_name) {
      return targetForIsa(isa);
    }
  }
  HOSTIR_THROW("unknown target '", text, "'; valid targets are ", validTargetNames());
}

Target targetFromCpuFlags(const std::string& flags) {
  if (hasWord(flags, "avx512f")) {
    return targetForIsa(Isa::Avx512);
  }
  if (hasWord(flags, "avx2") && hasWord(flags, "fma")) {
    return targetForIsa(Isa::Avx2);
  }
  if (hasWord(flags, "asimd")) {
    return targetForIsa(Isa::Neon);
  }
  return targetForIsa(Isa::Generic);
}

std::string toString(const DeviceTargets& targets) {
  std::ostringstream text;
  const char* separator = "";
  for (const auto& [device, target] : targets) {
    text << separator << device << "=" << target.toString();
    separator = " ";
  }
  return text.str();
}

const Target& targetOf(const DeviceTargets& targets, int64_t device) {
  auto it = targets.find(device);
  HOSTIR_CHECK(it != targets.end(), "no target known for device ", device,
               "; targets are known for devices ", toString(targets),
               " (every device of a mesh needs one)");
  return it->second;
}

std::optional<int64_t> gemmNAxis(const TensorView* tv) {
  std::optional<int64_t> axis;
  for (const Expr* use : tv->uses()) {
    std::optional<int64_t> found;
    if (const auto* linear = dynamic_cast<const LinearOp*>(use); linear && linear->weight() == tv) {
      found = 0;
    } else if (const auto* mm = dynamic_cast<const MatmulOp*>(use); mm && mm->b() == tv) {
      found = 1;
    }
    if (found.has_value()) {
      HOSTIR_CHECK(!axis.has_value() || *axis == *found, tv->toInlineString(),
                   " is read both as a linear's weight [N, K] and as a matmul's right operand "
                   "[K, N]; one encoded tensor can have one panel layout: use two tensors");
      axis = found;
    }
  }
  return axis;
}

Layout resolveLayout(const TensorView* tv, const Target& target, std::optional<int64_t> n_axis) {
  if (!tv->hasEncoding()) {
    return Layout::identity();
  }
  const Encoding& encoding = *tv->encoding();
  if (encoding.isResolved()) {
    return *encoding.resolved;
  }
  // Resolvers: matmul_rhs where oneDNN blocks its weights; nothing else
  // (identity).
  if (encoding.kind != EncodingKind::MatmulRhs || target.matmul_rhs_n_block <= 0) {
    return Layout::identity();
  }
  const int64_t rank = tv->rank();
  const Layout blocked = Layout::dnnlBlocked(target.matmul_rhs_n_block, 1);
  HOSTIR_CHECK(rank == 2 && tv->dtype() == DataType::Float,
               "cannot resolve encoding matmul_rhs of ", tv->toInlineString(), " on target ",
               target.describe(), ": its resolver reorders a 2-D float GEMM operand into oneDNN's ",
               blocked.blockName(), " [ceilDiv(N, ", blocked.n_block, "), K rounded up to ",
               Layout::kDnnlKBlock, ", ", blocked.n_block, "], and this tensor is ", rank, "-D ",
               toString(tv->dtype()), "; give a 2-D float tensor or drop the encoding");
  int64_t axis = n_axis.has_value() ? *n_axis : gemmNAxis(tv).value_or(1);
  return Layout::dnnlBlocked(target.matmul_rhs_n_block, axis);
}

}  // namespace hostir
