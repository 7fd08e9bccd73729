// The side band between a queue manager and the engine it feeds. A QMAN hands an engine its work
// by writing the engine's registers over the NoC (as Gaudi's command processors do for LIN_DMA),
// then needs to know when the engine is done, for an engine barrier or a completion: on chip this
// is a wire, not a bus transaction, so it is a C++ interface and costs no simulated time.
#pragma once

#include <deque>
#include <functional>

namespace podsim::core {

class EngineStatus {
 public:
  virtual ~EngineStatus() = default;
  // True while a job is queued or running.
  virtual bool busy() const = 0;
  // Runs `then` once nothing is queued or running: at once when idle, else when the engine
  // finishes its last job (at that simulated time). Several calls queue up in order.
  virtual void when_idle(std::function<void()> then) = 0;
};

// What an engine keeps of its when_idle callers: it runs them whenever it goes idle.
class IdleWaiters {
 public:
  // EngineStatus::when_idle for an engine that is `busy` or not.
  void add(bool busy, std::function<void()> then) {
    if (!busy) return then();
    waiting_.push_back(std::move(then));
  }
  // Runs the waiting callbacks in order while the engine stays idle: one may give it new work.
  void run(const bool& busy) {
    while (!busy && !waiting_.empty()) {
      auto then = std::move(waiting_.front());
      waiting_.pop_front();
      then();
    }
  }

 private:
  std::deque<std::function<void()>> waiting_;
};

}  // namespace podsim::core
