#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hostir::runtime {

// How many worker streams a program rotates over (the `numberOfStreams`
// scalar of `Stream ( StreamIdx % numberOfStreams )`), when nobody says:
// the one default of every entry point (the executors' and the evaluator's
// params, the stream pool, Python's `number_of_streams=None`, which reads it
// from here through `_C.default_number_of_streams`).
inline constexpr int kDefaultNumberOfStreams = 4;

// The one check of a number of streams, wherever it is given (a params
// struct, a run's own number, Python): returns it as an int when it is at
// least 1 (and fits an int), else throws hostir::Error with
// numberOfStreamsError.
int checkedNumberOfStreams(std::int64_t number_of_streams);

// "number_of_streams must be a positive int (at least 1, at most
// 2147483647; unset or None means the default, 4), got 0": `given` as the
// caller spells it (Python passes the repr of a bool or a float).
std::string numberOfStreamsError(std::string_view given);

}  // namespace hostir::runtime
