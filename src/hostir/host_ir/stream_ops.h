#pragma once

#include <string>

#include "hostir/host_ir/stream.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/statement.h"

namespace hostir {

// Binds its output Stream to the stream work is currently enqueued on (the
// caller's stream, Stream 0, unless a SetCurrentStream changed it).
class GetCurrentStream : public Expr {
  HOSTIR_DECLARE_EXPR(GetCurrentStream)
  // Creates the output Stream.
  explicit GetCurrentStream(Fusion* container);
  GetCurrentStream(Fusion* container, Stream* stream);

  Stream* stream() const {
    return output(0)->as<Stream>();
  }
  // "GetCurrentStream into Stream 0".
  std::string toString(int indent = 0) const override;
  // "GetCurrentStream(Stream 0)".
  std::string toInlineString() const override;
};

// Makes `stream` the stream subsequent work is enqueued on.
class SetCurrentStream : public Expr {
  HOSTIR_DECLARE_EXPR(SetCurrentStream)
  SetCurrentStream(Fusion* container, Stream* stream);

  Stream* stream() const {
    return input(0)->as<Stream>();
  }
  // "SetCurrentStream to Stream ( StreamIdx % numberOfStreams )".
  std::string toString(int indent = 0) const override;
};

// The current stream waits until `stream` has finished the work enqueued on
// it so far. The host thread does not block.
class Synchronize : public Expr {
  HOSTIR_DECLARE_EXPR(Synchronize)
  Synchronize(Fusion* container, Stream* stream);

  Stream* stream() const {
    return input(0)->as<Stream>();
  }
  // "Synchronize Stream 0".
  std::string toString(int indent = 0) const override;
};

}  // namespace hostir
