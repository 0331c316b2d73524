#pragma once

#include <complex>
#include <optional>
#include <string>
#include <variant>

#include "hostir/ir/statement.h"

namespace hostir {

using ScalarValue = std::variant<int64_t, double, bool, std::complex<double>>;

// A value's number as a double / int64 / complex (bool as 0 or 1; a complex
// number's real part where a real one is asked, as a cast to a real dtype).
double scalarAsDouble(const ScalarValue& value);
int64_t scalarAsInt(const ScalarValue& value);
std::complex<double> scalarAsComplex(const ScalarValue& value);

// Whether `val` is a constant int or real scalar equal to `expected`.
bool isConstantScalar(const Val* val, double expected);

// A scalar Val: a constant (`4`), a free symbol (`i0`, a tensor extent), a
// named symbol bound by the runtime (`StreamIdx`, `numberOfStreams`), or the
// result of scalar arithmetic (printed as its defining expression).
class Scalar : public Val {
 public:
  Scalar(Fusion* container, DataType dtype);                      // free symbol
  Scalar(Fusion* container, std::string symbol, DataType dtype);  // named
  Scalar(Fusion* container, int64_t value);
  // `IrBuilder::create<Scalar>(4)`: an int literal would otherwise be
  // ambiguous between the int64_t, double and bool constructors.
  Scalar(Fusion* container, int value) : Scalar(container, static_cast<int64_t>(value)) {}
  Scalar(Fusion* container, double value);
  Scalar(Fusion* container, bool value);
  Scalar(Fusion* container, std::complex<double> value);
  // A constant of a declared dtype (nvFuser's define_scalar(3.0,
  // DataType.Float)): the value rounded to that dtype, held as its kind's
  // alternative (int64_t for Int32 too, double for Float too).
  Scalar(Fusion* container, const ScalarValue& value, DataType dtype);

  bool isConst() const {
    return value_.has_value();
  }
  bool isConstInt() const {
    return value_.has_value() && std::holds_alternative<int64_t>(*value_);
  }
  const std::optional<ScalarValue>& value() const {
    return value_;
  }
  int64_t constInt() const;
  // Named symbols ("StreamIdx"); empty for others.
  const std::string& symbol() const {
    return symbol_;
  }

  bool sameAs(const Val* other) const override;
  Val* cloneInto(IrCloner& cloner) const override;
  std::string toString(int indent = 0) const override;
  std::string toInlineString() const override;

 private:
  std::optional<ScalarValue> value_;
  std::string symbol_;
};

// Names of the runtime-bound symbols of host programs.
inline constexpr const char* kStreamIdx = "StreamIdx";
inline constexpr const char* kNumberOfStreams = "numberOfStreams";
// The index of a loop over tiles of a query chunk's rows (causal_key_ranges).
inline constexpr const char* kQueryTile = "QueryTile";

std::string toString(const ScalarValue& value);

}  // namespace hostir
