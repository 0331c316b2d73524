#include "hostir/runtime/comm/collectives.h"
#include "hostir/ir/device_mesh.h"

#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "hostir/ir/error.h"
#include "hostir/ir/iter_domain.h"
#include "hostir/ir/tensor_view.h"
#include "hostir/multidevice/row_chunks.h"
#include "hostir/multidevice/sharding.h"
#include "hostir/runtime/comm/c10_error_message.h"
#include "hostir/runtime/comm/collective_buffers.h"
#include "hostir/runtime/comm/collective_works.h"
#include "hostir/runtime/comm/composed_reduce_scatter.h"
#include "hostir/runtime/comm/uneven_allgather.h"

namespace hostir {
namespace {

std::atomic<int64_t> bytes_sent{0};

// How many stripes a collective moving `bytes` per rank takes: at most the
// configured number, each at least Communicator::kMinStripeBytes. Every
// member computes the same count (the members' buffers have one size).
int64_t stripesFor(int64_t bytes) {
  return std::max<int64_t>(
      1, std::min(Communicator::collectiveStripes(), bytes / Communicator::kMinStripeBytes));
}

std::string shapeString(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    return "an undefined tensor";
  }
  std::ostringstream ss;
  ss << "a " << tensor.scalar_type() << " tensor of shape " << tensor.sizes();
  return ss.str();
}

c10d::ReduceOp toC10dReduceOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return c10d::ReduceOp::SUM;
    case ReduceOp::Product: return c10d::ReduceOp::PRODUCT;
    case ReduceOp::Max: return c10d::ReduceOp::MAX;
    case ReduceOp::Min: return c10d::ReduceOp::MIN;
  }
  HOSTIR_ASSERT(false, "unknown ReduceOp");
}

// Everything one posting needs, with the checks that name the collective.
class CollectivePoster {
 public:
  CollectivePoster(const CommunicationParams& params, std::string what, int64_t my_device,
                   const at::Tensor& input, const at::Tensor& output, Communicator& communicator,
                   int64_t stream_key)
      : params_(params),
        what_(std::move(what)),
        my_device_(my_device),
        input_(withoutLeadingUnitAxes(params.type, input)),
        output_(withoutLeadingUnitAxes(params.type, output)),
        given_input_(input),
        given_output_(output),
        communicator_(communicator),
        stream_key_(stream_key),
        team_size_(static_cast<int64_t>(params.team.size())) {}

  c10::intrusive_ptr<c10d::Work> post() {
    const auto& team = params_.team;
    if (std::find(team.begin(), team.end(), my_device_) == team.end()) {
      return {};
    }
    check(my_device_ == communicator_.deviceId(), "it is posted for device ", my_device_,
          " but this process is device ", communicator_.deviceId());
    if (isReduction(params_.type)) {
      check(params_.reduce_op.has_value(), "it needs a reduce op");
    }
    if (hasRoot(params_.type)) {
      check(params_.root.has_value() &&
                std::find(team.begin(), team.end(), *params_.root) != team.end(),
            "its root must be a member of the team");
    }
    if (params_.type == CommunicationType::SendRecv && team_size_ == 1) {
      // Sender and receiver are one device: a local copy, nothing to wait for.
      checkDefined(input_, "input");
      checkDefined(output_, "output");
      checkSameShape(input_, output_);
      output_.copy_(input_);
      return {};
    }
    if ((!input_.defined() || input_.numel() == 0) &&
        (!output_.defined() || output_.numel() == 0) && params_.type != CommunicationType::Gather &&
        params_.type != CommunicationType::Scatter) {
      // Nothing to move (e.g. the empty last chunks of ceilDiv-sized stream
      // chunks). Every member sees the same extents, so all skip it alike;
      // Gloo would divide by zero on an empty allgather. A member's piece of
      // a gather or scatter may be empty while the root's whole is not: it
      // takes part.
      return {};
    }
    if (params_.type == CommunicationType::Scatter && params_.every_member_holds_input) {
      return cutOwnPiece();
    }
    group_ = &communicator_.processGroup(team, stream_key_);
    stripes_ = stripeCount();
    c10::intrusive_ptr<c10d::Work> work = postByType();
    bytes_sent.fetch_add(bytesThisMemberSends(), std::memory_order_relaxed);
    return work;
  }

