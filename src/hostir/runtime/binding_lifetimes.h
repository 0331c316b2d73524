#pragma once

#include <vector>

#include "hostir/host_ir/host_ir_container.h"

namespace hostir {

// When the evaluator may drop a tensor's binding (docs/streams.md, "Buffers
// across runs"): for each expr of the program's top-level scope, in order,
// the tensors no later top-level expr refers to. A reference is an operand
// of the expr or of any expr nested in it (a loop's body), the tensors of
// the collective a Wait waits for, and, through every tensor it refers to
// whose definition the program does not run, the inputs that definition
// reads (the evaluator computes such a tensor from them when it is read).
// A tensor the program computes holds on to nothing it was computed from. Program inputs and
// outputs are never listed. Dropping a binding frees nothing that queued work still uses (its
// closures hold their tensors) and nothing a live view aliases: the memory goes when its last
// reference does, so an intermediate no longer held by the program can serve a later allocation of
// the same run (BufferPool::take).
std::vector<std::vector<const Val*>> tensorsDeadAfter(const HostIrContainer& program);

}  // namespace hostir
