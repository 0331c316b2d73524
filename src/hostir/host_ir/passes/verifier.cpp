#include "hostir/host_ir/passes/verifier.h"

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hostir/host_ir/host_ir.h"
#include "hostir/ir/error.h"
#include "hostir/ir/tensor_view.h"

namespace hostir {
namespace {

class HostProgramVerifier {
 public:
  explicit HostProgramVerifier(const HostIrContainer& program) {
    for (const ForLoop* loop : loopsOf(program.topLevel())) {
      all_indices_.insert(loop->index());
    }
    for (const Val* input : program.inputs()) {
      defined_.insert(input);
    }
    collectPosts(program.topLevel());
  }

  void verify(const Scope& scope) {
    for (const Expr* expr : scope) {
      checkIndicesInScope(expr);
      checkDefinedBeforeUse(expr);
      if (const auto* wait = dynamic_cast<const Wait*>(expr)) {
        checkWaitPairing(wait);
      }
      if (isPost(expr)) {
        posted_.emplace(expr, loops_);
      }
      for (const Val* output : expr->outputs()) {
        defined_.insert(output);
      }
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        in_scope_.push_back(loop->index());
        loops_.push_back(loop);
        verify(loop->body());
        loops_.pop_back();
        in_scope_.pop_back();
      }
    }
  }

 private:
  // What a Wait can complete (Wait's own constructor enforces the kinds).
  static bool isPost(const Expr* expr) {
    return expr->isA<Communication>() || expr->isA<P2PCommunication>() ||
           expr->isA<EndCoalescing>();
  }

  void collectPosts(const Scope& scope) {
    for (const Expr* expr : scope) {
      if (isPost(expr)) {
        all_posts_.insert(expr);
      }
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        collectPosts(loop->body());
      }
    }
  }

  static std::string placeOf(const std::vector<const ForLoop*>& loops) {
    if (loops.empty()) {
      return "the top level";
    }
    std::string place = "\"";
    place += loops.back()->toInlineString();
    place += '"';
    return place;
  }

  static bool sameIterations(const ForLoop* a, const ForLoop* b) {
    return a == b || (a->start()->sameAs(b->start()) && a->stop()->sameAs(b->stop()) &&
                      a->step()->sameAs(b->step()));
  }

  // The pairing rule (Wait in host_ir/communication.h): the n-th run of a
  // Wait completes the n-th run of its post, so the post is in this
  // program, comes first, has no other Wait, and runs as often: both sit in
  // the same loops, or in loops of their own over the same iterations (a
  // prefetch loop posting, a compute loop waiting).
  void checkWaitPairing(const Wait* wait) {
    const Expr* post = wait->communication();
    HOSTIR_CHECK(all_posts_.count(post) > 0, wait->toInlineString(), " waits for ",
                 post->toInlineString(),
                 ", which is not in this program; a Wait completes a post of its own program");
    auto posted = posted_.find(post);
    HOSTIR_CHECK(posted != posted_.end(), wait->toInlineString(), " comes before ",
                 post->toInlineString(),
                 ", which it waits for; a Wait must follow its communication");
    auto [first, inserted] = waited_.emplace(post, loops_);
    HOSTIR_CHECK(inserted, post->toInlineString(), " has two Waits, in ", placeOf(first->second),
                 " and in ", placeOf(loops_),
                 "; each run of a post is completed by exactly one Wait, remove one");
    const std::vector<const ForLoop*>& post_loops = posted->second;
    size_t shared = 0;
    while (shared < post_loops.size() && shared < loops_.size() &&
           post_loops[shared] == loops_[shared]) {
      ++shared;
    }
    bool same_runs = post_loops.size() == loops_.size();
    for (size_t i = shared; same_runs && i < loops_.size(); ++i) {
      same_runs = sameIterations(post_loops[i], loops_[i]);
    }
    HOSTIR_CHECK(same_runs, wait->toInlineString(), " in ", placeOf(loops_),
                 " does not run as often as its post in ", placeOf(post_loops),
                 "; put the Wait in the post's loops, or in loops over the same iterations");
  }

  static std::vector<const ForLoop*> loopsOf(const Scope& scope) {
    std::vector<const ForLoop*> loops;
    for (const Expr* expr : scope) {
      if (const auto* loop = dynamic_cast<const ForLoop*>(expr)) {
        loops.push_back(loop);
        for (const ForLoop* nested : loopsOf(loop->body())) {
          loops.push_back(nested);
        }
      }
    }
    return loops;
  }

  void checkDefinedBeforeUse(const Expr* expr) {
    if (expr->isA<Communication>() || expr->isA<P2PCommunication>()) {
      return;
    }
    for (const Val* input : expr->inputs()) {
      if (input->vtype() == ValType::TensorView) {
        HOSTIR_CHECK(defined_.count(input) > 0, input->toInlineString(), " is read by\n",
                     expr->toString(1),
                     "before the program computes, allocates or views it; define it earlier");
      }
    }
  }

  void checkIndicesInScope(const Expr* expr) {
    std::vector<const Val*> vals(expr->inputs().begin(), expr->inputs().end());
    vals.insert(vals.end(), expr->outputs().begin(), expr->outputs().end());
    vals.insert(vals.end(), expr->attributeVals().begin(), expr->attributeVals().end());
    const auto* loop = dynamic_cast<const ForLoop*>(expr);
    for (const Val* val : vals) {
      for (const Val* index : indicesOf(val)) {
        const bool own_index = loop != nullptr && index == loop->index();
        bool in_scope = false;
        for (const Val* active : in_scope_) {
          in_scope = in_scope || active == index;
        }
        HOSTIR_CHECK(in_scope || own_index, val->toInlineString(), " in\n", expr->toString(1),
                     "depends on the index of a loop it is not in; a loop's index and what is "
                     "computed from it exist only inside that loop's body");
      }
    }
  }

  // The loop indices `val` depends on: through scalar definitions, and for
  // a tensor, through the extents of its axes.
  const std::set<const Val*>& indicesOf(const Val* val) {
    auto cached = indices_.find(val);
    if (cached != indices_.end()) {
      return cached->second;
    }
    std::set<const Val*> found;
    if (all_indices_.count(val) > 0) {
      found.insert(val);
    } else if (const auto* tv = dynamic_cast<const TensorView*>(val)) {
      for (const auto* domain : {&tv->getLogicalDomain(), &tv->getLoopDomain()}) {
        for (const IterDomain* id : *domain) {
          const std::set<const Val*>& of_extent = indicesOf(id->extent());
          found.insert(of_extent.begin(), of_extent.end());
        }
      }
    } else if (val->vtype() == ValType::Scalar && val->definition() != nullptr) {
      for (const Val* operand : val->definition()->inputs()) {
        const std::set<const Val*>& of_operand = indicesOf(operand);
        found.insert(of_operand.begin(), of_operand.end());
      }
    }
    return indices_.emplace(val, std::move(found)).first->second;
  }

  std::unordered_set<const Val*> all_indices_;
  std::vector<const Val*> in_scope_;
  std::unordered_set<const Val*> defined_;
  std::unordered_set<const Expr*> all_posts_;
  // The loops each post (or Wait) seen so far sits in, outermost first.
  std::unordered_map<const Expr*, std::vector<const ForLoop*>> posted_;
  std::unordered_map<const Expr*, std::vector<const ForLoop*>> waited_;
  std::vector<const ForLoop*> loops_;
  std::unordered_map<const Val*, std::set<const Val*>> indices_;
};

}  // namespace

void verifyHostProgram(const HostIrContainer& program) {
  HostProgramVerifier(program).verify(program.topLevel());
}

}  // namespace hostir