 private:
  c10::intrusive_ptr<c10d::Work> postByType() {
    try {
      switch (params_.type) {
        case CommunicationType::Gather: return postGather();
        case CommunicationType::Allgather: return postAllgather();
        case CommunicationType::Scatter: return postScatter();
        case CommunicationType::Reduce: return postReduce();
        case CommunicationType::Allreduce: return postAllreduce();
        case CommunicationType::ReduceScatter: return postReduceScatter();
        case CommunicationType::Broadcast: return postBroadcast();
        case CommunicationType::SendRecv: return postSendRecv();
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& error) {
      HOSTIR_THROW("posting ", what_, " on device ", my_device_,
                   " failed: ", c10ErrorMessage(error));
    }
    HOSTIR_ASSERT(false, "unknown CommunicationType");
  }

  // What this member hands the backend to send to the others (see
  // collectiveBytesSent()).
  int64_t bytesThisMemberSends() const {
    const auto bytes = [](const at::Tensor& tensor) {
      return tensor.defined() ? static_cast<int64_t>(tensor.nbytes()) : int64_t{0};
    };
    const int64_t n = team_size_;
    switch (params_.type) {
      case CommunicationType::Allgather: return bytes(input_) * (n - 1);
      case CommunicationType::ReduceScatter: return bytes(input_) - bytes(output_);
      case CommunicationType::Allreduce: return 2 * (n - 1) * bytes(input_) / n;
      case CommunicationType::Gather:
      case CommunicationType::Reduce: return isRoot() ? 0 : bytes(input_);
      case CommunicationType::Scatter: return isRoot() ? bytes(input_) - bytes(output_) : 0;
      case CommunicationType::Broadcast: return isRoot() ? bytes(input_) * (n - 1) : 0;
      case CommunicationType::SendRecv: return isRoot() ? bytes(input_) : 0;
    }
    return 0;
  }

  template <typename... Args>
  void check(bool condition, const Args&... args) const {
    HOSTIR_CHECK(condition, what_, " on device ", my_device_, ": ", args...);
  }
  void checkDefined(const at::Tensor& tensor, const char* role) const {
    check(tensor.defined(), "its ", role, " is undefined on this device; pass the local buffer");
  }
  void checkSameShape(const at::Tensor& a, const at::Tensor& b) const {
    check(a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type(),
          "input and output must have one shape and type, got ", shapeString(a), " and ",
          shapeString(b));
  }
  // Splits axis 0 of `whole` into `blocks` pieces shaped like `piece`.
  void checkBlocks(const at::Tensor& whole, const at::Tensor& piece, int64_t blocks,
                   const char* whole_role, const char* piece_role) const {
    check(whole.dim() >= 1 && whole.size(0) % blocks == 0 &&
              whole.numel() == blocks * piece.numel() && whole.scalar_type() == piece.scalar_type(),
          "its ", whole_role, " must hold ", blocks, " blocks of the ", piece_role,
          " along axis 0 ([", blocks, " * r, ...] for a ", piece_role, " [r, ...]), got ",
          shapeString(whole), " for ", shapeString(piece));
  }
  int64_t groupRank(int64_t device) const {
    return Communicator::rankInTeam(params_.team, device);
  }
  int64_t root() const {
    return *params_.root;
  }
  bool isRoot() const {
    return my_device_ == root();
  }
  // The team's contributors (or receivers), in team order: every member,
  // except the root when `root_takes_part` is false.
  std::vector<int64_t> participants(bool root_takes_part) const {
    std::vector<int64_t> devices;
    for (int64_t device : params_.team) {
      if (device != root() || root_takes_part) {
        devices.push_back(device);
      }
    }
    return devices;
  }
  // Block `index` of axis 0 of `whole`, viewed in `piece`'s shape.
  static at::Tensor block(const at::Tensor& whole, int64_t index, int64_t blocks,
                          const at::Tensor& piece) {
    const int64_t rows = whole.size(0) / blocks;
    return whole.narrow(0, index * rows, rows).view(piece.sizes());
  }
  c10::intrusive_ptr<c10d::Work> withEpilogue(c10::intrusive_ptr<c10d::Work> work,
                                              std::function<void()> epilogue) const {
    return c10::make_intrusive<WorkWithEpilogue>(std::move(work), std::move(epilogue));
  }
  c10::intrusive_ptr<c10d::Work> withCopyBack(c10::intrusive_ptr<c10d::Work> work,
                                              const WritableBuffer& buffer) const {
    if (!buffer.staged()) {
      return work;
    }
    return withEpilogue(std::move(work), [buffer] { buffer.copyBack(); });
  }
  std::chrono::milliseconds timeout() const {
    return communicator_.timeout();
  }

  // Whether `whole` (the gathered or reduced buffer) holds the team's pieces
  // laid out as torch.chunk cuts its axis `axis` (ceilDiv rows each, the last
  // fewer or none) rather than as equal blocks of `piece`; checks that
  // `piece` is this member's chunk then.
  bool holdsUnevenPieces(const at::Tensor& whole, const at::Tensor& piece, int64_t axis,
                         const char* whole_role, const char* piece_role) const {
    if (whole.numel() == team_size_ * piece.numel()) {
      return false;
    }
    const int64_t position = positionOf(my_device_);
    const RowChunk mine =
        whole.dim() > axis ? rowChunk(whole.size(axis), team_size_, position) : RowChunk{};
    check(whole.dim() > axis && piece.dim() == whole.dim() && piece.size(axis) == mine.rows &&
              piece.numel() * whole.size(axis) == mine.rows * whole.numel() &&
              whole.scalar_type() == piece.scalar_type(),
          "its ", whole_role, " must hold ", team_size_, " equal blocks of the ", piece_role,
          " or the ", piece_role, " must be this member's torch.chunk piece of axis ", axis,
          " (position ", position, " of ", team_size_, ": ", mine.rows, " rows), got ",
          shapeString(whole), " for ", shapeString(piece));
    return true;
  }
  int64_t positionOf(int64_t device) const {
    return std::find(params_.team.begin(), params_.team.end(), device) - params_.team.begin();
  }
  TeamExchange exchange() const {
    TeamExchange exchange{params_.team, positionOf(my_device_), {}, timeout()};
    for (int64_t stripe = 0; stripe < stripes_; ++stripe) {
      exchange.stripes.push_back(&stripeGroup(stripe));
    }
    return exchange;
  }

  c10::intrusive_ptr<c10d::Work> postAllgather() {
    checkDefined(input_, "input");
    checkDefined(output_, "output");
    if (output_.numel() != team_size_ * input_.numel()) {  // unequal pieces
      std::tie(output_, input_) = withoutSharedLeadingUnitAxes(given_output_, given_input_);
    }
    if (holdsUnevenPieces(output_, input_, 0, "output", "input")) {
      return postUnevenAllgather(exchange(), input_, output_);
    }
    checkBlocks(output_, input_, team_size_, "output", "input");
    // A chunk's rows of a whole gathered tensor ([devices, rows, ...] of
    // [devices, c, ...] blocks): every member's block is contiguous, so the
    // list form writes into them in place, with no staging copy.
    if (!output_.is_contiguous() && blocksAreContiguous(output_, team_size_)) {
      return allgatherBlocks(input_.contiguous(), output_);
    }
    WritableBuffer out(output_);
    return withCopyBack(allgatherBlocks(input_.contiguous(), out.buffer), out);
  }

  static bool blocksAreContiguous(const at::Tensor& whole, int64_t blocks) {
    const int64_t rows = whole.size(0) / blocks;
    for (int64_t index = 0; index < blocks; ++index) {
      if (!whole.narrow(0, index * rows, rows).is_contiguous()) {
        return false;
      }
    }
    return true;
  }

  // Allgathers equal blocks: `contribution` (contiguous) from every member
  // into block p of `gathered` (contiguous) from the member at position p.
  c10::intrusive_ptr<c10d::Work> allgatherBlocks(const at::Tensor& contribution,
                                                 const at::Tensor& gathered) {
    std::vector<std::vector<at::Tensor>> outputs(1, std::vector<at::Tensor>(team_size_));
    for (int64_t position = 0; position < team_size_; ++position) {
      outputs[0][groupRank(params_.team[position])] =
          block(gathered, position, team_size_, contribution);
    }
    // Gloo in libtorch 1.13 has no _allgather_base: the list form gathers
    // into a flat buffer on Gloo's thread and copies into views of the
    // output. (An all-to-all straight into the output measured slower at
    // 500 Mbit/s: docs/performance.md, "A reduce-scatter's own block stays
    // home".)
    std::vector<at::Tensor> inputs{contribution};
    c10d::AllgatherOptions options;
    options.timeout = timeout();
    if (stripes_ == 1) {
      return group_->allgather(outputs, inputs, options);
    }
    // Stripe i moves elements [b_i, e_i) of every member's contribution.
    const int64_t numel = inputs[0].numel();
    std::vector<c10::intrusive_ptr<c10d::Work>> pieces;
    for (int64_t stripe = 0; stripe < stripes_; ++stripe) {
      auto [begin, end] = pieceBounds(numel, stripe, stripes_);
      std::vector<at::Tensor> piece_inputs{inputs[0].view(-1).slice(0, begin, end)};
      std::vector<std::vector<at::Tensor>> piece_outputs(1);
      for (const at::Tensor& block_of_member : outputs[0]) {
        piece_outputs[0].push_back(block_of_member.view(-1).slice(0, begin, end));
      }
      pieces.push_back(stripeGroup(stripe).allgather(piece_outputs, piece_inputs, options));
    }
    return c10::make_intrusive<StripedWork>(std::move(pieces));
  }

  // Gather and Scatter move the pieces as an all-to-all with split sizes in
  // which a member exchanges elements with the root only: a member knows
  // its own piece's size and the root every piece's (torch.chunk's rows of
  // its whole, rowChunk), so pieces of unequal rows (issue 37) cross
  // unpadded and no member needs the global extent. Gloo's gather and
  // scatter take equal blocks only.
  c10::intrusive_ptr<c10d::Work> postGather() {
    std::vector<int64_t> send_sizes(team_size_, 0);
    std::vector<int64_t> receive_sizes(team_size_, 0);
    if (!isRoot()) {
      checkDefined(input_, "input");
      at::Tensor send = input_.reshape(-1).contiguous();
      send_sizes[groupRank(root())] = send.numel();
      return exchangeWithRoot(at::empty({0}, input_.options()), send, receive_sizes, send_sizes);
    }
    checkDefined(output_, "output (the root receives the gathered pieces)");
    const bool root_contributes = input_.defined();
    output_ = wholeToCut(given_output_, given_input_);
    const std::vector<int64_t> senders = participants(root_contributes);
    const auto pieces = piecesOf(output_, senders, "output");
    for (const auto& [sender, piece] : pieces) {
      receive_sizes[groupRank(sender)] = piece.numel();
    }
    at::Tensor send = at::empty({0}, output_.options());
    if (root_contributes) {
      checkIsPiece(input_, pieces.at(root()), "input", "output");
      send = input_.reshape(-1).contiguous();
      send_sizes[groupRank(root())] = send.numel();
    }
    at::Tensor received = at::empty({output_.numel()}, output_.options());
    auto work = exchangeWithRoot(received, send, receive_sizes, send_sizes);
    return withEpilogue(
        std::move(work), [received, destinations = piecesInDeviceOrder(pieces), send] {
          int64_t offset = 0;
          for (const at::Tensor& destination : destinations) {
            destination.copy_(received.narrow(0, offset, destination.numel()).view_as(destination));
            offset += destination.numel();
          }
        });
  }

  c10::intrusive_ptr<c10d::Work> postScatter() {
    std::vector<int64_t> send_sizes(team_size_, 0);
    std::vector<int64_t> receive_sizes(team_size_, 0);
    if (!isRoot()) {
      checkDefined(output_, "output");
      receive_sizes[groupRank(root())] = output_.numel();
      return receiveFromRoot(receive_sizes, send_sizes, at::empty({0}, output_.options()));
    }
    checkDefined(input_, "input (the root holds the pieces to scatter)");
    const bool root_receives = output_.defined();
    input_ = wholeToCut(given_input_, given_output_);
    const std::vector<int64_t> receivers = participants(root_receives);
    const auto pieces = piecesOf(input_, receivers, "input");
    for (const auto& [receiver, piece] : pieces) {
      send_sizes[groupRank(receiver)] = piece.numel();
    }
    std::vector<at::Tensor> flat;
    for (const at::Tensor& piece : piecesInDeviceOrder(pieces)) {
      flat.push_back(piece.reshape(-1));
    }
    at::Tensor send = at::cat(flat);
    if (!root_receives) {
      return exchangeWithRoot(at::empty({0}, input_.options()), send, receive_sizes, send_sizes);
    }
    checkIsPiece(output_, pieces.at(root()), "output", "input");
    receive_sizes[groupRank(root())] = output_.numel();
    return receiveFromRoot(receive_sizes, send_sizes, send);
  }

  // A scatter of a tensor every member holds (replicated on the team's
  // mesh): each member copies its torch.chunk piece; no process group.
  c10::intrusive_ptr<c10d::Work> cutOwnPiece() {
    checkDefined(input_, "input (replicated on every member)");
    checkDefined(output_, "output");
    const auto pieces = piecesOf(wholeToCut(given_input_, given_output_), params_.team, "input");
    const at::Tensor& piece = pieces.at(my_device_);
    checkIsPiece(output_, piece, "output", "input");
    output_.copy_(piece.reshape(output_.sizes()));
    return {};
  }

  // A scatter's piece received into the output (the root sends the others').
  c10::intrusive_ptr<c10d::Work> receiveFromRoot(std::vector<int64_t>& receive_sizes,
                                                 std::vector<int64_t>& send_sizes,
                                                 const at::Tensor& send) {
    WritableBuffer out(output_);
    return withCopyBack(exchangeWithRoot(out.buffer.view(-1), send, receive_sizes, send_sizes),
                        out);
  }

  c10::intrusive_ptr<c10d::Work> exchangeWithRoot(at::Tensor received, at::Tensor send,
                                                  std::vector<int64_t>& receive_sizes,
                                                  std::vector<int64_t>& send_sizes) {
    c10d::AllToAllOptions options;
    options.timeout = timeout();
    return group_->alltoall_base(received, send, receive_sizes, send_sizes, options);
  }

  // The root's whole viewed with the pieces cut along axis 0: scattered_axis
  // (from the IR) counts the broadcast axes before the sharded one (which
  // may have one row); without it, the root's own piece tells, if any.
  at::Tensor wholeToCut(const at::Tensor& whole, const at::Tensor& piece) const {
    if (params_.scattered_axis.has_value()) {
      at::Tensor view = whole;
      for (int64_t axis = 0; axis < *params_.scattered_axis; ++axis) {
        check(view.dim() > 1 && view.size(0) == 1, "axis ", axis, " of ", shapeString(whole),
              " must be a size-1 broadcast axis before the sharded one");
        view = view.select(0, 0);
      }
      return view;
    }
    return piece.defined() ? withoutSharedLeadingUnitAxes(whole, piece).first
                           : withoutLeadingUnitAxes(params_.type, whole);
  }

  // torch.chunk's pieces of `whole` over `members` (collective_buffers.h).
  std::map<int64_t, at::Tensor> piecesOf(const at::Tensor& whole,
                                         const std::vector<int64_t>& members,
                                         const char* role) const {
    check(!members.empty() && whole.dim() >= 1, "its ", role, " must have an axis to cut into ",
          members.size(), " pieces (one per member that takes part), got ", shapeString(whole));
    return torchChunkPieces(whole, members);
  }

  // `mine` (the root's own input or output) must hold `piece`'s elements.
  void checkIsPiece(const at::Tensor& mine, const at::Tensor& piece, const char* mine_role,
                    const char* whole_role) const {
    check(mine.numel() == piece.numel() && mine.scalar_type() == piece.scalar_type(), "the root's ",
          mine_role, " must be its torch.chunk piece of the ", whole_role, "'s axis 0 (",
          shapeString(piece), "), got ", shapeString(mine));
  }

  c10::intrusive_ptr<c10d::Work> postAllreduce() {
    checkDefined(input_, "input");
    checkDefined(output_, "output");
    checkSameShape(input_, output_);
    WritableBuffer out(output_);
    if (!input_.is_same(out.buffer)) {
      out.buffer.copy_(input_);
    }
    std::vector<at::Tensor> tensors{out.buffer};
    c10d::AllreduceOptions options;
    options.reduceOp = toC10dReduceOp(*params_.reduce_op);
    options.timeout = timeout();
    return withCopyBack(group_->allreduce(tensors, options), out);
  }

  c10::intrusive_ptr<c10d::Work> postReduce() {
    c10d::ReduceOptions options;
    options.reduceOp = toC10dReduceOp(*params_.reduce_op);
    options.rootRank = groupRank(root());
    options.timeout = timeout();
    if (!isRoot()) {
      checkDefined(input_, "input");
      // Gloo's reduce may use every rank's buffer as scratch: never hand it
      // the caller's input.
      std::vector<at::Tensor> tensors{input_.clone(at::MemoryFormat::Contiguous)};
      return group_->reduce(tensors, options);
    }
    checkDefined(output_, "output (the root receives the reduction)");
    WritableBuffer out(output_);
    if (input_.defined()) {
      checkSameShape(input_, output_);
      out.buffer.copy_(input_);
    } else {
      fillWithIdentity(out.buffer, *params_.reduce_op);
    }
    std::vector<at::Tensor> tensors{out.buffer};
    return withCopyBack(group_->reduce(tensors, options), out);
  }

  // Gloo in libtorch 1.13 has no reduce_scatter: an all-to-all and a local
  // reduction, for equal blocks and torch.chunk's unequal pieces alike
  // (composed_reduce_scatter.h). The mpi backend composes it the same way: Open MPI's
  // MPI_Ireduce_scatter_block took 2.2x as long as its all-to-all plus this sum
  // (docs/performance.md, "Collective backends").
  c10::intrusive_ptr<c10d::Work> postReduceScatter() {
    checkDefined(input_, "input");
    checkDefined(output_, "output");
    const int64_t axis = params_.scattered_axis.value_or(0);
    check(axis >= 0 && axis < input_.dim(), "scattered axis ", axis, " is out of range for ",
          shapeString(input_));
    const at::Tensor output_piece =
        at::empty(unevenOutputShape(axis), output_.options().device(at::kMeta));
    if (!holdsUnevenPieces(input_, output_piece, axis, "input", "output")) {
      check(input_.size(axis) % team_size_ == 0 && output_.numel() * team_size_ == input_.numel() &&
                output_.scalar_type() == input_.scalar_type(),
            "its input must split into ", team_size_, " blocks along the scattered axis ", axis,
            " and its output must hold one block, got input ", shapeString(input_), " and output ",
            shapeString(output_));
    }
    return postComposedReduceScatter(exchange(), input_, axis, *params_.reduce_op, output_);
  }

  // The output's shape as the input's with this member's rows along `axis`
  // (the output may be any shape of that element count, as for even pieces);
  // the output's own shape when the element counts do not fit.
  std::vector<int64_t> unevenOutputShape(int64_t axis) const {
    std::vector<int64_t> shape = input_.sizes().vec();
    const int64_t inner = input_.size(axis) == 0 ? 0 : input_.numel() / input_.size(axis);
    if (inner == 0 || output_.numel() % inner != 0) {
      return output_.sizes().vec();
    }
    shape[static_cast<size_t>(axis)] = output_.numel() / inner;
    return shape;
  }

  c10::intrusive_ptr<c10d::Work> postBroadcast() {
    c10d::BroadcastOptions options;
    options.rootRank = groupRank(root());
    options.timeout = timeout();
    if (isRoot()) {
      checkDefined(input_, "input (the root sends it)");
      if (output_.defined() && !output_.is_same(input_)) {
        checkSameShape(input_, output_);
        output_.copy_(input_);
      }
      std::vector<at::Tensor> tensors{input_.contiguous()};
      return group_->broadcast(tensors, options);
    }
    checkDefined(output_, "output");
    WritableBuffer out(output_);
    std::vector<at::Tensor> tensors{out.buffer};
    return withCopyBack(group_->broadcast(tensors, options), out);
  }

  c10::intrusive_ptr<c10d::Work> postSendRecv() {
    check(team_size_ == 2, "SendRecv needs a team of one sender and one receiver, got ",
          teamToString(params_.team));
    const int64_t receiver = params_.team[0] == root() ? params_.team[1] : params_.team[0];
    constexpr int kTag = 0;  // one transfer at a time per group: order pairs them
    if (isRoot()) {
      checkDefined(input_, "input (the sender's buffer)");
      std::vector<at::Tensor> tensors{input_.contiguous()};
      return group_->send(tensors, static_cast<int>(groupRank(receiver)), kTag);
    }
    checkDefined(output_, "output (the receiver's buffer)");
    WritableBuffer out(output_);
    std::vector<at::Tensor> tensors{out.buffer};
    return withCopyBack(group_->recv(tensors, static_cast<int>(groupRank(root())), kTag), out);
  }

  // Stripes of this collective: only Gloo's allgather and reduce-scatter
  // are cut (MPI moves a node's bytes through shared memory, not sockets).
  int64_t stripeCount() const {
    if (communicator_.backend() != CommBackend::Gloo || stream_key_ < 0 ||
        (params_.type != CommunicationType::Allgather &&
         params_.type != CommunicationType::ReduceScatter)) {
      return 1;
    }
    // From sizes every member shares (the whole buffer's), so that members
    // holding pieces of unequal rows take the same count.
    const at::Tensor& whole = params_.type == CommunicationType::Allgather ? output_ : input_;
    return stripesFor(whole.numel() / team_size_ * static_cast<int64_t>(whole.element_size()));
  }
  c10d::ProcessGroup& stripeGroup(int64_t stripe) const {
    return stripe == 0 ? *group_
                       : communicator_.processGroup(params_.team,
                                                    Communicator::stripeKey(stream_key_, stripe));
  }

  const CommunicationParams& params_;
  const std::string what_;
  const int64_t my_device_;
  at::Tensor input_;  // views of the caller's buffers (withoutLeadingUnitAxes)
  at::Tensor output_;
  const at::Tensor given_input_;  // the caller's buffers
  const at::Tensor given_output_;
  Communicator& communicator_;
  const int64_t stream_key_;
  const int64_t team_size_;
  c10d::ProcessGroup* group_ = nullptr;
  int64_t stripes_ = 1;
};

}  // namespace

