#include "hostir/host_ir/passes/causal_key_ranges.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/host_ir.h"
#include "hostir/host_ir/passes/stream_loop.h"
#include "hostir/host_ir/program_exprs.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/scalar.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"

namespace hostir {

bool isCausalMask(const TensorView* mask) {
  const Expr* def = mask->definition();
  if (const auto* post = dynamic_cast<const PostOnStream*>(def)) {
    const auto& outputs = post->outputs();
    auto it = std::find(outputs.begin(), outputs.end(), mask);
    if (it == outputs.end() || !post->variants().empty()) {
      return false;
    }
    return isCausalMaskFromZero(
        post->hostUnit()->fusion()->outputs().at(static_cast<size_t>(it - outputs.begin())));
  }
  return def != nullptr && isCausalMaskFromZero(mask);
}

namespace {

bool reducesLastAxis(const Expr* expr, ReductionOpType type) {
  const auto* reduction = dynamic_cast<const ReductionOp*>(expr);
  if (reduction == nullptr || reduction->type() != type) {
    return false;
  }
  const int64_t last = reduction->in()->rank() - 1;
  return reduction->axes() == std::vector<int64_t>{last};
}

bool broadcastsLastAxis(const Expr* expr) {
  const auto* broadcast = dynamic_cast<const BroadcastOp*>(expr);
  return broadcast != nullptr && !broadcast->isBroadcastDims().empty() &&
         broadcast->isBroadcastDims().back() != 0 &&
         std::count(broadcast->isBroadcastDims().begin(), broadcast->isBroadcastDims().end(), 1) ==
             1;
}

bool isBinary(const Expr* expr, BinaryOpType type, const Val* lhs, const Val* rhs) {
  const auto* binary = dynamic_cast<const BinaryOp*>(expr);
  return binary != nullptr && binary->type() == type && binary->lhs() == lhs &&
         binary->rhs() == rhs;
}

// One masked softmax between two batched matmuls, in one loop body.
struct CausalChain {
  Val* key_stop = nullptr;  // the loop's query rows end here
  const SliceOp* mask_rows = nullptr;
  std::vector<Expr*> ops;      // scores matmul .. div, in program order
  MatmulOp* values = nullptr;  // O = matmul(P, V)
};

class CausalChainFinder {
 public:
  explicit CausalChainFinder(Scope& body) {
    for (Expr* expr : body) {
      in_body_.insert(expr);
      for (Val* input : expr->inputs()) {
        readers_[input].push_back(expr);
      }
    }
  }

  std::optional<CausalChain> match(WhereOp* where) const {
    CausalChain chain;
    const auto* mask_rows = dynamic_cast<const SliceOp*>(where->condition()->definition());
    if (!isConstantScalar(where->b(), -INFINITY) || mask_rows == nullptr ||
        in_body_.count(mask_rows) == 0 || mask_rows->dim() != 0 || mask_rows->in()->rank() != 2 ||
        !isCausalMask(mask_rows->in())) {
      return std::nullopt;
    }
    chain.mask_rows = mask_rows;
    chain.key_stop = mask_rows->stop();

    // Back from the where to the scores matmul through scalar pointwise ops.
    std::vector<Expr*> before;
    Val* current = where->a();
    for (;;) {
      Expr* def = onlyDefinitionInBody(current);
      if (def == nullptr || readersOf(current).size() != 1) {
        return std::nullopt;
      }
      before.push_back(def);
      if (auto* scores = dynamic_cast<MatmulOp*>(def)) {
        if (in_body_.count(scores->b()->definition()) != 0) {
          return std::nullopt;  // the keys must be whole, computed before the loop
        }
        break;
      }
      if (!isScalarPointwise(def)) {
        return std::nullopt;
      }
      current = def->input(0);
    }
    std::reverse(before.begin(), before.end());
    chain.ops = before;
    chain.ops.push_back(where);

    // The softmax over the last axis, exactly.
    Val* masked = where->out();
    Expr* max = oneReaderThat(
        masked, [](const Expr* e) { return reducesLastAxis(e, ReductionOpType::Max); });
    Expr* max_b = max == nullptr ? nullptr : onlyReader(max->output(0), broadcastsLastAxis);
    Expr* sub = max_b == nullptr ? nullptr : oneReaderThat(masked, [&](const Expr* e) {
      return isBinary(e, BinaryOpType::Sub, masked, max_b->output(0));
    });
    if (sub == nullptr || readersOf(masked).size() != 2) {
      return std::nullopt;
    }
    Expr* exp = onlyReader(sub->output(0), [](const Expr* e) {
      const auto* unary = dynamic_cast<const UnaryOp*>(e);
      return unary != nullptr && unary->type() == UnaryOpType::Exp;
    });
    if (exp == nullptr) {
      return std::nullopt;
    }
    Val* e = exp->output(0);
    Expr* sum =
        oneReaderThat(e, [](const Expr* r) { return reducesLastAxis(r, ReductionOpType::Sum); });
    Expr* sum_b = sum == nullptr ? nullptr : onlyReader(sum->output(0), broadcastsLastAxis);
    Expr* div = sum_b == nullptr ? nullptr : oneReaderThat(e, [&](const Expr* r) {
      return isBinary(r, BinaryOpType::Div, e, sum_b->output(0));
    });
    if (div == nullptr || readersOf(e).size() != 2) {
      return std::nullopt;
    }
    Val* probs = div->output(0);
    auto* values = dynamic_cast<MatmulOp*>(onlyReader(
        probs, [&](const Expr* r) { return r->isA<MatmulOp>() && r->input(0) == probs; }));
    if (values == nullptr || in_body_.count(values->b()->definition()) != 0) {
      return std::nullopt;
    }
    chain.ops.insert(chain.ops.end(), {max, max_b, sub, exp, sum, sum_b, div});
    chain.values = values;
    return chain;
  }

