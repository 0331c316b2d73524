#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/fusion.h"

namespace hostir::python {

// A value a segment reads or writes: the fid of the definition's input,
// output or input extent it is, or, for an intermediate the compiled
// program made, its name there ("T2", as fd.host_ir() prints it: the
// presegmentation passes and the lowering rename values, so an intermediate
// has no fid of the definition).
using SegmentValue = std::variant<int64_t, std::string>;

// One compute step of a compiled program in run order: a posted HostUnit
// (its fusion and the engine the compile stage recorded on it) or an op the
// host program runs itself (a fusion of that op alone, engine "host_op").
struct ProgramSegment {
  std::unique_ptr<Fusion> fusion;
  std::vector<SegmentValue> inputs;   // in the fusion's input order
  std::vector<SegmentValue> outputs;  // in the fusion's output order
  std::string engine;                 // "kernel", "gemm_post_ops", "aten" or "host_op"
  std::string detail;                 // the kernel, the epilogue, or why not a kernel
};

// "T3" for tensor 3, "S5" for scalar 5: a Val's identity inside its fusion
// (names are given in creation order; copies keep them).
std::string irKey(const Val* val);

// The fids of the definition whose compiled program is read: its inputs and
// outputs (matched by position to the program's) and its input extents,
// (extent fid, input tensor fid, axis).
struct DefinitionFids {
  const std::vector<int64_t>& inputs;
  const std::vector<int64_t>& outputs;
  const std::vector<std::tuple<int64_t, int64_t, int64_t>>& extents;
};

// The segments of `program` (one device: a program with loops, streams or
// communication is refused with an Error naming the step), each reading
// only what the definition's inputs and the earlier segments give; a
// segment reading anything else (a scalar the program derives on demand,
// e.g. an extent computed by a reshape) is refused with an Error naming it.
std::vector<ProgramSegment> programSegments(const HostIrContainer& program,
                                            const DefinitionFids& fids);

}  // namespace hostir::python