std::string describeCollective(const CommunicationParams& params, const std::string& name) {
  return toString(params.type) + " (" + name + ") over team " + teamToString(params.team);
}

int64_t collectiveBytesSent() {
  return bytes_sent.load(std::memory_order_relaxed);
}

c10::intrusive_ptr<c10d::Work> postCollective(const CommunicationParams& params,
                                              const std::string& name, int64_t my_device,
                                              const at::Tensor& input, const at::Tensor& output,
                                              Communicator& communicator, int64_t stream_key) {
  return CollectivePoster(params, describeCollective(params, name), my_device, input, output,
                          communicator, stream_key)
      .post();
}

namespace {
// Whether `tv` is replicated (no device-parallel axis) on a mesh that holds
// every device of `team`.
bool holdsWholeOnEveryMember(const TensorView& tv, const std::vector<int64_t>& team) {
  if (!tv.hasDeviceMesh() || isSharded(&tv)) {
    return false;
  }
  const DeviceMesh& mesh = tv.getDeviceMesh();
  return std::all_of(team.begin(), team.end(), [&](int64_t device) { return mesh.has(device); });
}

CommunicationParams paramsOf(const Communication& communication) {
  CommunicationParams params;
  params.type = communication.type();
  params.team = communication.team();
  if (communication.hasRoot()) {
    params.root = communication.root();
  }
  if (communication.hasReduceOp()) {
    params.reduce_op = communication.reduceOp();
  }
  if (communication.hasScatteredAxis()) {
    params.scattered_axis = communication.scatteredAxis();
  } else if (params.type == CommunicationType::Gather ||
             params.type == CommunicationType::Scatter) {
    // The lowering puts the sharded axis first but behind the whole's
    // broadcast axes (collective_buffers.h): the axis the root cuts.
    const TensorView* whole =
        params.type == CommunicationType::Gather ? communication.out() : communication.in();
    int64_t leading_broadcasts = 0;
    for (const IterDomain* id : whole->shapeDomain()) {
      if (!id->isBroadcast()) {
        break;
      }
      ++leading_broadcasts;
    }
    params.scattered_axis = leading_broadcasts;
  }
  params.every_member_holds_input = params.type == CommunicationType::Scatter &&
                                    holdsWholeOnEveryMember(*communication.in(), params.team);
  return params;
}
}  // namespace

c10::intrusive_ptr<c10d::Work> postCollective(const Communication& communication, int64_t my_device,
                                              const at::Tensor& input, const at::Tensor& output,
                                              Communicator& communicator, int64_t stream_key) {
  return postCollective(paramsOf(communication), communication.toInlineString(), my_device, input,
                        output, communicator, stream_key);
}

void localStandIn(const Communication& communication, int64_t my_device, const at::Tensor& input,
                  const at::Tensor& output) {
  localStandIn(paramsOf(communication), my_device, input, output);
}

}  // namespace hostir
