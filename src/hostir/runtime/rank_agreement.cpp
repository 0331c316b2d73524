#include "hostir/runtime/rank_agreement.h"

#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "hostir/ir/ops.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/communication_plan.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/multidevice/uneven_stream_splits.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/expression_evaluator.h"

namespace hostir {

namespace {

std::optional<int64_t> globalExtentOf(const TensorView* tv, int64_t axis, const at::Tensor& column);

// FNV-1a: the same on every rank for the same text, whatever the platform's
// std::hash.
uint64_t fingerprintOf(const std::string& text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

// Allgathers `mine` (the same length on every rank) among `world`; row r is
// rank r's.
at::Tensor allgatherAmongAll(Communicator& communicator, int64_t stream_key, const at::Tensor& mine,
                             const std::string& what) {
  c10d::ProcessGroup& group = communicator.processGroup(communicator.worldTeam(), stream_key);
  at::Tensor gathered = at::empty({communicator.size(), mine.numel()}, at::kLong);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int64_t rank = 0; rank < communicator.size(); ++rank) {
    outputs[0].push_back(gathered[rank]);
  }
  std::vector<at::Tensor> contribution{mine};
  c10d::AllgatherOptions options;
  options.timeout = communicator.timeout();
  waitWork(group.allgather(outputs, contribution, options), communicator.timeout(), what);
  return gathered;
}

uint64_t signatureHash(const std::vector<int64_t>& signature) {
  std::string text;
  for (int64_t entry : signature) {
    text += std::to_string(entry) + ",";
  }
  return fingerprintOf(text);
}

std::string rankValues(const at::Tensor& values) {
  std::string text;
  for (int64_t rank = 0; rank < values.size(0); ++rank) {
    text += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + ": " +
            std::to_string(values[rank].item<int64_t>());
  }
  return text;
}

// What in `fusion` cannot yet take `tv` sharded unevenly (empty: all of it
// can): a Stream split other than a pipelined allgather + GEMM and its tail
// (streamSplitsRefusingUnevenShards), a reshape of it that reshards (a
// device's rows of one shape need not be whole rows of the other; one that
// keeps the sharded axis, mapReshape, cuts both sides alike, and
// insertReshardings has made every other one a reshape of a gathered
// tensor). Allgather, reduce-scatter, gather and scatter move torch.chunk's
// pieces (collectives.cpp).
std::string unevenShardsUnsupportedBy(const Fusion& fusion, const TensorView* tv) {
  if (std::string reason = streamSplitsRefusingUnevenShards(fusion); !reason.empty()) {
    return reason;
  }
  std::vector<const Expr*> uses(tv->uses().begin(), tv->uses().end());
  if (tv->definition() != nullptr) {
    uses.push_back(tv->definition());
  }
  for (const Expr* expr : uses) {
    if (dynamic_cast<const ReshapeOp*>(expr) != nullptr && isResharding(expr)) {
      return "it is reshaped by " + expr->toInlineString() +
             ", and a device's rows of one shape need not be whole rows of the other";
    }
  }
  return {};
}

// Every sharded axis of every tensor of `fusion` whose extent does not
// split evenly over its devices must be one the program can run as
// torch.chunk's pieces (unevenShardsUnsupportedBy). `input_extents` holds,
// per (input, axis), the global extent every rank agreed on. A tensor
// whose extent cannot be evaluated from them is skipped.
void checkUnevenShardsSupported(
    const Fusion& fusion, const std::vector<std::tuple<size_t, int64_t, int64_t>>& input_extents) {
  ExpressionEvaluator ee;
  for (const auto& [input, axis, extent] : input_extents) {
    const auto* tv = dynamic_cast<const TensorView*>(fusion.inputs().at(input));
    if (tv == nullptr) {
      continue;
    }
    const Val* symbol = tv->shapeDomain().at(static_cast<size_t>(axis))->extent();
    if (!symbol->as<Scalar>()->isConst() && symbol->definition() == nullptr &&
        !ee.isBound(symbol)) {
      ee.bind(symbol, extent);
    }
  }
  for (const std::unique_ptr<Statement>& statement : fusion.statements()) {
    const auto* tv = dynamic_cast<const TensorView*>(statement.get());
    if (tv == nullptr || !tv->hasDeviceMesh()) {
      continue;
    }
    const std::vector<int64_t> divisors = shardDivisors(tv);
    const std::vector<IterDomain*> shape = tv->shapeDomain();
    for (size_t axis = 0; axis < shape.size() && axis < divisors.size(); ++axis) {
      const int64_t devices = divisors[axis];
      if (devices <= 1 || !ee.canEvaluate(shape[axis]->extent())) {
        continue;
      }
      const int64_t extent = ee.evaluateInt(shape[axis]->extent());
      if (splitsEvenly(extent, devices)) {
        continue;
      }
      const std::string reason = unevenShardsUnsupportedBy(fusion, tv);
      if (reason.empty()) {
        continue;
      }
      const Expr* def = tv->definition();
      HOSTIR_THROW("uneven shards: ", tv->toInlineString(),
                   def == nullptr ? std::string(" (an input)")
                                  : " (the output of " + def->toInlineString() + ")",
                   " axis ", axis, " has extent ", extent, " sharded over ", devices,
                   " devices as torch.chunk cuts it (", rowChunk(extent, devices, 0).rows,
                   " rows on the first, ", rowChunk(extent, devices, devices - 1).rows,
                   " on the last), but ", reason, "; or pad the axis to a multiple of ", devices);
    }
  }
}

}  // namespace

RankAgreement::RankAgreement(const Fusion& prepared, const HostIrContainer& program,
                             Communicator& communicator)
    : prepared_(prepared),
      program_(program),
      communicator_(communicator),
      fingerprint_(fingerprintOf(prepared.toString())) {
  // Only when some rank misses an input do the ranks need to share shapes;
  // every rank decides the same from the same fusion.
  const std::vector<Val*>& inputs = program.inputs();
  bool some_rank_lacks_an_input = false;
  for (const Val* input : inputs) {
    const auto* tv = dynamic_cast<const TensorView*>(input);
    for (int64_t device = 0; tv != nullptr && device < communicator.size(); ++device) {
      some_rank_lacks_an_input |= tv->hasDeviceMesh() && !tv->getDeviceMesh().has(device);
    }
  }
  if (!some_rank_lacks_an_input) {
    return;
  }
  std::unordered_set<const Val*> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* tv = dynamic_cast<const TensorView*>(inputs[i]);
    if (tv == nullptr) {
      continue;
    }
    std::vector<IterDomain*> shape = tv->shapeDomain();
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      const auto* extent = shape[axis]->extent()->as<Scalar>();
      if (!extent->isConst() && extent->definition() == nullptr && seen.insert(extent).second) {
        input_extents_.push_back({extent, i, static_cast<int64_t>(axis)});
      }
    }
  }
}

