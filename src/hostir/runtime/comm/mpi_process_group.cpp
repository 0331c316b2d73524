#include "hostir/runtime/comm/mpi_process_group.h"

#include <climits>
#include <memory>
#include <stdexcept>
#include <utility>

namespace hostir {
namespace {

// MPI counts are ints.
int countOf(int64_t count, const char* what) {
  if (count < 0 || count > INT_MAX) {
    throw std::invalid_argument(std::string(what) + " of " + std::to_string(count) +
                                " is more than the mpi backend moves in one message (2^31 - 1)");
  }
  return static_cast<int>(count);
}

int bytesOf(const at::Tensor& tensor) {
  return countOf(static_cast<int64_t>(tensor.nbytes()), "a message in bytes");
}

void checkContiguous(const at::Tensor& tensor, const char* role) {
  if (!tensor.is_contiguous()) {
    throw std::invalid_argument(std::string("the mpi backend needs a contiguous ") + role);
  }
}

// Element type for a reduction (the other operations move bytes).
MPI_Datatype reductionType(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return MPI_FLOAT;
    case at::kDouble: return MPI_DOUBLE;
    case at::kLong: return MPI_INT64_T;
    case at::kInt: return MPI_INT32_T;
    case at::kShort: return MPI_INT16_T;
    case at::kChar: return MPI_INT8_T;
    case at::kByte:
    case at::kBool: return MPI_UINT8_T;
    default:
      throw std::invalid_argument(std::string("the mpi backend cannot reduce ") +
                                  c10::toString(tensor.scalar_type()) +
                                  " tensors; reductions take float, double or integer types");
  }
}

MPI_Op reductionOp(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return MPI_SUM;
    case c10d::ReduceOp::PRODUCT: return MPI_PROD;
    case c10d::ReduceOp::MIN: return MPI_MIN;
    case c10d::ReduceOp::MAX: return MPI_MAX;
    case c10d::ReduceOp::BAND: return MPI_BAND;
    case c10d::ReduceOp::BOR: return MPI_BOR;
    case c10d::ReduceOp::BXOR: return MPI_BXOR;
    default:
      throw std::invalid_argument(
          "the mpi backend reduces with sum, product, min, max and the bitwise ops only");
  }
}

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* role) {
  if (tensors.size() != 1) {
    throw std::invalid_argument(std::string("the mpi backend takes one ") + role +
                                " tensor per call, got " + std::to_string(tensors.size()));
  }
  return tensors[0];
}

// Once a staged gather lands: member i's block of `gathered` into blocks[i].
std::function<void()> copyBlocksOut(at::Tensor gathered, std::vector<at::Tensor> blocks) {
  return [gathered = std::move(gathered), blocks = std::move(blocks)] {
    for (size_t i = 0; i < blocks.size(); ++i) {
      const int64_t numel = blocks[i].numel();
      blocks[i].copy_(
          gathered.narrow(0, static_cast<int64_t>(i) * numel, numel).view(blocks[i].sizes()));
    }
  };
}

}  // namespace

ProcessGroupMpi::ProcessGroupMpi(MPI_Comm communicator, MpiProgress& progress)
    : c10d::ProcessGroup(
          [&] {
            int rank = 0;
            MPI_Comm_rank(communicator, &rank);
            return rank;
          }(),
          [&] {
            int size = 0;
            MPI_Comm_size(communicator, &size);
            return size;
          }()),
      communicator_(communicator),
      progress_(progress) {}

