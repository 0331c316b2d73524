#pragma once

#include <utility>
#include <vector>

namespace hostir {

class Expr;
class ForLoop;
class HostIrContainer;
class IterDomain;
class Stream;
class Val;

// The loops that run a Stream axis on the worker streams, built the same way
// by every pass that makes them (stream parallelization, the pipelined
// allgather + GEMM of communication lowering):
//
//   FOR StreamIdx in [0, min(iterations, numberOfStreams)):   (sync loop)
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     Synchronize caller
//   SetCurrentStream to caller
//   FOR StreamIdx in <stream axis>:                          (main loop)
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     <body>
//     SetCurrentStream to caller
//     Synchronize Stream ( StreamIdx % numberOfStreams )
//
// The workers wait for the caller in a loop of their own, before the main
// loop, so that iterations overlap: a wait at the top of each main-loop
// iteration would order iteration i+1 after iteration i's final Synchronize.

// `Stream ( index % numberOfStreams )`: the worker stream of a loop index.
Stream* makeWorkerStream(HostIrContainer& container, Val* index);

// Appends the sync loop and the switch back to `caller` that come before
// a main loop of `iterations`.
void appendWorkerSync(HostIrContainer& container, Val* iterations, Stream* caller,
                      std::vector<Expr*>& emitted);

// A fresh StreamIdx and a loop of it over `loop_id`, with an empty body.
ForLoop* makeStreamIndexLoop(HostIrContainer& container, IterDomain* loop_id);

// The caller's Waits for collectives a main loop over `loop_id` posts each
// iteration, in a loop of their own after it: a stream goes on to its next
// chunk while its chunk's collectives wait for the link, which takes them
// in posting order (after every prefetched allgather).
ForLoop* makeWaitsAfterLoop(HostIrContainer& container, IterDomain* loop_id,
                            const std::vector<Expr*>& communications);

// [start, stop) of chunk `index` when chunks of `chunk_size` cover
// [0, extent). Clamped: with ceilDiv-sized chunks the last ones may start
// past the end (10 rows in 8 chunks: 2+2+2+2+2+0+0+0); they are empty,
// never negative.
std::pair<Val*, Val*> chunkBounds(Val* index, Val* chunk_size, Val* extent);

// The main loop over `loop_id`: its index and worker stream exist from
// construction, the body's first expr switches to the worker; the caller
// appends the rest of the body, and finish() switches back to `caller` and
// makes it wait for the worker.
class StreamMainLoop {
 public:
  StreamMainLoop(HostIrContainer& container, IterDomain* loop_id, Stream* caller);

  Val* index() const {
    return index_;
  }
  ForLoop* loop() const {
    return loop_;
  }
  ForLoop* finish();

 private:
  HostIrContainer& container_;
  Stream* caller_;
  Val* index_;
  Stream* worker_;
  ForLoop* loop_;
};

}  // namespace hostir