std::vector<std::pair<const Val*, PolymorphicValue>> RankAgreement::exchangeInputExtents(
    const std::vector<at::Tensor>& inputs) {
  if (input_extents_.empty()) {
    return {};
  }
  HOSTIR_CHECK(inputs.size() == program_.inputs().size(), "the program expects ",
               program_.inputs().size(), " inputs but got ", inputs.size());
  const auto known = static_cast<int64_t>(input_extents_.size());
  at::Tensor mine = at::full({known}, -1, at::kLong);
  for (int64_t j = 0; j < known; ++j) {
    const InputExtent& extent = input_extents_[static_cast<size_t>(j)];
    const at::Tensor& tensor = inputs[extent.input];
    if (tensor.defined() && extent.axis < tensor.dim()) {
      mine[j] = tensor.size(extent.axis);
    }
  }
  // Every rank takes part, in the same order on every run; a stream key of
  // its own keeps this off the program's process groups.
  constexpr int64_t kExtentExchangeStreamKey = -2;
  at::Tensor gathered = allgatherAmongAll(communicator_, kExtentExchangeStreamKey, mine,
                                          "the exchange of input extents among all ranks");
  std::vector<std::pair<const Val*, PolymorphicValue>> symbols;
  for (int64_t j = 0; j < known; ++j) {
    const InputExtent& extent = input_extents_[static_cast<size_t>(j)];
    const auto* tv = program_.inputs()[extent.input]->as<TensorView>();
    const std::optional<int64_t> value = globalExtentOf(tv, extent.axis, gathered.select(1, j));
    HOSTIR_CHECK(value.has_value(), "no rank was given input ", tv->toInlineString(),
                 ", so its extent ", extent.symbol->toInlineString(), " is unknown");
    symbols.emplace_back(extent.symbol, *value);
  }
  return symbols;
}

