// The sequencer's side of a DMA engine: a program's reduce or copy job (program.h) becomes a
// linear dma::DmaJob on one of the chip's DMA cores, which runs it in its reduction or copy mode
// through the NoC. hw/dma knows nothing of programs; this adapter is the only place the two
// formats meet.
// Captures: a reduction dst = a op b of `count` elements as a two-source reduction, a copy as a
// linear copy, both over count x element-size bytes; a job of no elements ends at once (a DMA
// core runs no empty shape). Ignores: completion writes (the sequencer counts completions
// itself) and strided shapes (programs only name linear ranges).
#pragma once

#include <functional>

#include "hw/chip/program.h"
#include "hw/dma/dma_core.h"
#include "hw/dma/dma_job.h"

namespace podsim::chip {

// The DMA core's description of `job`: same addresses, its elements as bytes.
dma::DmaJob to_dma_job(const Job& job);

class DmaJobEngine : public Engine {
 public:
  explicit DmaJobEngine(dma::DmaCore& core) : core_(core) {}

  void submit(const Job& job, std::function<void(bool ok)> done) override;
  dma::DmaCore& core() { return core_; }

 private:
  dma::DmaCore& core_;
};

}  // namespace podsim::chip