 private:
  static bool isScalarPointwise(const Expr* expr) {
    if (expr->isA<UnaryOp>()) {
      return true;
    }
    const auto* binary = dynamic_cast<const BinaryOp*>(expr);
    return binary != nullptr && dynamic_cast<const TensorView*>(binary->lhs()) != nullptr &&
           dynamic_cast<const Scalar*>(binary->rhs()) != nullptr;
  }

  Expr* onlyDefinitionInBody(const Val* val) const {
    Expr* def = val->definition();
    return def != nullptr && in_body_.count(def) != 0 ? def : nullptr;
  }

  const std::vector<Expr*>& readersOf(const Val* val) const {
    static const std::vector<Expr*> kNone;
    auto it = readers_.find(val);
    return it == readers_.end() ? kNone : it->second;
  }

  template <typename Predicate>
  Expr* oneReaderThat(const Val* val, Predicate predicate) const {
    for (Expr* reader : readersOf(val)) {
      if (predicate(reader)) {
        return reader;
      }
    }
    return nullptr;
  }

  template <typename Predicate>
  Expr* onlyReader(const Val* val, Predicate predicate) const {
    const std::vector<Expr*>& readers = readersOf(val);
    return readers.size() == 1 && predicate(readers.front()) ? readers.front() : nullptr;
  }