ProcessGroupMpi::~ProcessGroupMpi() {
  // Operations still in flight complete first (MPI frees it afterwards).
  MPI_Comm_free(&communicator_);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::post(c10d::OpType type,
                                                     const std::function<int(MPI_Request*)>& call,
                                                     const char* name,
                                                     std::vector<at::Tensor> buffers,
                                                     std::function<void()> on_completion) {
  std::lock_guard<std::mutex> lock(post_mutex_);
  MPI_Request request = MPI_REQUEST_NULL;
  checkMpi(call(&request), name);
  auto work = c10::make_intrusive<MpiWork>(type, std::vector<MPI_Request>{request},
                                           std::move(buffers), std::move(on_completion));
  progress_.add(work);
  return work;
}

at::Tensor ProcessGroupMpi::gatheredBuffer(const std::vector<at::Tensor>& blocks,
                                           const at::Tensor& like, bool* staged) const {
  if (static_cast<int>(blocks.size()) != size_) {
    throw std::invalid_argument("the mpi backend needs one block per member (" +
                                std::to_string(size_) + "), got " + std::to_string(blocks.size()));
  }
  const auto block_bytes = static_cast<int64_t>(like.nbytes());
  bool consecutive = true;
  for (int i = 0; i < size_; ++i) {
    const at::Tensor& block = blocks[i];
    if (block.numel() != like.numel() || block.scalar_type() != like.scalar_type()) {
      throw std::invalid_argument("the mpi backend needs blocks shaped like the input");
    }
    consecutive = consecutive && block.is_contiguous() &&
                  block.storage().is_alias_of(blocks[0].storage()) &&
                  static_cast<const char*>(block.data_ptr()) ==
                      static_cast<const char*>(blocks[0].data_ptr()) + i * block_bytes;
  }
  *staged = !consecutive;
  if (consecutive) {
    // The blocks are one range of their storage: MPI writes it directly.
    return blocks[0].as_strided({size_ * like.numel()}, {1});
  }
  return at::empty({size_ * like.numel()}, like.options());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::broadcast(std::vector<at::Tensor>& tensors,
                                                          const c10d::BroadcastOptions& options) {
  at::Tensor tensor = single(tensors, "broadcast");
  checkContiguous(tensor, "broadcast buffer");
  const int bytes = bytesOf(tensor);
  const int root = static_cast<int>(options.rootRank);
  return post(c10d::OpType::BROADCAST,
              [&](MPI_Request* request) {
                return MPI_Ibcast(tensor.data_ptr(), bytes, MPI_BYTE, root, communicator_, request);
              },
              "MPI_Ibcast", {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& options) {
  at::Tensor tensor = single(tensors, "allreduce");
  checkContiguous(tensor, "allreduce buffer");
  const int count = countOf(tensor.numel(), "an allreduce's element count");
  const MPI_Datatype type = reductionType(tensor);
  const MPI_Op op = reductionOp(options.reduceOp);
  return post(c10d::OpType::ALLREDUCE,
              [&](MPI_Request* request) {
                return MPI_Iallreduce(MPI_IN_PLACE, tensor.data_ptr(), count, type, op,
                                      communicator_, request);
              },
              "MPI_Iallreduce", {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::reduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::ReduceOptions& options) {
  at::Tensor tensor = single(tensors, "reduce");
  checkContiguous(tensor, "reduce buffer");
  const int count = countOf(tensor.numel(), "a reduce's element count");
  const MPI_Datatype type = reductionType(tensor);
  const MPI_Op op = reductionOp(options.reduceOp);
  const int root = static_cast<int>(options.rootRank);
  const bool is_root = root == rank_;
  return post(c10d::OpType::REDUCE,
              [&](MPI_Request* request) {
                // The root reduces into its own buffer; the others only send.
                return MPI_Ireduce(is_root ? MPI_IN_PLACE : tensor.data_ptr(),
                                   is_root ? tensor.data_ptr() : nullptr, count, type, op, root,
                                   communicator_, request);
              },
              "MPI_Ireduce", {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*options*/) {
  at::Tensor input = single(inputs, "allgather input");
  checkContiguous(input, "allgather input");
  if (outputs.size() != 1) {
    throw std::invalid_argument("the mpi backend takes one list of allgather outputs");
  }
  std::vector<at::Tensor> blocks = outputs[0];
  bool staged = false;
  at::Tensor gathered = gatheredBuffer(blocks, input, &staged);
  const int bytes = bytesOf(input);
  char* mine = static_cast<char*>(gathered.data_ptr()) + static_cast<int64_t>(rank_) * bytes;
  const void* send = input.data_ptr() == mine ? MPI_IN_PLACE : input.data_ptr();
  std::function<void()> copy_out = staged ? copyBlocksOut(gathered, blocks) : nullptr;
  return post(
      c10d::OpType::ALLGATHER,
      [&](MPI_Request* request) {
        return MPI_Iallgather(send, bytes, MPI_BYTE, gathered.data_ptr(), bytes, MPI_BYTE,
                              communicator_, request);
      },
      "MPI_Iallgather", {input, gathered}, std::move(copy_out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& options) {
  std::vector<std::vector<at::Tensor>> outputs{output.flatten().chunk(size_)};
  std::vector<at::Tensor> inputs{input};
  checkContiguous(output, "allgather output");
  return allgather(outputs, inputs, options);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& options) {
  at::Tensor input = single(inputs, "gather input");
  checkContiguous(input, "gather input");
  const int bytes = bytesOf(input);
  const int root = static_cast<int>(options.rootRank);
  if (root != rank_) {
    return post(c10d::OpType::GATHER,
                [&](MPI_Request* request) {
                  return MPI_Igather(input.data_ptr(), bytes, MPI_BYTE, nullptr, bytes, MPI_BYTE,
                                     root, communicator_, request);
                },
                "MPI_Igather", {input});
  }
  if (outputs.size() != 1) {
    throw std::invalid_argument("the mpi backend's gather root takes one list of outputs");
  }
  std::vector<at::Tensor> blocks = outputs[0];
  bool staged = false;
  at::Tensor gathered = gatheredBuffer(blocks, input, &staged);
  char* mine = static_cast<char*>(gathered.data_ptr()) + static_cast<int64_t>(rank_) * bytes;
  const void* send = input.data_ptr() == mine ? MPI_IN_PLACE : input.data_ptr();
  std::function<void()> copy_out = staged ? copyBlocksOut(gathered, blocks) : nullptr;
  return post(
      c10d::OpType::GATHER,
      [&](MPI_Request* request) {
        return MPI_Igather(send, bytes, MPI_BYTE, gathered.data_ptr(), bytes, MPI_BYTE, root,
                           communicator_, request);
      },
      "MPI_Igather", {input, gathered}, std::move(copy_out));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& options) {
  at::Tensor output = single(outputs, "scatter output");
  checkContiguous(output, "scatter output");
  const int bytes = bytesOf(output);
  const int root = static_cast<int>(options.rootRank);
  at::Tensor blocks;  // the root's: one contiguous range, member by member
  if (root == rank_) {
    if (inputs.size() != 1) {
      throw std::invalid_argument("the mpi backend's scatter root takes one list of inputs");
    }
    bool staged = false;
    blocks = gatheredBuffer(inputs[0], output, &staged);
    if (staged) {
      for (int i = 0; i < size_; ++i) {
        blocks.narrow(0, i * output.numel(), output.numel()).copy_(inputs[0][i].flatten());
      }
    }
  }
  return post(c10d::OpType::SCATTER,
              [&](MPI_Request* request) {
                return MPI_Iscatter(blocks.defined() ? blocks.data_ptr() : nullptr, bytes, MPI_BYTE,
                                    output.data_ptr(), bytes, MPI_BYTE, root, communicator_,
                                    request);
              },
              "MPI_Iscatter", {output, blocks});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& options) {
  checkContiguous(input, "reduce-scatter input");
  checkContiguous(output, "reduce-scatter output");
  if (input.numel() != output.numel() * size_ || input.scalar_type() != output.scalar_type()) {
    throw std::invalid_argument(
        "the mpi backend's reduce-scatter needs an input of one output block per member");
  }
  const int count = countOf(output.numel(), "a reduce-scatter block's element count");
  const MPI_Datatype type = reductionType(input);
  const MPI_Op op = reductionOp(options.reduceOp);
  return post(c10d::OpType::_REDUCE_SCATTER_BASE,
              [&](MPI_Request* request) {
                return MPI_Ireduce_scatter_block(input.data_ptr(), output.data_ptr(), count, type,
                                                 op, communicator_, request);
              },
              "MPI_Ireduce_scatter_block", {input, output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
    std::vector<int64_t>& input_split_sizes, const c10d::AllToAllOptions& /*options*/) {
  checkContiguous(input, "all-to-all input");
  checkContiguous(output, "all-to-all output");
  if (output_split_sizes.empty() && input_split_sizes.empty()) {
    if (input.numel() != output.numel() || input.nbytes() % size_ != 0) {
      throw std::invalid_argument(
          "the mpi backend's even all-to-all needs input and output of one size, divisible by "
          "the number of members");
    }
    const int bytes = bytesOf(input) / size_;
    return post(c10d::OpType::ALLTOALL_BASE,
                [&](MPI_Request* request) {
                  return MPI_Ialltoall(input.data_ptr(), bytes, MPI_BYTE, output.data_ptr(), bytes,
                                       MPI_BYTE, communicator_, request);
                },
                "MPI_Ialltoall", {input, output});
  }
  // Splits count rows (axis 0); MPI wants bytes, and the arrays must live
  // until the operation completes.
  struct Layout {
    std::vector<int> send_counts, send_displacements, receive_counts, receive_displacements;
  };
  auto layout = std::make_shared<Layout>();
  auto fill = [&](const at::Tensor& tensor, const std::vector<int64_t>& splits,
                  std::vector<int>& counts, std::vector<int>& displacements) {
    if (static_cast<int>(splits.size()) != size_) {
      throw std::invalid_argument("the mpi backend's all-to-all needs one split per member");
    }
    const int64_t row_bytes =
        tensor.dim() == 0 || tensor.size(0) == 0 ? 0 : tensor.nbytes() / tensor.size(0);
    int64_t offset = 0;
    for (int64_t rows : splits) {
      counts.push_back(countOf(rows * row_bytes, "an all-to-all block in bytes"));
      displacements.push_back(countOf(offset, "an all-to-all offset in bytes"));
      offset += rows * row_bytes;
    }
  };
  fill(input, input_split_sizes, layout->send_counts, layout->send_displacements);
  fill(output, output_split_sizes, layout->receive_counts, layout->receive_displacements);
  return post(
      c10d::OpType::ALLTOALL_BASE,
      [&](MPI_Request* request) {
        return MPI_Ialltoallv(input.data_ptr(), layout->send_counts.data(),
                              layout->send_displacements.data(), MPI_BYTE, output.data_ptr(),
                              layout->receive_counts.data(), layout->receive_displacements.data(),
                              MPI_BYTE, communicator_, request);
      },
      "MPI_Ialltoallv", {input, output}, [layout] {});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::send(std::vector<at::Tensor>& tensors,
                                                     int destination, int tag) {
  at::Tensor tensor = single(tensors, "send");
  checkContiguous(tensor, "send buffer");
  const int bytes = bytesOf(tensor);
  return post(c10d::OpType::SEND,
              [&](MPI_Request* request) {
                return MPI_Isend(tensor.data_ptr(), bytes, MPI_BYTE, destination, tag,
                                 communicator_, request);
              },
              "MPI_Isend", {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::recv(std::vector<at::Tensor>& tensors, int source,
                                                     int tag) {
  at::Tensor tensor = single(tensors, "recv");
  checkContiguous(tensor, "receive buffer");
  const int bytes = bytesOf(tensor);
  return post(c10d::OpType::RECV,
              [&](MPI_Request* request) {
                return MPI_Irecv(tensor.data_ptr(), bytes, MPI_BYTE, source, tag, communicator_,
                                 request);
              },
              "MPI_Irecv", {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupMpi::barrier(const c10d::BarrierOptions& /*options*/) {
  return post(c10d::OpType::BARRIER,
              [&](MPI_Request* request) { return MPI_Ibarrier(communicator_, request); },
              "MPI_Ibarrier", {});
}

}  // namespace hostir
