#pragma once

#include <string>
#include <vector>

#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class Val;

// Checks run-time values against a program's input Vals: count, tensor vs
// scalar, dtype, rank, constant sizes, broadcast sizes, contiguity where the
// tensor requires it. `what` names the program in messages. With
// `my_device` >= 0, a tensor whose mesh excludes that device must be given
// undefined, and a sharded axis must have the size of this device's shard.
void validateInputs(const std::vector<Val*>& expected, const std::vector<PolymorphicValue>& given,
                    const std::string& what, int64_t my_device = -1);

// Preallocated output buffers must not share memory with an input tensor
// (ATen's out= ops would read what they already overwrote): an error naming
// both. An output Val that is an input Val may be given that input.
void validateOutputsDoNotAliasInputs(const std::vector<Val*>& input_vals,
                                     const std::vector<PolymorphicValue>& inputs,
                                     const std::vector<Val*>& output_vals,
                                     const std::vector<at::Tensor>& outputs,
                                     const std::string& what);

// Checks preallocated output buffers (shape and dtype come from `ee`-evaluated
// sizes, given by the caller as `sizes`).
void validateOutputBuffer(const Val* output, const at::Tensor& buffer,
                          const std::vector<int64_t>& sizes);

}  // namespace hostir
