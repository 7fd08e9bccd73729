// What runs on a chip's command processor, written by the host (the collectives library today,
// the driver later): a program of streams, each an in-order list of commands, ordered across
// streams and chips by signals (counters a command waits on and adds to), and the job format
// every data engine takes behind one submit/done interface.
// Captures the format only; the sequencer (sequencer.h) runs it, the DMA engines
// (dma_job_engine.h) carry out its jobs. Ignores: the binary packet encoding of command buffers,
// which the queue managers will read from memory (spec/gaudi1.yaml).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hw/core/numeric.h"

namespace podsim::chip {

// A data engine's job: a reduction (dst = a op b) or a copy (dst = a) of `count` elements.
struct Job {
  enum class Kind : std::uint8_t { kReduce, kCopy };
  Kind kind = Kind::kReduce;
  std::uint64_t dst = 0;
  std::uint64_t a = 0, b = 0;
  std::uint64_t count = 0;  // elements
  core::DataType type = core::DataType::kFp32;
  core::ReduceOp op = core::ReduceOp::kSum;
};

// What the sequencer hands jobs to: the DMA engines now, TPCs later.
class Engine {
 public:
  virtual ~Engine() = default;
  // Queues a job; `done` runs when its last byte is written, or with false when an access was
  // rejected and the job stopped there.
  virtual void submit(const Job& job, std::function<void(bool ok)> done) = 0;
};

struct Command {
  // kWait does nothing once its wait is met: it makes a program wait for data it only receives.
  enum class Kind : std::uint8_t { kWrite, kReduce, kCopy, kWait };
  Kind kind = Kind::kWrite;
  // kWrite: `bytes` from local `src` to `dst` at the far end of QP `qpn`; the far chip's
  // program adds one to its signal `remote_signal` when the data has landed.
  std::uint32_t qpn = 0;
  std::uint64_t src = 0, dst = 0, bytes = 0;
  std::uint32_t remote_signal = 0;
  // kReduce, kCopy: the engine's job.
  Job job;
  // Issue only once signal `wait` has reached `wait_count` (no wait when wait is kNone).
  std::uint32_t wait = kNone;
  std::uint32_t wait_count = 0;
  // Add one to signal `done` when finished: the write acknowledged, the job's result written.
  std::uint32_t done = kNone;

  static constexpr std::uint32_t kNone = 0xffffffffu;
};

struct Program {
  std::vector<std::vector<Command>> streams;
  std::uint32_t signals = 0;  // signals are 0..signals-1, all starting at zero
};

}  // namespace podsim::chip
