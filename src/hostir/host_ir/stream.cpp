#include "hostir/host_ir/stream.h"

#include "hostir/ir/cloner.h"
#include "hostir/ir/fusion.h"

namespace hostir {

Stream::Stream(Fusion* container, Val* index)
    : Val(container, ValType::Stream, DataType::Int64), index_(index) {
  if (index != nullptr) {
    HOSTIR_CHECK(index->vtype() == ValType::Scalar && isIntegralType(index->dtype()),
                 "a Stream index must be an integer scalar (e.g. StreamIdx % numberOfStreams), "
                 "got ",
                 index->toInlineString());
    HOSTIR_CHECK(index->container() == container, "Stream index ", index->toInlineString(),
                 " belongs to another container");
  }
}

bool Stream::sameAs(const Val* other) const {
  if (other == this) {
    return true;
  }
  const auto* stream = dynamic_cast<const Stream*>(other);
  return stream != nullptr && hasIndex() && stream->hasIndex() && index_->sameAs(stream->index_);
}

Val* Stream::cloneInto(IrCloner& cloner) const {
  return IrBuilder::createInContainer<Stream>(cloner.target(), cloner.clone(index_));
}

std::string Stream::toInlineString() const {
  if (hasIndex()) {
    return "Stream " + index_->toInlineString();
  }
  return "Stream " + std::to_string(name());
}

std::string Stream::toString(int /*indent*/) const {
  return toInlineString();
}

}  // namespace hostir
