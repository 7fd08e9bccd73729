#include "hw/chip/dma_job_engine.h"

#include <utility>

namespace podsim::chip {

dma::DmaJob to_dma_job(const Job& job) {
  const std::uint64_t bytes = job.count * core::size_of(job.type);
  if (job.kind == Job::Kind::kCopy) return dma::DmaJob::copy(job.a, job.dst, bytes);
  return dma::DmaJob::reduce(job.a, job.b, job.dst, bytes, job.type, job.op);
}

void DmaJobEngine::submit(const Job& job, std::function<void(bool)> done) {
  if (job.count == 0) {
    if (done) done(true);
    return;
  }
  core_.submit(to_dma_job(job), std::move(done));
}

}  // namespace podsim::chip