namespace {

// What this rank holds: per input axis, its local size (-1: not held), and
// the (input, axis) of each entry.
struct HeldSizes {
  std::vector<int64_t> sizes;
  std::vector<std::pair<size_t, int64_t>> where;
};

HeldSizes heldSizes(const std::vector<Val*>& program_inputs,
                    const std::vector<at::Tensor>& inputs) {
  HeldSizes held;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* tv = dynamic_cast<const TensorView*>(program_inputs[i]);
    if (tv == nullptr) {
      continue;
    }
    for (int64_t axis = 0; axis < tv->rank(); ++axis) {
      const at::Tensor& tensor = inputs[i];
      held.sizes.push_back(tensor.defined() && axis < tensor.dim() ? tensor.size(axis) : -1);
      held.where.emplace_back(i, axis);
    }
  }
  return held;
}

// The headers' program columns (magic, fingerprint, axis count) and stream
// counts agree across ranks.
void checkSameProgram(const at::Tensor& headers) {
  for (int64_t column : {0, 1, 3}) {
    at::Tensor values = headers.select(1, column);
    HOSTIR_CHECK(at::equal(values, values[0].expand_as(values)),
                 "the ranks run different programs: the fingerprints of their fusions differ (",
                 rankValues(headers.select(1, 1)),
                 "); every rank must build the same fusion (same ops, meshes, shardings and "
                 "chunk counts) and construct its executors in the same order");
  }
  at::Tensor streams = headers.select(1, 2);
  HOSTIR_CHECK(at::equal(streams, streams[0].expand_as(streams)),
               "the ranks use different numbers of streams (", rankValues(streams),
               "); every rank must run with the same number_of_streams");
}

// The global extent of which the ranks' shards of `tv`'s sharded axis
// `axis` (`column`: one size per rank, -1 where not held) are the
// torch.chunk pieces (rowChunk, at each rank's index along the mesh
// dimension), or nullopt when they are the pieces of no extent: ranks
// that disagree on the global extent.
std::optional<int64_t> torchChunkRows(const TensorView* tv, int64_t axis,
                                      const at::Tensor& column) {
  const IterDomain* id = tv->shapeDomain().at(static_cast<size_t>(axis));
  const ParallelType parallel_type = shardingParallelType(tv, id);
  const DeviceMesh& mesh = tv->getDeviceMesh();
  const int64_t devices = mesh.size(parallel_type);
  std::map<int64_t, int64_t> size_at;  // index along the mesh dimension -> rows
  for (int64_t rank = 0; rank < column.size(0); ++rank) {
    const int64_t size = column[rank].item<int64_t>();
    if (size >= 0 && mesh.has(rank)) {
      size_at.emplace(mesh.idxOf(rank, parallel_type), size);
    }
  }
  if (static_cast<int64_t>(size_at.size()) != devices) {
    return std::nullopt;
  }
  int64_t rows = 0;
  for (const auto& [index, size] : size_at) {
    rows += size;
  }
  for (int64_t rank = 0; rank < column.size(0); ++rank) {
    const int64_t size = column[rank].item<int64_t>();
    if (size >= 0 && mesh.has(rank) &&
        size != rowChunk(rows, devices, mesh.idxOf(rank, parallel_type)).rows) {
      return std::nullopt;
    }
  }
  return rows;
}

// The global extent of `tv`'s shape axis `axis` from every rank's size of
// it (`column`, -1 where not held): a sharded axis's is the sum of its
// torch.chunk pieces, a replicated one's any holder's size; nullopt when
// no rank (or not every index along the mesh dimension) holds it.
std::optional<int64_t> globalExtentOf(const TensorView* tv, int64_t axis,
                                      const at::Tensor& column) {
  if (shardDivisors(tv)[static_cast<size_t>(axis)] > 1) {
    return torchChunkRows(tv, axis, column);
  }
  const int64_t size = column.max().item<int64_t>();
  return size >= 0 ? std::optional<int64_t>(size) : std::nullopt;
}

