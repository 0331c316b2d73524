#pragma once

#include <string>

namespace hostir {

class Fusion;
class HostIrContainer;

// The textual host IR (docs/lowering.md, "Textual host IR and `hostir
// opt`"): every statement of a program with all a pass reads — each Val's
// kind, dtype, extents, iter and parallel types, mesh and encoding; each
// expr's operands, attributes and attribute vals; loop bodies, HostUnit
// segment fusions, PostOnStream variants, Wait targets, kernels and device
// targets — so that parseHostIrText reads back a program that prints the
// same. Vals are named by kind and number (%T3 tensor, %D3 tensor domain,
// %I3 iter domain, %s3 scalar, %S3 stream), exprs by number (#12).
std::string printHostIrText(const HostIrContainer& program);

// A fusion alone, as a HostUnit's body prints: "fusion { vals {...}
// inputs (...) outputs (...) exprs {...} }" — a user's fusion between
// presegmentation passes: the exprs a pass replaced (detached from the
// dataflow) are left out, so that parseFusionText reads back the fusion the
// next pass would see.
std::string printFusionText(const Fusion& fusion);

}  // namespace hostir
