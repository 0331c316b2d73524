#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace hostir::runtime {

// The opt-in NaN/Inf check (docs/training.md, "Catching a NaN"), as
// torch.autograd.detect_anomaly: when on, every op and segment a host
// program computes has its floating-point outputs checked once it ran, and
// the first that holds a NaN or an Inf fails the run with a hostir::Error
// naming it. Off by default: a run reads the flag once and, when off,
// nothing is checked.
//
// Starts as HOSTIR_CHECK_FINITE says ("1" on; unset, empty or "0" off; any
// other value is an error naming the variable); Python's
// hostir.autograd.detect_anomaly() turns it on for a block.
bool checkFiniteEnabled();
void setCheckFinite(bool enabled);

// A tensor an op read or wrote, with its name in IR notation.
using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Throws hostir::Error when a floating-point tensor of `outputs` holds a NaN
// or an Inf. `what` is the op or segment in IR notation (called only on a
// failure); `inputs` are what it read, so the message can say whether a
// NaN came in or was produced here.
void checkOutputsFinite(const NamedTensors& outputs, const NamedTensors& inputs,
                        const std::function<std::string()>& what);

}  // namespace hostir::runtime
