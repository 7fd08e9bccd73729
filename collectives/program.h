// What the algorithms build for each rank before it becomes command buffers: a program of
// streams, each an in-order list of commands (an RDMA write, a reduction or copy, a wait),
// ordered across streams and chips by signals (counters a command waits on and adds to).
// Captures the format only; command_compiler.h turns it into Gaudi1 command buffers, DMA
// descriptors and NIC work requests ordered by sync objects and monitors.
#pragma once

#include <cstdint>
#include <vector>

#include "core/numeric.h"

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

// 56 bytes, within a cache line: a large collective's programs hold millions of commands, each
// read once, a cache miss at a time, as its stream advances.
struct Command {
  // kWait does nothing once its wait is met: it makes a program wait for data it only receives.
  enum class Kind : std::uint8_t { kWrite, kReduce, kCopy, kWait };
  Kind kind = Kind::kWrite;
  // kReduce, kCopy: the elements' type and the reduction.
  core::DataType type = core::DataType::kFp32;
  core::ReduceOp op = core::ReduceOp::kSum;
  // kWrite: `bytes` from local `src` to `dst` at the far end of QP `qpn`; the far chip's
  // program adds one to its signal `remote_signal` when the data has landed.
  // kReduce: dst = src op b over `bytes` of each; kCopy: dst = src. The engine's job (job()).
  std::uint32_t qpn = 0;
  std::uint64_t dst = 0, src = 0, b = 0, bytes = 0;
  std::uint32_t remote_signal = 0;
  // Issue only once signal `wait` has reached `wait_count` (no wait when wait is kNone).
  std::uint32_t wait = kNone;
  std::uint32_t wait_count = 0;
  // Add one to signal `done` when finished: the write acknowledged, the job's result written.
  std::uint32_t done = kNone;

  static constexpr std::uint32_t kNone = 0xffffffffu;

  Job job() const {
    Job j;
    j.kind = kind == Kind::kCopy ? Job::Kind::kCopy : Job::Kind::kReduce;
    j.dst = dst;
    j.a = src;
    j.b = b;
    j.count = bytes / core::size_of(type);
    j.type = type;
    j.op = op;
    return j;
  }
};
static_assert(sizeof(Command) == 56);

struct Program {
  std::vector<std::vector<Command>> streams;
  std::uint32_t signals = 0;  // signals are 0..signals-1, all starting at zero
};

}  // namespace podsim::collectives
