#pragma once

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <mutex>
#include <vector>

// c10d works composed of other works: what a collective that hostir stages,
// reduces locally or stripes over several groups hands to its Wait.

namespace hostir {

// A c10d work followed by a local step that only this rank does once the
// transfer has landed (copying a staged buffer back, the local reduction of
// the composed reduce-scatter). The step runs in wait(), on the thread that
// waits: the stream that posted the collective.
class WorkWithEpilogue : public c10d::Work {
 public:
  WorkWithEpilogue(c10::intrusive_ptr<c10d::Work> transfer, std::function<void()> epilogue)
      : transfer_(std::move(transfer)), epilogue_(std::move(epilogue)) {}

  bool isCompleted() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return epilogue_done_;
  }
  bool isSuccess() const override {
    return transfer_->isSuccess();
  }
  std::exception_ptr exception() const override {
    return transfer_->exception();
  }
  // Completes when the transfer does (the epilogue runs later, in wait()):
  // what a trace of the link shows.
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    return transfer_->getFuture();
  }
  bool wait(std::chrono::milliseconds timeout) override {
    bool completed = transfer_->wait(timeout);  // throws on timeout or failure
    std::lock_guard<std::mutex> lock(mutex_);
    if (!epilogue_done_) {
      epilogue_();
      epilogue_done_ = true;
    }
    return completed;
  }

 private:
  c10::intrusive_ptr<c10d::Work> transfer_;
  std::function<void()> epilogue_;
  std::mutex mutex_;
  bool epilogue_done_ = false;
};

// The pieces of one striped collective (each on its own group): complete
// when every piece is, failed when one is.
class StripedWork : public c10d::Work {
 public:
  explicit StripedWork(std::vector<c10::intrusive_ptr<c10d::Work>> pieces)
      : pieces_(std::move(pieces)) {}

  bool isCompleted() override {
    return std::all_of(pieces_.begin(), pieces_.end(),
                       [](const auto& piece) { return piece->isCompleted(); });
  }
  bool isSuccess() const override {
    return std::all_of(pieces_.begin(), pieces_.end(),
                       [](const auto& piece) { return piece->isSuccess(); });
  }
  std::exception_ptr exception() const override {
    for (const auto& piece : pieces_) {
      if (std::exception_ptr error = piece->exception()) {
        return error;
      }
    }
    return nullptr;
  }
  // Completes when the last piece does: what a trace of the link shows.
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    std::vector<c10::intrusive_ptr<c10::ivalue::Future>> futures;
    for (const auto& piece : pieces_) {
      futures.push_back(piece->getFuture());
    }
    c10::List<c10::intrusive_ptr<c10::ivalue::Future>> list(
        c10::FutureType::create(futures.front()->elementType()));
    for (auto& future : futures) {
      list.push_back(std::move(future));
    }
    return c10::collectAll(list);
  }
  // Every piece within the one deadline (c10d reads a zero timeout as "the
  // default", so what is left is at least 1 ms).
  bool wait(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool completed = true;
    for (const auto& piece : pieces_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      completed = piece->wait(std::max(left, std::chrono::milliseconds(1))) && completed;
    }
    return completed;
  }

 private:
  std::vector<c10::intrusive_ptr<c10d::Work>> pieces_;
};

}  // namespace hostir
