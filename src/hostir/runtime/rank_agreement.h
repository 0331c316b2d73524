#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "hostir/host_ir/host_ir_container.h"
#include "hostir/ir/fusion.h"
#include "hostir/runtime/polymorphic_value.h"

namespace hostir {

class Communicator;

// What the ranks of a sharded run must agree on before any collective of
// the program pairs up their buffers, checked on every run.
//
// Every run, the ranks allgather a small header: the program's fingerprint
// (of the prepared fusion, which includes chunk counts and meshes), the
// number of streams, and a hash of this rank's input signature. The first
// time the ranks run a combination of signatures they check in detail:
// every input axis's size (equal shards of a sharded axis, equal sizes of a
// replicated one), then that every sharded axis of every tensor of the
// program (inputs, intermediates, outputs: what a scatter, allgather,
// reduce-scatter or pipelined loop exchanges) has an extent its device
// count divides. A disagreement is a hostir::Error on every rank, naming the
// tensor, the ranks and the sizes. Every rank decides from the same gathered
// headers, so all take the same path; ranks whose sizes disagree on any call
// (one changed its shapes while another did not) all raise on that call.
//
// When some rank holds none of an input (it lives on a mesh without that
// rank), the ranks also share the inputs' symbolic extents, so a rank that
// only receives a tensor still knows its shape.
class RankAgreement {
 public:
  // `prepared` (the fusion after the presegmentation passes) and `program`
  // (its lowering for this rank) outlive this object.
  RankAgreement(const Fusion& prepared, const HostIrContainer& program, Communicator& communicator);

  // Throws hostir::Error on every rank if the ranks disagree (see above).
  // `signature` is inputSignature(inputs). Returns the global extents of
  // the inputs' sharded symbolic axes (the sum of the ranks' torch.chunk
  // pieces), to bind before the inputs: one rank's shard does not tell them
  // (4,095 rows on 2 devices leave rank 0 2,048, as 4,096 would).
  std::vector<std::pair<const Val*, PolymorphicValue>> check(const std::vector<at::Tensor>& inputs,
                                                             const std::vector<int64_t>& signature,
                                                             int number_of_streams);

  // Extents this rank cannot read from its own inputs, learned from the
  // ranks that hold them (empty when every rank holds every input).
  std::vector<std::pair<const Val*, PolymorphicValue>> exchangeInputExtents(
      const std::vector<at::Tensor>& inputs);

  Communicator& communicator() {
    return communicator_;
  }

 private:
  // A symbolic input extent, with where to read it.
  struct InputExtent {
    const Val* symbol;
    size_t input;
    int64_t axis;
  };

  const Fusion& prepared_;
  const HostIrContainer& program_;
  Communicator& communicator_;
  uint64_t fingerprint_ = 0;  // of the prepared fusion's printed form
  // The combinations of every rank's signature hash (row r: rank r's) that
  // passed the detailed check, with the global extents check() returns for
  // them; the same on every rank.
  static constexpr size_t kMaxAgreedSignatures = 1024;
  std::map<std::vector<int64_t>, std::vector<std::pair<const Val*, PolymorphicValue>>>
      agreed_signatures_;
  std::vector<InputExtent> input_extents_;  // empty: every rank holds every input
};

}  // namespace hostir
