#pragma once

// The contexts a docs code block can name (`<!-- snippet: context=NAME -->`
// before its fence; tests/docs/doc_snippets.py): a fragment's body is
// compiled in a member function of a struct derived from NAME, so NAME's
// members are the names the fragment uses without declaring them. Add one
// here when a doc needs a new setting; keep the member names the docs use.
// Snippets are compiled and linked, never run.

#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "hostir/host_ir/lowering.h"
#include "hostir/host_ir/passes/batched_matmul_sums.h"
#include "hostir/host_ir/passes/batched_rhs_gemms.h"
#include "hostir/host_ir/passes/buffer_shrinking.h"
#include "hostir/host_ir/passes/causal_key_ranges.h"
#include "hostir/host_ir/passes/gemm_epilogues.h"
#include "hostir/host_ir/passes/loop_host_units.h"
#include "hostir/host_ir/passes/stream_parallelization.h"
#include "hostir/ir/arith.h"
#include "hostir/ir/device_mesh.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/fusion_executor.h"
#include "hostir/runtime/host_executor.h"
#include "hostir/runtime/multidevice_executor.h"
#include "hostir/runtime/streams/stream_pool.h"
#include "hostir/runtime/streams/tracer.h"
#include "hostir/runtime/thread_budget_aten.h"

namespace hostir::doc_snippets {

// The default: the block declares every name it uses.
struct Plain {};

// `fusion`, not yet current.
struct AFusion {
  Fusion fusion;
};

// `fusion`, current (as inside `FusionGuard fg(&fusion);`).
struct InAFusion : AFusion {
  FusionGuard fg{&fusion};
};

// A fusion and its run-time inputs: `t0`, `t1`, or `inputs` /
// `local_inputs` (this rank's shards).
struct FusionAndInputs : AFusion {
  at::Tensor t0 = at::randn({8, 16});
  at::Tensor t1 = at::randn({8, 16});
  std::vector<at::Tensor> inputs{t0, t1};
  std::vector<at::Tensor> local_inputs{t0, t1};
};

// Two matrices `a` [M, K] and `b` [K, N] in the current fusion.
struct MatmulOperands : InAFusion {
  TensorView* a = makeContigTensor(2);
  TensorView* b = makeContigTensor(2);
};

// A tensor `tv` of the current fusion and a mesh of 2 devices, `mesh`.
struct TensorAndMesh : InAFusion {
  TensorView* tv = makeContigTensor(2);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(2);
};

// The number of devices `n`, in the current fusion.
struct NDevices : InAFusion {
  int64_t n = 2;
};

// An `executor` of a (here empty) fusion and its `inputs`.
struct AFusionExecutor : AFusion {
  FusionExecutor executor{fusion};
  std::vector<at::Tensor> inputs{at::randn({8, 16}), at::randn({32, 16})};
};

}  // namespace hostir::doc_snippets
