// One transformer layer (pre-norm, as GPT-2 and BERT-style decoders), forward and backward, on
// the Synapse-like stack: layer norm, the QKV projection, multi-head attention as batched MME
// GEMMs over the heads' column blocks (no transposes: the GEMMs' leading dimensions and batch
// strides walk the heads), softmax, the output projection and residual, layer norm, a GELU MLP
// and residual; then every parameter's gradient and the input's. The step's objective is
// L = sum(out * r) for a fixed random r, so dL/dout = r and L is the "loss" printed.
// Conventions: the query projection carries the attention's 1/sqrt(head size) scale (its
// weights are drawn scaled), as some implementations fold it. With `packed` > 1 each row holds
// that many sequences of equal length (BERT's packed pretraining data), and an additive mask (0
// within a sequence, -10000 across) keeps attention inside each: one TPC addition over the
// scores before the softmax, its mask read for every head as a mask broadcast over the heads is
// (podsim holds it at the scores' size; the real [B, 1, S, S] one is read the same bytes).
// The mask passes the gradient through unchanged. With `fused_attention` the attention runs as
// Habana's FusedSDPA does, flash-attention style: one sequence at a time (its heads' scores,
// mask, softmax, dropout and weighted sum), nothing of the S x S scores kept for the backward
// pass, which computes each sequence's scores, probabilities and dropout again before their
// gradients; each sequence's dropout draws what the unfused layer's does for its elements (the
// kernels' offset), so both give the same results. Dropout (`dropout`
// > 0, as BERT trains [T5]) drops attention probabilities and both residual branches (the
// output projection's and the MLP's) with one probability, each with its own seed, on the TPC
// (dropout and dropout_bwd, their masks kept for the backward pass).
// The CPU reference computes the same layer in double precision.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synapse/session.h"
#include "workloads/values.h"

namespace podsim::workloads {

struct TransformerConfig {
  std::uint32_t batch = 2, sequence = 64, hidden = 128, heads = 4, ffn = 512;
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  double eps = 1e-5;
  double dropout = 0;            // the probability of dropping an element; 0: no dropout nodes
  std::uint32_t packed = 0;      // sequences in each row, attention masked between them; 0, 1: none
  bool fused_attention = false;  // attention a sequence at a time, recomputed in the backward
  std::uint64_t seed = 1;
  // The seed of dropout node `which` (0 attention probabilities, 1 the projection's output, 2
  // the MLP's) and its keep threshold (tpc::dropout_threshold).
  std::uint32_t dropout_seed(int which) const;
  std::string problem() const;  // why the layer cannot be built, or empty
  std::uint32_t tokens() const { return batch * sequence; }
  std::uint32_t head_size() const { return hidden / heads; }
};

// The layer's parameters, input and r, by name (type-rounded), and its results by name: "out",
// "loss" (one value; "loss_scale": the sum of its terms' magnitudes, the scale its rounding
// error has) and the gradients "d<parameter>" and "dx".
Tensors transformer_inputs(const TransformerConfig& c);
Tensors transformer_reference(const TransformerConfig& c, const Tensors& inputs);

class TransformerBlock {
 public:
  TransformerBlock(synapse::Session& session, const TransformerConfig& config);
  // One forward and backward pass (forward only when `backward` is false, for timing the two
  // apart); returns the objective L.
  double step(bool backward = true);
  // The results of the last step, by name as transformer_reference gives them.
  Tensors results();

 private:
  using Value = synapse::Session::Value;
  Value param(const std::string& name, std::vector<std::uint32_t> shape);
  Value linear(const std::string& name, Value in, Value w, Value b, std::uint32_t in_features,
               std::uint32_t out_features);
  void linear_backward(const std::string& name, Value in, Value w, Value dout, Value* din,
                       std::uint32_t in_features, std::uint32_t out_features);
  struct HeadOperand {
    std::uint64_t offset;       // elements from the tensor's start
    std::uint32_t ld;           // elements between rows
    std::uint64_t head_stride;  // elements between heads
    bool trans;
  };
  void head_gemm(const std::string& name, Value a, Value b, Value c,
                 std::array<std::uint32_t, 3> mnk, std::array<HeadOperand, 3> operands);
  HeadOperand qkv_part(std::uint32_t n, int part, bool trans = false) const;
  HeadOperand probs_block(std::uint32_t n, bool trans = false) const;
  HeadOperand ctx_part(std::uint32_t n) const;

  // What the forward pass keeps for the backward.
  struct Saved {
    Value ln1, qkv, probs, ctx, x1, mean1, rstd1, ln2, mean2, rstd2, f1, a1;
    Value dropped_probs, probs_mask, attn_mask, mlp_mask;  // with dropout
  };
  void attention(Value qkv, Value ctx, Value probs, Saved& saved);
  void attention_backward(Value qkv, const Saved& saved, Value dctx, Value dqkv);
  // Fused attention: sequence n's scores, probabilities and dropped probabilities (and the
  // dropout's mask), its heads' [S, S heads] on their own; the layer's pass by sequences.
  struct SequenceAttention {
    Value probs, dropped, mask;
  };
  SequenceAttention sequence_attention(const std::string& pass, std::uint32_t n, Value qkv);
  void fused_attention(Value qkv, Value ctx);
  void fused_attention_backward(Value qkv, Value dctx, Value dqkv);
  // y = dropout of x with node `which`'s seed, its mask into `mask`, x's elements drawing from
  // `offset` in the node's order; and the gradient.
  Value dropout(const std::string& name, Value x, int which, Value& mask, std::uint64_t offset = 0);
  Value dropout_backward(const std::string& name, Value dy, Value mask, int which);
  Saved forward();
  void backward(const Saved& saved);
  Value layer_norm(const std::string& name, Value x, Value& mean, Value& rstd);
  // a + b into `into` or a new temporary.
  Value residual(const std::string& name, Value a, Value b, const Value* into = nullptr);

  synapse::Session& s_;
  TransformerConfig c_;
  std::map<std::string, Value> v_;  // parameters, inputs, outputs and gradients
};

}  // namespace podsim::workloads
