#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <vector>

#include "hostir/runtime/comm/communicator.h"

// The collectives of hostir's sequence-parallel blocks (`hostir sp-mlp`,
// `sp-layer` and their Python examples) with the compute taken away: what
// moving a block's bytes costs on this job's link, for the programs' "comm-only"
// baseline, so the tools and Python measure it alike.
namespace hostir {

class BlockCommunication {
 public:
  // `blocks` blocks that each allgather the token-sharded [tokens, H] rows
  // `local` (this rank's) and reduce-scatter a [tokens, H] partial back onto
  // the tokens, over the whole job, on the process group of `stream_key`.
  BlockCommunication(Communicator& communicator, const at::Tensor& local, int64_t tokens,
                     int blocks, int64_t stream_key = 0);

  // Moves the blocks' bytes as the program of `chunks` chunks does. 1: an
  // allgather, then a reduce-scatter (the unchunked program's order: its
  // reduce-scatter waits for the allgather, through the compute). C > 1: a
  // block's C allgathers of row chunks posted at once and chunk j's
  // reduce-scatter as soon as its allgather is done (the pipelined
  // program's dependencies). Collective; chunk j holds ceilDiv(local rows,
  // chunks) rows, the last ones fewer or none, as in the program. Buffers
  // are allocated on a chunk count's first run.
  void run(int64_t chunks);

  // What the last run of `chunks` chunks moved, to check it: chunk j's
  // gathered rows (every rank's rows of chunk j, in rank order) and this
  // rank's reduce-scattered rows, each the sum over the ranks of their
  // partial: rank r's partial is all r + 1.
  const std::vector<at::Tensor>& gathered(int64_t chunks) {
    return buffersFor(chunks).gathered;
  }
  const at::Tensor& scattered() const {
    return scattered_;
  }

 private:
  // One chunk count's buffers: chunk j's local rows, their gathered rows, a
  // partial of the gathered size and chunk j's rows of the result.
  struct Buffers {
    std::vector<at::Tensor> local, gathered, partial, scattered;
  };
  const Buffers& buffersFor(int64_t chunks);

  Communicator& communicator_;
  at::Tensor local_;
  at::Tensor scattered_;
  int blocks_;
  int64_t stream_key_;
  std::vector<int64_t> world_;
  std::map<int64_t, Buffers> by_chunks_;
};

}  // namespace hostir
