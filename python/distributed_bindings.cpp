#include "distributed_bindings.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hostir/ir/device_mesh.h"
#include "hostir/runtime/comm/block_communication.h"
#include "hostir/runtime/comm/block_costs.h"
#include "hostir/runtime/comm/chunk_choice.h"
#include "hostir/runtime/comm/collectives.h"
#include "hostir/runtime/comm/communicator.h"
#include "hostir/runtime/comm/launch_environment.h"
#include "hostir/runtime/packed_gemm.h"
#include "hostir/runtime/streams/thread_budget.h"
#include "hostir/runtime/streams/tracer.h"
#include "hostir/runtime/target_detection.h"

namespace py = pybind11;

namespace hostir::python {
namespace {

// The collectives on plain tensors run on a process group of their own,
// apart from the executors' streams.
constexpr int64_t kPythonCollectiveStreamKey = -10;

// torch.distributed's names for this process's place in the job, from the
// launcher's environment (see hostir/runtime/comm/launch_environment.h).
py::dict launchEnvironment() {
  const LaunchEnvironment environment = LaunchEnvironment::fromEnvironment();
  py::dict result;
  result["rank"] = environment.rank;
  result["world_size"] = environment.world_size;
  result["local_rank"] = environment.local_rank;
  result["local_world_size"] = environment.local_world_size;
  result["master_addr"] = environment.master_addr;
  result["master_port"] = environment.master_port;
  result["launcher"] = environment.launcher;
  return result;
}

// Every member of `team` (device ids) contributes `local` (equal shapes);
// returns the pieces in the order of `team`. Collective over the team.
std::vector<at::Tensor> allgatherTeam(const at::Tensor& local, const std::vector<int64_t>& team) {
  Communicator& communicator = Communicator::getInstance();
  at::Tensor input = local.detach().contiguous();
  std::vector<int64_t> sorted = team;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (size_t k = 0; k < sorted.size(); ++k) {
    outputs[0].push_back(at::empty_like(input));
  }
  std::vector<at::Tensor> inputs{input};
  {
    py::gil_scoped_release no_gil;
    c10d::ProcessGroup& group = communicator.processGroup(team, kPythonCollectiveStreamKey);
    waitWork(group.allgather(outputs, inputs), communicator.timeout(),
             "hostir.distributed allgather over team " + teamToString(team));
  }
  std::vector<at::Tensor> pieces;
  for (int64_t device : team) {
    pieces.push_back(outputs[0][static_cast<size_t>(Communicator::rankInTeam(team, device))]);
  }
  return pieces;
}

// The sum over every rank of the job of `partial` (equal shapes), of which
// this rank keeps its block of axis 0 (rank r: rows [r, r + 1) * rows / ranks).
// Collective over the job.
at::Tensor reduceScatterWorld(const at::Tensor& partial) {
  Communicator& communicator = Communicator::getInstance();
  const int64_t ranks = communicator.size();
  HOSTIR_CHECK(partial.dim() >= 1 && partial.size(0) % ranks == 0,
               "reduce_scatter_tensor: the scattered axis has ",
               partial.dim() >= 1 ? partial.size(0) : 0, " rows, which do not divide by the ",
               ranks, " ranks; give a tensor whose scattered axis is a multiple of the ranks");
  const std::vector<int64_t> world = communicator.worldTeam();
  at::Tensor input = partial.detach().contiguous();
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] /= ranks;
  at::Tensor output = at::empty(shape, input.options());
  const CommunicationParams params{.type = CommunicationType::ReduceScatter,
                                   .team = world,
                                   .reduce_op = ReduceOp::Sum,
                                   .scattered_axis = 0};
  py::gil_scoped_release no_gil;
  waitWork(
      postCollective(params, "hostir.distributed reduce_scatter_tensor", communicator.deviceId(),
                     input, output, communicator, kPythonCollectiveStreamKey),
      communicator.timeout(), "hostir.distributed reduce_scatter_tensor");
  return output;
}

py::dict chunkChoiceToDict(const ChunkChoice& choice) {
  const LinkCalibration& link = choice.inputs;
  py::dict inputs;
  inputs["bandwidth_MBps"] = link.bandwidth_mb_per_s;
  inputs["latency_ms"] = link.latency_ms;
  inputs["comm_cpu_fraction"] = link.comm_cpu_fraction;
  inputs["wake_wait_ms"] = link.wake_wait_ms;
  inputs["gemm_gflops"] = link.gemm_gflops.at(choice.chunks);
  inputs["gemm_gflops_by_chunks"] = link.gemm_gflops;
  inputs["compute_threads"] = link.compute_threads;
  py::dict result;
  result["chunks"] = choice.chunks;
  result["reason"] = choice.reason;
  result["predicted_ms"] = choice.predicted_ms;
  result["inputs"] = inputs;
  return result;
}

// Calibrates this rank's link and GEMM rate and agrees with every rank of
// the job on a chunk count for `block` among `candidates`. Collective.
py::dict chooseChunks(const BlockCost& block, const std::vector<int64_t>& candidates) {
  HOSTIR_CHECK(!candidates.empty(), "choose_chunks: no candidate chunk counts; give at least one");
  for (int64_t chunks : candidates) {
    HOSTIR_CHECK(chunks >= 1, "choose_chunks: candidate chunk count ", chunks,
                 " is not positive; give counts of 1 or more");
  }
  Communicator& communicator = Communicator::getInstance();
  const std::vector<int64_t> world = communicator.worldTeam();
  ChunkChoice choice;
  {
    py::gil_scoped_release no_gil;
    const LinkCalibration link =
        calibrate(communicator, world, block.gemm_m, block.gemm_k, block.gemm_n, candidates);
    choice = agreeOnChunks(communicator, world, block.cost, link, candidates);
  }
  return chunkChoiceToDict(choice);
}

}  // namespace

