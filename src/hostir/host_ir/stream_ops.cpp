#include "hostir/host_ir/stream_ops.h"

#include "hostir/host_ir/host_dispatch.h"

namespace hostir {

namespace {
void checkSingleStream(const Expr* expr, const std::vector<Val*>& streams) {
  HOSTIR_ASSERT(streams.size() == 1 && expr->attributes().empty() && expr->attributeVals().empty(),
                expr->opName(), " takes exactly one Stream");
  HOSTIR_CHECK(streams[0]->vtype() == ValType::Stream, expr->opName(), " takes a Stream, not ",
               streams[0]->toInlineString());
}
}  // namespace

GetCurrentStream::GetCurrentStream(Fusion* container)
    : GetCurrentStream(container, IrBuilder::createInContainer<Stream>(container)) {}

GetCurrentStream::GetCurrentStream(Fusion* container, Stream* stream)
    : GetCurrentStream(container, std::vector<Val*>{}, std::vector<Val*>{stream}, {}) {}

void GetCurrentStream::validateStructure() const {
  HOSTIR_ASSERT(inputs_.empty(), "GetCurrentStream takes no input");
  checkSingleStream(this, outputs_);
}

std::string GetCurrentStream::toString(int indent) const {
  return indentString(indent) + "GetCurrentStream into " + stream()->toInlineString() + "\n";
}

std::string GetCurrentStream::toInlineString() const {
  return "GetCurrentStream(" + stream()->toInlineString() + ")";
}

SetCurrentStream::SetCurrentStream(Fusion* container, Stream* stream)
    : SetCurrentStream(container, std::vector<Val*>{stream}, std::vector<Val*>{}, {}) {}

void SetCurrentStream::validateStructure() const {
  HOSTIR_ASSERT(outputs_.empty(), "SetCurrentStream has no output");
  checkSingleStream(this, inputs_);
}

std::string SetCurrentStream::toString(int indent) const {
  return indentString(indent) + "SetCurrentStream to " + stream()->toInlineString() + "\n";
}

Synchronize::Synchronize(Fusion* container, Stream* stream)
    : Synchronize(container, std::vector<Val*>{stream}, std::vector<Val*>{}, {}) {}

void Synchronize::validateStructure() const {
  HOSTIR_ASSERT(outputs_.empty(), "Synchronize has no output");
  checkSingleStream(this, inputs_);
}

std::string Synchronize::toString(int indent) const {
  return indentString(indent) + "Synchronize " + stream()->toInlineString() + "\n";
}

HOSTIR_DEFINE_HOST_EXPR(GetCurrentStream)
HOSTIR_DEFINE_HOST_EXPR(SetCurrentStream)
HOSTIR_DEFINE_HOST_EXPR(Synchronize)

}  // namespace hostir
