#pragma once

#include "hostir/multidevice/target.h"

namespace hostir {

class HostIrContainer;

// The host IR pass `specialize_encodings` (docs/targets.md). With every
// device's target (`targets`, else the container's deviceTargets()):
//  1. each program input that carries an unresolved encoding and is read by
//     the program as a GEMM's right operand (or sent by a collective) gets
//     a SetEncoding at the top of the program: the device that holds the
//     input packs it in its own target's layout (printed per device), and
//     those readers read the packed tensor; other readers read it plain;
//  2. a computed tensor that carries an encoding and is a program output,
//     or is read by something that cannot read panels (only GEMM right
//     operands can), is kept plain (its encoding resolves to identity);
//  3. collectives move encoded bytes: the output of a collective whose
//     input carries an encoding gets the senders' layout as its resolved
//     encoding (the root's, or the one every member of an Allreduce/Reduce
//     agrees on); where the senders disagree, or panels go through a
//     collective that cuts or concatenates (Allgather, Gather, Scatter,
//     ReduceScatter), each sender unpacks first (an UnsetEncoding, or the
//     plain tensor a SetEncoding packed), the collective moves plain data,
//     and the receivers pack it in their own layouts after its Wait (a
//     SetEncoding) when every reader reads it in panels, else read it plain;
//  4. a top-level matmul/linear whose encoded weight or result its devices
//     lay out differently becomes a PostOnStream of a one-op HostUnit, so
//     step 5 gives it one executable per layout;
//  5. each PostOnStream is keyed, per device that runs it (the mesh of its
//     outputs, else of its inputs, else every device with a target), by the
//     layouts of its operands (as the device holds them: a SetEncoding's
//     choice, a collective's resolved layout, else resolved with the target
//     of the device whose data it reads) and of its results (the device's
//     own target, N from the result's readers; a result that is also an
//     operand, i.e. tied, is keyed once, as the operand). Devices with equal
//     keys form one class; the HostUnit is kept for the first class and
//     cloned for each other, each copy's fusion inputs and outputs rewritten
//     to its resolved layouts, and the PostOnStream lists the copies with
//     the devices that run them.
// Already-resolved encodings are kept; a target without a resolver gives
// the identity layout; an unresolvable encoding is an error naming the
// tensor and the target. Without targets, steps 2-5 are skipped.
void specializeEncodings(HostIrContainer& container, const DeviceTargets& targets = {});

}  // namespace hostir
