#pragma once

#include <string>

#include "hostir/ir/statement.h"

namespace hostir {

// A stream of the host program: an ordered queue of work. A plain Stream
// names one stream (e.g. the one GetCurrentStream returned); an indexed
// Stream picks a stream of the runtime's pool by evaluating `index` (e.g.
// `StreamIdx % numberOfStreams`), and the same index always picks the same
// stream within a run.
class Stream : public Val {
 public:
  explicit Stream(Fusion* container, Val* index = nullptr);

  bool hasIndex() const {
    return index_ != nullptr;
  }
  // The index Val; nullptr for a plain stream.
  Val* index() const {
    return index_;
  }

  // Indexed streams are the same when their indices are; a plain stream is
  // only the same as itself.
  bool sameAs(const Val* other) const override;
  Val* cloneInto(IrCloner& cloner) const override;
  // "Stream 0" or "Stream ( StreamIdx % numberOfStreams )".
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  Val* index_;
};

}  // namespace hostir
