#pragma once

#include "hostir/multidevice/target.h"

namespace hostir {

class HostIrContainer;

// The host IR pass `specialize_encodings` (docs/targets.md). With every
// device's target (`targets`, else the container's deviceTargets()):
//  1. each program input that carries an unresolved encoding and is read by
//     the program gets a SetEncoding at the top of the program: the device
//     that holds the input packs it in its own target's layout (printed per
//     device), and the readers read the packed tensor;
//  2. each PostOnStream is keyed, per device that runs it (the mesh of its
//     outputs, else of its inputs, else every device with a target), by the
//     layouts of its operands (resolved with the target of the device whose
//     data it reads: the root of the collective that brought it, else the
//     device itself) and of its results (the device's own target; a result
//     that is also an operand, i.e. tied, is keyed once, as the operand).
//     Devices with equal keys form one class; the HostUnit is kept for the
//     first class and cloned for each other, each copy's fusion inputs and
//     outputs rewritten to its resolved layouts, and the PostOnStream lists
//     the copies with the devices that run them.
// Already-resolved encodings are kept; a target without a resolver gives
// the identity layout; an unresolvable encoding is an error naming the
// tensor and the target. Without targets, step 2 is skipped.
void specializeEncodings(HostIrContainer& container, const DeviceTargets& targets = {});

}  // namespace hostir