// One input axis as every rank holds it (`column`: one size per rank, -1
// where a rank does not hold the input): equal wherever held.
void checkAxisAgrees(const TensorView* tv, size_t input, int64_t axis, const at::Tensor& column) {
  int64_t first_rank = -1;
  for (int64_t rank = 0; rank < column.size(0); ++rank) {
    const int64_t size = column[rank].item<int64_t>();
    if (size < 0) {
      continue;  // this rank does not hold the input
    }
    if (first_rank < 0) {
      first_rank = rank;
      continue;
    }
    if (size == column[first_rank].item<int64_t>()) {
      continue;
    }
    std::string holders;
    for (int64_t r = 0; r < column.size(0); ++r) {
      if (column[r].item<int64_t>() >= 0) {
        holders += (holders.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) +
                   " holds " + std::to_string(column[r].item<int64_t>());
      }
    }
    const int64_t devices = shardDivisors(tv)[static_cast<size_t>(axis)];
    if (devices > 1) {
      if (torchChunkRows(tv, axis, column).has_value()) {
        return;  // torch.chunk's pieces of one extent: checked against the program later
      }
      HOSTIR_THROW("uneven shards: input ", input, " ", tv->toInlineString(), " axis ", axis,
                   " is sharded over ", devices, " devices but its shards differ (", holders,
                   ") and are no torch.chunk layout of any extent (the first devices hold "
                   "ceil(rows / ",
                   devices,
                   ") each, the last ones fewer): the ranks disagree on the global extent; pad "
                   "the axis to a multiple of ",
                   devices, " and give every rank its equal shard");
    }
    HOSTIR_THROW("size mismatch across ranks: input ", input, " ", tv->toInlineString(), " axis ",
                 axis, " is not sharded, so every rank must give it the same size (", holders, ")");
  }
}

}  // namespace

std::vector<std::pair<const Val*, PolymorphicValue>> RankAgreement::check(
    const std::vector<at::Tensor>& inputs, const std::vector<int64_t>& signature,
    int number_of_streams) {
  const std::vector<Val*>& program_inputs = program_.inputs();
  HOSTIR_CHECK(inputs.size() == program_inputs.size(), "the program expects ",
               program_inputs.size(), " inputs but got ", inputs.size());
  const HeldSizes held = heldSizes(program_inputs, inputs);
  // Every run, every rank shares a header with a hash of its input
  // signature (the same key the run path uses): what one rank has seen before says nothing about
  // what the others run now (issue 22). The detailed check runs only for a combination of the
  // ranks' signatures not agreed on before; every rank decides that from the
  // same gathered headers, so all take the same path. Check in a process
  // group of its own, apart from the program's.
  constexpr int64_t kAgreementStreamKey = -3;
  constexpr int64_t kMagic = 0x686f737469720b;  // "hostir", 11
  constexpr int64_t kSignatureColumn = 4;
  at::Tensor header =
      at::tensor({kMagic, static_cast<int64_t>(fingerprint_ >> 1),
                  static_cast<int64_t>(number_of_streams), static_cast<int64_t>(held.sizes.size()),
                  static_cast<int64_t>(signatureHash(signature) >> 1)},
                 at::kLong);
  at::Tensor headers = allgatherAmongAll(communicator_, kAgreementStreamKey, header,
                                         "the check that all ranks run the same program");
  checkSameProgram(headers);

  at::Tensor signatures = headers.select(1, kSignatureColumn).contiguous();
  std::vector<int64_t> all_signatures(signatures.data_ptr<int64_t>(),
                                      signatures.data_ptr<int64_t>() + signatures.numel());
  if (held.sizes.empty()) {
    return {};
  }
  if (auto agreed = agreed_signatures_.find(all_signatures); agreed != agreed_signatures_.end()) {
    return agreed->second;
  }
  at::Tensor all =
      allgatherAmongAll(communicator_, kAgreementStreamKey, at::tensor(held.sizes, at::kLong),
                        "the check that all ranks agree on the input sizes");
  // The ranks agree on the inputs, so on every extent derived from them:
  // every rank raises the same error here, before any collective.
  std::vector<std::tuple<size_t, int64_t, int64_t>> input_extents;
  std::vector<std::pair<const Val*, PolymorphicValue>> global_extents;
  for (size_t j = 0; j < held.where.size(); ++j) {
    const auto [input, axis] = held.where[j];
    const auto* tv = program_inputs[input]->as<TensorView>();
    at::Tensor column = all.select(1, static_cast<int64_t>(j));
    checkAxisAgrees(tv, input, axis, column);
    const std::optional<int64_t> extent = globalExtentOf(tv, axis, column);
    if (!extent.has_value()) {
      continue;
    }
    input_extents.emplace_back(input, axis, *extent);
    const auto* symbol = tv->shapeDomain()[static_cast<size_t>(axis)]->extent()->as<Scalar>();
    if (shardDivisors(tv)[static_cast<size_t>(axis)] > 1 && !symbol->isConst() &&
        symbol->definition() == nullptr) {
      global_extents.emplace_back(symbol, *extent);
    }
  }
  checkUnevenShardsSupported(prepared_, input_extents);
  if (agreed_signatures_.size() >= kMaxAgreedSignatures) {
    agreed_signatures_.clear();  // a bound; a combination seen again is checked again
  }
  agreed_signatures_.emplace(std::move(all_signatures), global_extents);
  return global_extents;
}

}  // namespace hostir
