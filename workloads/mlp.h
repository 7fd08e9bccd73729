// A multi-layer perceptron trained on synthetic data, on the Synapse-like stack: forward (GEMMs
// on the MME, bias and ReLU on the TPCs), softmax cross-entropy, backward (the weight and data
// gradients as transposed GEMMs, bias gradients as column sums) and SGD with momentum in
// place, all one step's operations recorded on a Session (eager or lazy). Each step trains on a
// fresh batch: inputs uniform in [-1, 1), labels the arg-max of a fixed random linear teacher,
// so the loss falls as it learns.
// The CPU reference trains the same network from the same (type-rounded) initial values in
// double precision, for checking the device's losses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synapse/session.h"

namespace podsim::workloads {

struct MlpConfig {
  std::vector<std::uint32_t> layers{256, 512, 512, 16};  // inputs, hidden widths, classes
  std::uint32_t batch = 128;
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  double lr = 0.05, momentum = 0.9;
  std::uint64_t seed = 1;
  // Why the network cannot be built, or empty.
  std::string problem() const;
};

// One batch: inputs [layers[0], batch] and labels [batch].
struct Batch {
  std::vector<double> x;
  std::vector<double> labels;
};
Batch make_batch(const MlpConfig& c, int step);
// Initial weights (Glorot uniform) and biases (zero) of layer i, rounded to the config's type.
std::vector<double> initial_weights(const MlpConfig& c, std::size_t layer);

class Mlp {
 public:
  Mlp(synapse::Session& session, const MlpConfig& config);
  // One training step on batch `step`; returns the batch's mean loss before the update.
  double step(int step);

 private:
  void forward_backward();
  synapse::Session& s_;
  MlpConfig c_;
  synapse::Session::Value x_, labels_, loss_, dloss_;
  std::vector<synapse::Session::Value> w_, b_, vw_, vb_;
};

// The mean loss of each of `steps` steps, trained in double precision on the CPU.
std::vector<double> reference_losses(const MlpConfig& config, int steps);

}  // namespace podsim::workloads