namespace {

// The chunk-count model (chunk_choice.h): a pipeline's cost, the costs of
// hostir's two sequence-parallel blocks, and the choice.
void bindChunkModel(py::module_& m) {
  py::class_<BlockCost>(m, "BlockCost")
      .def(py::init([](double link_bytes, double flops, int64_t collectives_per_chunk,
                       int64_t ops_per_chunk, std::map<int64_t, double> flops_by_chunks,
                       std::vector<int64_t> gemm) {
             HOSTIR_CHECK(gemm.size() == 3, "BlockCost: gemm has ", gemm.size(),
                          " extents; give [m, k, n] of the GEMM to calibrate");
             HOSTIR_CHECK(
                 link_bytes >= 0 && flops >= 0 && collectives_per_chunk >= 0 && ops_per_chunk >= 0,
                 "BlockCost: link_bytes (", link_bytes, "), flops (", flops,
                 "), collectives_per_chunk (", collectives_per_chunk, ") and ops_per_chunk (",
                 ops_per_chunk, ") must not be negative");
             BlockCost block;
             block.cost = {.link_bytes = link_bytes,
                           .flops = flops,
                           .collectives_per_chunk = collectives_per_chunk,
                           .ops_per_chunk = ops_per_chunk,
                           .flops_by_chunks = std::move(flops_by_chunks),
                           .causal_scores = {},
                           .host_instructions_per_chunk = 0};
             block.gemm_m = gemm[0];
             block.gemm_k = gemm[1];
             block.gemm_n = gemm[2];
             return block;
           }),
           py::arg("link_bytes"), py::arg("flops"), py::arg("collectives_per_chunk"),
           py::arg("ops_per_chunk"), py::arg("flops_by_chunks"), py::arg("gemm"))
      .def_property_readonly("link_bytes", [](const BlockCost& b) { return b.cost.link_bytes; })
      .def_property_readonly("flops", [](const BlockCost& b) { return b.cost.flops; })
      .def_property_readonly("collectives_per_chunk",
                             [](const BlockCost& b) { return b.cost.collectives_per_chunk; })
      .def_property_readonly("ops_per_chunk",
                             [](const BlockCost& b) { return b.cost.ops_per_chunk; })
      .def_property_readonly("flops_by_chunks",
                             [](const BlockCost& b) { return b.cost.flops_by_chunks; })
      .def(
          "flops_with", [](const BlockCost& b, int64_t chunks) { return b.cost.flopsWith(chunks); },
          py::arg("chunks"))
      .def_property_readonly(
          "gemm", [](const BlockCost& b) { return py::make_tuple(b.gemm_m, b.gemm_k, b.gemm_n); });
  m.def("mlp_block_cost", &mlpBlockCost, py::arg("tokens"), py::arg("hidden"), py::arg("ffn"),
        py::arg("devices"));
  m.def("transformer_layer_cost", &transformerLayerCost, py::arg("tokens"), py::arg("hidden"),
        py::arg("ffn"), py::arg("devices"));
  m.def("choose_chunks", &chooseChunks, py::arg("cost"), py::arg("candidates"));
}

}  // namespace

