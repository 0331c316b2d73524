#include "hostir/host_ir/passes/current_streams.h"

#include "hostir/host_ir/for_loop.h"
#include "hostir/host_ir/scope.h"
#include "hostir/host_ir/stream_ops.h"

namespace hostir {
namespace {

using Id = CurrentStreams::Id;

// The streams GetCurrentStream named: a named stream is the one that was
// current there.
using Names = std::unordered_map<const Val*, Id>;

Id currentAfter(const Expr* expr, Id current, Names& names) {
  if (const auto* get = dynamic_cast<const GetCurrentStream*>(expr)) {
    names[get->stream()] = current;
    return current;
  }
  if (const auto* set = dynamic_cast<const SetCurrentStream*>(expr)) {
    auto named = names.find(set->stream());
    // A stream no GetCurrentStream named (a worker, Stream(StreamIdx % n))
    // is its own identity.
    return named != names.end() ? named->second : static_cast<Id>(set->stream());
  }
  if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
    Id after_body = current;
    for (const Expr* inner : loop->body()) {
      after_body = currentAfter(inner, after_body, names);
    }
    // A loop that may run no iteration leaves either stream current.
    return after_body == current ? current : nullptr;
  }
  return current;
}

}  // namespace

CurrentStreams::CurrentStreams(const Scope& top) {
  Names names;
  Id current = &top;  // the caller's stream
  for (const Expr* expr : top) {
    before_[expr] = current;
    current = currentAfter(expr, current, names);
  }
  at_end_ = current;
}

Id CurrentStreams::before(const Expr* expr) const {
  auto found = before_.find(expr);
  return found == before_.end() ? nullptr : found->second;
}

}  // namespace hostir
