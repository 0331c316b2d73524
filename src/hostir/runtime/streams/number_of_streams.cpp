#include "hostir/runtime/streams/number_of_streams.h"

#include <limits>

#include "hostir/ir/error.h"

namespace hostir::runtime {

std::string numberOfStreamsError(std::string_view given) {
  return "number_of_streams must be a positive int (at least 1, at most " +
         std::to_string(std::numeric_limits<int>::max()) + "; unset or None means the default, " +
         std::to_string(kDefaultNumberOfStreams) + "), got " + std::string(given);
}

int checkedNumberOfStreams(std::int64_t number_of_streams) {
  if (number_of_streams < 1 || number_of_streams > std::numeric_limits<int>::max()) {
    HOSTIR_THROW(numberOfStreamsError(std::to_string(number_of_streams)));
  }
  return static_cast<int>(number_of_streams);
}

}  // namespace hostir::runtime
