// Fault injection (issue 11), the ranks' side: one multi-rank failure per
// value of HOSTIR_TEST_FAULT, run on 2 ranks by the launcher test
// (tests/multidevice/launcher_test.cpp, `FaultInjection*`), which checks
// that every surviving rank exits with a clear error within the stated
// bound, that `hostir launch` exits non-zero and that no process is left
// behind. Without HOSTIR_TEST_FAULT the test skips (ctest's reliability
// runs).
//
// Each rank behaves as a user's program would: it runs an allgather program
// through MultiDeviceExecutor and, on a hostir::Error, prints
// "fault injection: device R failed: <message>" and exits with status 1
// (static destructors run, so the communicator's shutdown is part of the
// bound). A dead rank leaves with std::_Exit(0): without a word to the
// others and without a failing status, so the launcher does not end the
// survivors for it; they must end by themselves.
//
//   dead_before_first_collective  device 1 joins the job and exits before
//                                 the program's first collective
//   dead_after_first_collective   device 1 exits after one complete run
//   stuck_before_first_collective device 1 sleeps past the communication
//                                 timeout before the first collective, then
//                                 leaves as a dead rank does (the mpi
//                                 backend's test: under mpirun a rank that
//                                 exits takes the job with it, so only a
//                                 stuck peer lets the others time out)
//   mismatched_shards             the last device holds 5 rows, the others 4
//                                 (no torch.chunk layout: 4 + 3 would be one)
//   mismatched_programs           device 1 runs neg where the others run relu
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "hostir/ir/arith.h"
#include "hostir/ir/error.h"
#include "hostir/ir/fusion.h"
#include "hostir/ir/tensor_factories.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/multidevice_executor.h"

namespace hostir {
namespace {

// x [S, H] sharded on its rows over every rank, allgathered, then relu (or
// neg: a different program) of the whole tensor.
void buildAllgather(Fusion& fusion, int64_t ranks, bool use_neg) {
  FusionGuard guard(&fusion);
  DeviceMesh mesh = DeviceMesh::createForNumDevices(ranks);
  TensorView* x = shard(makeContigTensor(2), mesh, 0);
  fusion.addInput(x);
  TensorView* gathered = shard(set(x), mesh);
  fusion.addOutput(shard(use_neg ? neg(gathered) : relu(gathered), mesh));
}

[[noreturn]] void dieSilently() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(0);
}

TEST(FaultInjection, EveryRankEndsWithAClearError) {
  const char* fault_text = std::getenv("HOSTIR_TEST_FAULT");
  if (fault_text == nullptr) {
    GTEST_SKIP() << "run by the launcher test with HOSTIR_TEST_FAULT set";
  }
  const std::string fault = fault_text;
  Communicator& communicator = Communicator::getInstance();
  ASSERT_GE(communicator.size(), 2);
  const int64_t me = communicator.deviceId();
  const int64_t n = communicator.size();
  try {
    Fusion fusion;
    buildAllgather(fusion, n, /*use_neg=*/fault == "mismatched_programs" && me == 1);
    MultiDeviceExecutor executor(fusion, communicator);
    int64_t rows = 4;
    if (fault == "mismatched_shards" && me == n - 1) {
      rows = 5;
    }
    if (fault == "dead_before_first_collective" && me == 1) {
      dieSilently();
    }
    if (fault == "stuck_before_first_collective" && me == 1) {
      std::this_thread::sleep_for(communicator.timeout() + std::chrono::seconds(20));
      dieSilently();
    }
    at::Tensor mine = at::randn({rows, 5});
    executor.run({mine});
    if (fault == "dead_after_first_collective") {
      if (me == 1) {
        dieSilently();
      }
      executor.run({mine});
    }
  } catch (const Error& error) {
    std::cerr << "fault injection: device " << me << " failed: " << error.what() << std::endl;
    std::exit(1);
  }
  std::cout << "fault injection: device " << me << " saw no error" << std::endl;
  std::exit(0);
}

}  // namespace
}  // namespace hostir
