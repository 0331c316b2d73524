#pragma once

namespace hostir {

class HostIrContainer;

// Checks a whole host program and throws hostir::Error naming the first
// broken invariant and the expr (in IR notation):
//  - a tensor read before the program computes, allocates or views it
//    (a view of a buffer not allocated yet included); a Communication's own
//    tensors are exempt: a device outside its mesh passes no buffer;
//  - a Wait whose post (Communication, P2PCommunication or EndCoalescing)
//    is not in the program, comes after it, has another Wait, or runs a
//    different number of times (the pairing rule of Wait, communication.h);
//  - a loop index, or a value or tensor extent computed from it, used
//    outside its loop.
// The pass pipeline runs it after every host IR pass in debug builds and
// with HOSTIR_VERIFY=1 (the tests set it).
void verifyHostProgram(const HostIrContainer& program);

}  // namespace hostir
