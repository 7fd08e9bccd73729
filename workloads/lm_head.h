// A language model's output head, forward and backward, on the Synapse-like stack: the logits as
// a GEMM of the last hidden states with the (tied) embedding table, the softmax cross-entropy
// over the vocabulary, and the gradients of the table and of the hidden states.
// The TPC library's loss kernels take rows of at most 20480 classes, so a wider vocabulary runs
// in shards of at most that many columns, each with its own GEMM and loss (as vocabulary-
// parallel heads do): the work and the memory traffic are the whole head's, but each shard's
// softmax is normalised over the shard, so the loss's values are not the whole vocabulary's.
// It is meant for timing (training/profile.h); no CPU reference checks it.
// Ignores: the embedding lookup's backward (a scatter-add with no TPC kernel; its gradient is
// the head's, the table being tied), label smoothing, masking.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synapse/session.h"

namespace podsim::workloads {

struct LmHeadConfig {
  std::uint32_t tokens = 128, hidden = 128, vocab = 1024;
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  std::string problem() const;  // why the head cannot be built, or empty
};

class LmHead {
 public:
  // Widest shard of the vocabulary (the loss kernels' row limit).
  static constexpr std::uint32_t kShard = 20480;

  LmHead(synapse::Session& session, const LmHeadConfig& config);
  // One forward pass (and the backward when `backward`): logits, loss and gradients on the
  // device.
  void step(bool backward = true);

 private:
  using Value = synapse::Session::Value;
  struct Shard {
    std::uint32_t columns = 0;
    Value table, dtable;
  };
  synapse::Session& s_;
  LmHeadConfig c_;
  Value x_, dx_, labels_, dloss_;
  std::vector<Shard> shards_;
};

}  // namespace podsim::workloads
