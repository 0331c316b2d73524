#include "hostir/runtime/op_error.h"

#include "hostir/ir/error.h"
#include "hostir/ir/one_line.h"
#include "hostir/runtime/comm/c10_error_message.h"

namespace hostir {

std::string causeOf(const std::exception& error) {
  std::string message = c10ErrorMessage(error);
  if (message.rfind("ATen failed to evaluate\n", 0) == 0) {
    message = message.substr(message.rfind('\n') + 1);
  } else {
    message = message.substr(0, message.find('\n'));
  }
  return oneLine(message, 400);
}

void rethrowNamingTheOp(const std::exception& error, const std::string& op) {
  HOSTIR_THROW(causeOf(error), " (in ", oneLine(op, 160), ")");
}

}  // namespace hostir
