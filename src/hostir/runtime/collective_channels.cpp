#include "hostir/runtime/collective_channels.h"

#include <algorithm>

#include "hostir/ir/device_mesh.h"
#include "hostir/ir/error.h"
#include "hostir/runtime/comm/collective_fault.h"
#include "hostir/runtime/comm/collectives.h"

namespace hostir {

namespace {

// Records how long a posted collective is on the link, as its own trace
// lane: from when it could start (posted, and the channel's previous
// collective done, since a team's group runs one at a time) until the
// transfer completes.
void traceInFlight(const c10::intrusive_ptr<c10d::Work>& work, runtime::Tracer& tracer, int lane,
                   const std::shared_ptr<std::atomic<int64_t>>& channel_free_us, std::string name) {
  if (!tracer.isEnabled() || !work) {
    return;
  }
  c10::intrusive_ptr<c10::ivalue::Future> future;
  try {
    future = work->getFuture();
  } catch (const std::exception&) {
    return;  // this kind of work (e.g. a point-to-point send) has no future
  }
  const int64_t posted_us = tracer.nowUs();
  future->addCallback(
      [&tracer, lane, channel_free_us, posted_us, name = std::move(name)](c10::ivalue::Future&) {
        const int64_t end_us = tracer.nowUs();
        const int64_t start_us = std::max(posted_us, channel_free_us->exchange(end_us));
        tracer.record(runtime::TraceEvent{name, lane, start_us, end_us, "communication"});
      });
}

}  // namespace

runtime::Stream& CollectiveChannels::channelFor(const std::vector<int64_t>& team) {
  std::vector<int64_t> sorted = team;
  std::sort(sorted.begin(), sorted.end());
  auto [it, inserted] = channels_.emplace(sorted, static_cast<int64_t>(channels_.size()));
  return pool_.channelStream(it->second, "comm channel, team " + teamToString(sorted));
}

void CollectiveChannels::post(const Expr* key, const std::shared_ptr<const std::string>& label,
                              const std::vector<int64_t>& team, runtime::Stream& current,
                              runtime::WaitTimeout wait_timeout, Post post) {
  runtime::maybeInjectCollectiveFault();
  auto pending = coalescing_ ? coalescing_ : std::make_shared<PendingWorks>();
  pending->what = *label;
  works_[key].push_back(pending);
  runtime::Stream& channel = channelFor(team);
  // The input is ready once the current stream gets here.
  channel.waitEvent(current.recordEvent(), wait_timeout);
  runtime::Tracer& tracer = pool_.tracer();
  const int lane = channel.id() + static_cast<int>(runtime::StreamPool::kFirstChannelId);
  auto& channel_free_us = channel_free_us_[lane];
  if (channel_free_us == nullptr) {
    channel_free_us = std::make_shared<std::atomic<int64_t>>(0);
  }
  if (tracer.isEnabled()) {
    tracer.setLaneName(lane, "link, team " + teamToString(team) + " (collectives in flight)");
  }
  std::string short_name = label->substr(0, label->find(" ("));
  channel.enqueue(
      label,
      [post = std::move(post), pending, &tracer, lane, channel_free_us, short_name] {
        auto work = post();
        if (work) {
          traceInFlight(work, tracer, lane, channel_free_us, short_name + " in flight");
          pending->works.push_back(work);
        }
      },
      "communication");
  pending->posted = channel.recordEvent();
}

void CollectiveChannels::wait(const Expr* key, const std::shared_ptr<const std::string>& label,
                              runtime::Stream& current, runtime::WaitTimeout wait_timeout,
                              std::chrono::milliseconds communication_timeout) {
  auto it = works_.find(key);
  HOSTIR_CHECK(it != works_.end() && !it->second.empty(), *label,
               " waits for a communication that was not posted (or was already waited for)");
  auto pending = it->second.front();
  it->second.pop_front();
  current.waitEvent(pending->posted, wait_timeout);
  current.enqueue(
      label,
      [pending, communication_timeout] {
        for (const auto& work : pending->works) {
          waitWork(work, communication_timeout, pending->what);
        }
        pending->works.clear();
      },
      "wait");
}

void CollectiveChannels::startCoalescing(const std::string& label) {
  HOSTIR_CHECK(coalescing_ == nullptr, label, ": coalescing groups do not nest");
  coalescing_ = std::make_shared<PendingWorks>();
}

void CollectiveChannels::endCoalescing(const Expr* end, const std::string& label) {
  HOSTIR_CHECK(coalescing_ != nullptr, label, " without a StartCoalescing");
  works_[end].push_back(coalescing_);
  coalescing_.reset();
}

void CollectiveChannels::startRun() {
  works_.clear();
  coalescing_.reset();
}

}  // namespace hostir
