// A language model's output head, forward and backward, on the Synapse-like stack: the logits as
// a GEMM of the last hidden states with the (tied) embedding table, the softmax cross-entropy
// over the vocabulary, and the gradients of the table and of the hidden states.
// With `transform`, BERT's prediction head as its pretraining code builds it [T17]: a dense layer
// with GELU and a layer norm over every token before the decoder, and the decoder's own bias.
// With `loss_tokens` below `tokens`, the head runs on every token and the loss on that many of
// them, gathered after the head as BERT's MLPerf criterion gathers the masked positions' scores
// [T17]: the loss's rows copied out of the logits, their gradient copied into a zeroed gradient
// of all the logits (the gathered rows taken as the first ones: the bytes moved are the same).
// The TPC library's loss kernels take rows of at most 20480 classes, so a wider vocabulary runs
// in shards of at most that many columns, each with its own GEMM and loss (as vocabulary-
// parallel heads do): the work and the memory traffic are the whole head's, but each shard's
// softmax is normalised over the shard, so the loss's values are not the whole vocabulary's.
// It is meant for timing (training/profile.h); no CPU reference checks it.
// Ignores: the embedding lookup's backward (a scatter-add with no TPC kernel; its gradient is
// the head's, the table being tied), label smoothing, BERT's next-sentence head (a 1024 x 2
// layer on one token a sequence).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synapse/session.h"

namespace podsim::workloads {

struct LmHeadConfig {
  std::uint32_t tokens = 128, hidden = 128, vocab = 1024;
  std::uint32_t loss_tokens = 0;  // the loss's tokens, gathered after the head; 0: every token
  bool transform = false;         // BERT's dense + GELU + layer norm first, the decoder's bias
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
    Value table, dtable, bias, dbias;
  };
  Value transform_forward();
  void transform_backward(Value dy);
  std::uint32_t loss_tokens() const { return c_.loss_tokens ? c_.loss_tokens : c_.tokens; }
  synapse::Session& s_;
  LmHeadConfig c_;
  Value x_, dx_, labels_, dloss_;
  // The transform's parameters and their gradients (dense weight and bias, layer norm's gamma
  // and beta), and what its forward keeps.
  std::map<std::string, Value> t_;
  std::vector<Shard> shards_;
};

}  // namespace podsim::workloads