  std::unordered_set<const Expr*> in_body_;
  std::unordered_map<const Val*, std::vector<Expr*>> readers_;
};

// `tv` as this device holds it, its rows (the axis before the last) of
// extent `rows` and its last non-broadcast axis (reduced or not) of extent
// `keys`.
TensorView* narrowed(const TensorView* tv, Val* rows, Val* keys) {
  std::vector<IterDomain*> ids;
  const std::vector<IterDomain*>& logical = tv->getLogicalDomain();
  for (size_t i = 0; i < logical.size(); ++i) {
    Val* extent = logical[i]->isReduction() ? logical[i]->extent() : localExtent(tv, logical[i]);
    if (i + 2 == logical.size()) {
      extent = rows;
    } else if (i + 1 == logical.size() && !logical[i]->isBroadcast()) {
      extent = keys;
    }
    ids.push_back(
        IrBuilder::createInContainer<IterDomain>(tv->container(), extent, logical[i]->iterType()));
  }
  return makeTensorOver(tv->container(), ids, tv->dtype());
}

Val* constant(HostIrContainer& container, int64_t value) {
  return IrBuilder::createInContainer<Scalar>(&container, value);
}

}  // namespace

TensorView* sliceAlong(HostIrContainer& container, TensorView* tv, int64_t dim, Val* start,
                       Val* stop, std::vector<Expr*>& emitted) {
  std::vector<Val*> extents;
  const std::vector<IterDomain*> shape = tv->shapeDomain();
  for (size_t i = 0; i < shape.size(); ++i) {
    Val* extent = start == nullptr ? stop : sub(stop, start);
    extents.push_back(static_cast<int64_t>(i) == dim ? extent : localExtent(tv, shape[i]));
  }
  if (start == nullptr) {
    start = constant(container, 0);
  }
  TensorView* part = makeTensorOfExtents(&container, extents, tv->dtype());
  emitted.push_back(
      IrBuilder::createInContainer<SliceOp>(&container, std::vector<Val*>{tv, start, stop},
                                            std::vector<Val*>{part}, std::vector<Attribute>{dim}));
  return part;
}

bool boundBefore(const Scope& body, const Val* out, const Expr* writer) {
  for (const Expr* expr : body) {
    if (expr == writer) {
      return false;
    }
    const std::vector<Val*>& outputs = expr->outputs();
    if (std::find(outputs.begin(), outputs.end(), out) != outputs.end()) {
      return true;
    }
    const auto* allocate = dynamic_cast<const Allocate*>(expr);
    if (allocate != nullptr && allocate->buffer() == out) {
      return true;
    }
  }
  return false;
}

namespace {

// The probabilities as a view of rows of a buffer that others read (a
// training forward keeps them for the backward, a program output): the
// slice of `body` that binds them, along their rows, or nullptr. The tiles
// write them where P·V was, later than the softmax did: nothing else in
// the body may read that buffer (through another view) in between, so
// nothing else in the body reads it at all.
const SliceOp* keptProbabilities(const Scope& body, const Val* probs) {
  const SliceOp* found = nullptr;
  for (const Expr* expr : body) {
    const auto* binding = dynamic_cast<const SliceOp*>(expr);
    if (binding != nullptr && binding->out() == probs) {
      found = binding;
    }
  }
  if (found == nullptr || found->dim() != found->out()->rank() - 2) {
    return nullptr;
  }
  for (const Expr* expr : body) {
    const std::vector<Val*>& inputs = expr->inputs();
    if (expr != found && std::find(inputs.begin(), inputs.end(), found->in()) != inputs.end()) {
      return nullptr;
    }
  }
  return found;
}

// zeros into `tv` (a view of a buffer), as a new expr appended to `emitted`.
void fillWithZeros(HostIrContainer& container, TensorView* tv, std::vector<Expr*>& emitted) {
  std::vector<Val*> inputs{IrBuilder::createInContainer<Scalar>(&container, 0.0)};
  for (IterDomain* id : tv->shapeDomain()) {
    inputs.push_back(id->extent());
  }
  emitted.push_back(IrBuilder::createInContainer<FullOp>(&container, inputs, std::vector<Val*>{tv},
                                                         std::vector<Attribute>{}));
}

// Every chain tensor must be private to the chain: its views and buffer
// (`holders`) go with it. The probabilities may instead be rows of a buffer
// kept for others (`kept`): each tile then writes its rows' visible keys
// there and zeros past them, what the whole-width softmax wrote (exp(-inf)
// is 0). nullopt when another chain tensor is read elsewhere.
struct ChainHolders {
  ScopedExprs holders;
  const SliceOp* kept = nullptr;
};

std::optional<ChainHolders> holdersOf(HostIrContainer& container, const Scope& body,
                                      const CausalChain& chain) {
  std::unordered_set<const Expr*> chain_exprs(chain.ops.begin(), chain.ops.end());
  chain_exprs.insert(chain.values);
  ChainHolders result;
  for (const Expr* op : chain.ops) {
    std::optional<ScopedExprs> private_chain =
        privateViewChain(container, op->output(0), chain_exprs);
    if (!private_chain) {
      result.kept = op == chain.ops.back() ? keptProbabilities(body, op->output(0)) : nullptr;
      if (result.kept == nullptr) {
        return std::nullopt;
      }
      continue;
    }
    result.holders.insert(result.holders.end(), private_chain->begin(), private_chain->end());
  }
  return result;
}

bool rewrite(HostIrContainer& container, Scope& body, const CausalChain& chain) {
  std::optional<ChainHolders> held = holdersOf(container, body, chain);
  if (!held) {
    return false;
  }
  const SliceOp* kept = held->kept;

  auto* scores = chain.ops.front()->as<MatmulOp>();
  TensorView* queries = scores->a();                                 // [.., rows, head_dim]
  auto* probs_times_values = chain.values->out()->as<TensorView>();  // [.., rows, head_dim]
  const auto row_axis = static_cast<int64_t>(queries->shapeDomain().size()) - 2;
  const auto out_row_axis = static_cast<int64_t>(probs_times_values->shapeDomain().size()) - 2;
  Val* rows = localExtent(queries, queries->shapeDomain()[static_cast<size_t>(row_axis)]);

  if (!boundBefore(body, probs_times_values, chain.values)) {
    // The tiles write their rows into O: it must be a buffer (or a view of
    // one) before them, as the stream pass makes every loop output.
    return false;
  }

  // The chunk's rows in tiles of at most kCausalQueryTileRows, each against
  // the keys its own rows see: [0, chunk start + tile stop).
  Val* tile_rows = constant(container, kCausalQueryTileRows);
  auto* tile = IrBuilder::createInContainer<Scalar>(&container, kQueryTile, DataType::Int64);
  auto* tiles = IrBuilder::createInContainer<ForLoop>(
      &container, tile, constant(container, 0), ceilDiv(rows, tile_rows), constant(container, 1));
  const auto [tile_start, tile_stop] = chunkBounds(tile, tile_rows, rows);
  // Queries past the last key (more queries than keys) see every key: the
  // prefix never extends past the keys there are.
  const std::vector<IterDomain*> key_shape = scores->b()->shapeDomain();
  Val* keys =
      minimum(add(chain.mask_rows->start(), tile_stop), localExtent(scores->b(), key_shape.back()));

  std::vector<Expr*> emitted;
  std::unordered_map<const Val*, Val*> replaced;
  replaced[queries] = sliceAlong(container, queries, row_axis, tile_start, tile_stop, emitted);
  replaced[scores->b()] =
      sliceAlong(container, scores->b(), scores->b()->rank() - 1, nullptr, keys, emitted);
  auto* mask_rows = const_cast<SliceOp*>(chain.mask_rows);
  TensorView* mask_tile =
      sliceAlong(container, mask_rows->out(), 0, tile_start, tile_stop, emitted);
  replaced[mask_rows->out()] = sliceAlong(container, mask_tile, 1, nullptr, keys, emitted);
  TensorView* values = chain.values->b();
  replaced[values] = sliceAlong(container, values, values->rank() - 2, nullptr, keys, emitted);
  TensorView* out_tile =
      sliceAlong(container, probs_times_values, out_row_axis, tile_start, tile_stop, emitted);

  // The buffers first, then the ops back to back: the loop kernel pass
  // groups a run of ops that nothing else interrupts.
  Val* rows_here = sub(tile_stop, tile_start);
  std::vector<Expr*> ops;
  TensorView* unseen_keys = nullptr;  // of the kept probabilities' tile rows
  for (Expr* op : chain.ops) {
    std::vector<Val*> inputs;
    for (Val* input : op->inputs()) {
      auto it = replaced.find(input);
      inputs.push_back(it == replaced.end() ? input : it->second);
    }
    TensorView* out = nullptr;
    if (kept != nullptr && op == chain.ops.back()) {
      TensorView* probs = kept->out();
      const int64_t key_axis = probs->rank() - 1;
      TensorView* tile_rows =
          sliceAlong(container, probs, key_axis - 1, tile_start, tile_stop, emitted);
      out = sliceAlong(container, tile_rows, key_axis, nullptr, keys, emitted);
      unseen_keys = sliceAlong(container, tile_rows, key_axis, keys,
                               localExtent(probs, probs->shapeDomain().back()), emitted);
    } else {
      out = narrowed(op->output(0)->as<TensorView>(), rows_here, keys);
      emitted.push_back(IrBuilder::createInContainer<Allocate>(&container, out));
    }
    ops.push_back(op->newObject(&container, inputs, {out}, op->attributes(), op->attributeVals()));
    replaced[op->output(0)] = out;
  }
  emitted.insert(emitted.end(), ops.begin(), ops.end());
  std::vector<Val*> value_inputs{replaced.at(chain.values->a()), replaced.at(values)};
  emitted.push_back(chain.values->newObject(&container, value_inputs, {out_tile},
                                            chain.values->attributes(),
                                            chain.values->attributeVals()));
  if (unseen_keys != nullptr) {
    fillWithZeros(container, unseen_keys, emitted);
  }
  for (Expr* expr : emitted) {
    tiles->body().push_back(expr);
  }
  body.insertBefore(chain.values, tiles);
  body.erase(chain.values);
  for (Expr* op : chain.ops) {
    body.erase(op);
  }
  for (const auto& [scope, holder] : held->holders) {
    if (scope->contains(holder)) {
      scope->erase(holder);
    }
  }
  return true;
}

void narrowLoop(HostIrContainer& container, ForLoop* loop) {
  Scope& body = loop->body();
  for (Expr* expr : body.toVector()) {
    auto* where = dynamic_cast<WhereOp*>(expr);
    if (where == nullptr || !body.contains(where)) {
      continue;
    }
    if (std::optional<CausalChain> chain = CausalChainFinder(body).match(where)) {
      rewrite(container, body, *chain);
    }
  }
}

}  // namespace

void narrowCausalKeyRanges(HostIrContainer& container) {
  for (Expr* expr : container.topLevel().toVector()) {
    if (auto* loop = dynamic_cast<ForLoop*>(expr)) {
      narrowLoop(container, loop);
    }
  }
  skipCausalZeroBlocks(container);
}

}  // namespace hostir
