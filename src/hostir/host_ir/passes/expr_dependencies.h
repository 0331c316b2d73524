#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace hostir {

class Expr;
class Scope;
class Val;

// What the host-program scheduling passes (collective_scheduling,
// recompute_scheduling) ask before they move a top-level expr past another:
// which buffers each expr reads and writes, views resolved to the buffers
// they belong to.

using ValSet = std::unordered_set<const Val*>;

// The buffer each view (a slice, an alias select, a reshape) of the program
// reads and writes through: a Stream loop fills a buffer slice by slice, so
// its body writes views, never the buffer a collective reads.
class ViewBases {
 public:
  explicit ViewBases(const Scope& top);

  // `val` and every buffer it is a view of.
  void insertWithBases(const Val* val, ValSet& into) const;
  std::vector<Val*> withBases(const std::vector<Val*>& vals) const;

 private:
  void collect(const Scope& scope);

  std::unordered_map<const Val*, const Val*> base_;
};

// What an expr (a loop: its body too) reads and writes, with the buffers
// its views belong to. A Wait completes its collective: it writes the
// collective's output and reads its input.
void collectVals(const Expr* expr, const ViewBases& bases, ValSet& reads, ValSet& writes);

bool intersects(const ValSet& a, const std::vector<Val*>& b);
bool intersects(const ValSet& a, const ValSet& b);

// Exprs no collective, Wait or compute moves across: they change which
// stream is current or order streams, or they group collectives.
bool isStreamBarrier(const Expr* expr);

}  // namespace hostir
