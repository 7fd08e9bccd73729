// What the algorithms build for each rank before it becomes command buffers: a program of
// streams, each an in-order list of commands (an RDMA write, a reduction or copy, a wait),
// ordered across streams and chips by signals (counters a command waits on and adds to).
// Captures the format only; command_compiler.h turns it into Gaudi1 command buffers, DMA
// descriptors and NIC work requests ordered by sync objects and monitors.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/core/numeric.h"

namespace podsim::collectives {

// A DMA engine's job: a reduction (dst = a op b) or a copy (dst = a) of `count` elements.
struct Job {
  enum class Kind : std::uint8_t { kReduce, kCopy };
  Kind kind = Kind::kReduce;
  std::uint64_t dst = 0;
  std::uint64_t a = 0, b = 0;
  std::uint64_t count = 0;  // elements
  core::DataType type = core::DataType::kFp32;
  core::ReduceOp op = core::ReduceOp::kSum;
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

}  // namespace podsim::collectives
