#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/runtime/streams/stream_pool.h"

namespace hostir {

class Expr;

// The communication side of a host program's run (docs/streams.md,
// "Communication channels"): one channel stream per team, fed by the host in
// program order, so every rank posts a team's collectives in one order and
// they reach the link in that order; and the pairing of each Wait with the
// post it completes (a Wait takes the oldest post of its Communication or
// EndCoalescing not yet waited for, so a loop that posts every chunk before
// a loop that waits pairs chunk i with chunk i). The channels live as long
// as the evaluator; the posts not yet waited for belong to one run.
class CollectiveChannels {
 public:
  using Post = std::function<c10::intrusive_ptr<c10d::Work>()>;

  explicit CollectiveChannels(runtime::StreamPool& pool) : pool_(pool) {}

  // Posts on `team`'s channel once `current` reaches this point (the input
  // is ready then). `key` is what the matching Wait names: the
  // Communication, or, inside a coalescing group, the group's EndCoalescing.
  void post(const Expr* key, const std::shared_ptr<const std::string>& label,
            const std::vector<int64_t>& team, runtime::Stream& current,
            runtime::WaitTimeout wait_timeout, Post post);
  // Makes only `current` wait: first for the channel to post the oldest
  // post of `key` not waited for, then for its data. Throws hostir::Error
  // (starting with `label`) when there is none.
  void wait(const Expr* key, const std::shared_ptr<const std::string>& label,
            runtime::Stream& current, runtime::WaitTimeout wait_timeout,
            std::chrono::milliseconds communication_timeout);
  // Gloo has no coalescing API: a group's collectives are posted one by one,
  // and the EndCoalescing's Wait waits for all of them.
  void startCoalescing(const std::string& label);
  void endCoalescing(const Expr* end, const std::string& label);
  // A run starts with nothing posted.
  void startRun();

 private:
  // Work handles of posted communications, filled by the channel that posts
  // them and read by the stream that waits.
  struct PendingWorks {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    std::string what;
    // Completes once the channel has posted them: a Wait must not look at
    // `works` before.
    runtime::Event posted;
  };

  runtime::Stream& channelFor(const std::vector<int64_t>& team);

  runtime::StreamPool& pool_;
  std::map<std::vector<int64_t>, int64_t> channels_;  // sorted team -> channel
  // Per link lane: when its last collective completed (for traces).
  std::map<int, std::shared_ptr<std::atomic<int64_t>>> channel_free_us_;
  // Per run: each key's posts not yet waited for, in posting order.
  std::unordered_map<const Expr*, std::deque<std::shared_ptr<PendingWorks>>> works_;
  std::shared_ptr<PendingWorks> coalescing_;
};

}  // namespace hostir