void bindDistributed(py::module_& m) {
  m.def("launch_environment", &launchEnvironment);
  m.def("init_communicator", [] {
    Communicator& communicator = Communicator::getInstance();
    return py::make_tuple(communicator.deviceId(), communicator.size());
  });
  // Called at interpreter exit (hostir/distributed.py): the process groups'
  // threads may drop the last reference to a tensor Python made, which takes
  // the GIL; once Python finalizes, taking it ends the thread and aborts the
  // process, so they are joined here, with the GIL released, while Python
  // is whole.
  m.def("shut_down_communicator", [] {
    Communicator* communicator = Communicator::existingInstance();
    if (communicator != nullptr) {
      py::gil_scoped_release no_gil;
      communicator->shutdown();
    }
  });
  m.def("communicator_state", []() -> std::string {
    const Communicator* communicator = Communicator::existingInstance();
    if (communicator == nullptr) {
      return "not started";
    }
    return communicator->isShutDown() ? "shut down" : "up";
  });
  m.def("allgather", &allgatherTeam, py::arg("local"), py::arg("team"));
  m.def("reduce_scatter", &reduceScatterWorld, py::arg("partial"));
  // The blocks' collectives with their compute taken away
  // (block_communication.h), on the Python collectives' process group.
  py::class_<BlockCommunication>(m, "BlockCommunication")
      .def(py::init([](const at::Tensor& local, int64_t tokens, int blocks) {
             return std::make_unique<BlockCommunication>(Communicator::getInstance(), local, tokens,
                                                         blocks, kPythonCollectiveStreamKey);
           }),
           py::arg("local"), py::arg("tokens"), py::arg("blocks"))
      .def(
          "run",
          [](BlockCommunication& communication, int64_t chunks) {
            py::gil_scoped_release no_gil;
            communication.run(chunks);
          },
          py::arg("chunks"));
  m.def("barrier", [] {
    py::gil_scoped_release no_gil;
    Communicator::getInstance().barrier();
  });

  // Which ISA and GEMM path run here, as the benchmarks print them
  // (target_detection.h, packed_gemm.h).
  m.def("describe_machine", &describeLocalMachine);
  m.def("describe_gemm_path", &describeGemmPath, py::arg("k"), py::arg("n"));

  // The thread budget an executor applies on this rank (thread_budget.h).
  m.def(
      "thread_budget",
      [](int number_of_streams, bool communicates) {
        const runtime::ThreadBudget budget = runtime::computeThreadBudget(
            number_of_streams, communicates,
            static_cast<int>(LaunchEnvironment::fromEnvironment().local_world_size));
        py::dict result;
        result["intra_op_threads"] = budget.intra_op_threads;
        result["compute_slots"] = budget.compute_slots;
        result["cores"] = budget.cores;
        result["description"] = budget.describe();
        return result;
      },
      py::arg("number_of_streams"), py::arg("communicates"));

  bindChunkModel(m);

  // The process's tracer (tracer.h), for a stretch of a run
  // (Tracer::beginStretch): returns (whether it was recording, its first
  // event), which trace_end takes back.
  m.def("trace_begin", [] {
    const runtime::Tracer::Stretch stretch = runtime::Tracer::global().beginStretch();
    return py::make_tuple(stretch.was_recording, stretch.first_event);
  });
  // Ends the stretch and writes it to `path` (per rank); returns (the file
  // written, its number of work items).
  m.def("trace_end", [](bool was_recording, std::size_t first_event, const std::string& path) {
    const std::string written = runtime::Tracer::pathForRank(path, runtime::Tracer::launchRank());
    const std::size_t count = runtime::Tracer::global().endStretch(
        {.was_recording = was_recording, .first_event = first_event}, written);
    return py::make_tuple(written, count);
  });
}

}  // namespace hostir::python
