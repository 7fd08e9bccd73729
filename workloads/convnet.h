// Convolutional networks on the Synapse-like stack, as units one records forward and backward on
// a Session: convolutions on the MME (forward, data and weight gradients, NHWC activations and
// KRSC filters), batch norm or a bias, ReLU, pooling and residual additions on the TPCs, and a
// classifier (a global average pool or a flatten, dense layers, the softmax cross-entropy).
// Units:
//  - a conv block: a convolution, batch norm (or a bias), ReLU and an optional max pool: ResNet's
//    stem (7x7 stride 2, 3x3 stride 2 pool) and the MNIST net's block (3x3, 2x2 pool);
//  - a bottleneck: ResNet v1.5's 1x1, 3x3 (carrying the stride), 1x1 convolutions, each with
//    batch norm, a projection shortcut (1x1 convolution and batch norm) when the shape changes,
//    the residual addition and ReLU;
//  - a classifier: the mean of the per-sample cross-entropy losses, so that data-parallel
//    replicas' averaged gradients are a larger batch's.
// Presets: ResNet-50 v1.5 [T9] and the MNIST net of Graphcore's distributed-training guide [T4].
// Captures: every layer's operations and tensors at their real sizes, parameters' gradients in
// persistent tensors (for collectives and optimizers to take). Ignores: batch norm's running
// statistics (inference only), dropout, data augmentation, the input pipeline.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "synapse/session.h"
#include "workloads/values.h"

namespace podsim::workloads {

enum class ConvUnitKind : std::uint8_t { kConvBlock, kBottleneck, kClassifier };

struct ConvUnitConfig {
  ConvUnitKind kind = ConvUnitKind::kConvBlock;
  std::uint32_t batch = 2, channels = 3, height = 8, width = 8;  // the input [C, W, H, N]
  // Output channels: the conv block's convolution's, the bottleneck's last.
  std::uint32_t filters = 8;
  std::uint32_t window = 3, stride = 1, pad = 0;  // the conv block's convolution; stride also
                                                  // the bottleneck's 3x3 one
  bool batch_norm = true;                         // conv block: batch norm, else a bias
  std::uint32_t pool = 0, pool_stride = 0, pool_pad = 0;  // conv block: a max pool (0: none)
  std::uint32_t mid = 0;              // bottleneck: the 1x1 and 3x3 convolutions' channels
  bool global_pool = false;           // classifier: average the spatial positions first
  std::vector<std::uint32_t> hidden;  // classifier: dense layers with ReLU before the classes
  std::uint32_t classes = 10;
  // Classifier: the samples the loss is the mean over (0: the batch). Data-parallel replicas
  // take the global batch's, so that their summed gradients are its mean loss's.
  std::uint32_t loss_samples = 0;
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  double eps = 1e-5;
  std::uint64_t seed = 1;

  std::string problem() const;  // why the unit cannot be built, or empty
  // The output's sizes [C, W, H, N] (a classifier's: its logits [classes, 1, 1, N]).
  std::array<std::uint32_t, 4> output() const;
  std::uint64_t parameters() const;
  std::string key() const;  // a short name, unique per shape
};

// One trainable tensor of a unit: its value, its gradient (written by backward) and its initial
// values (type-rounded: He-uniform filters and dense weights, batch norm's gamma 1, biases and
// beta 0).
struct ConvParameter {
  std::string name;
  synapse::Session::Value value, gradient;  // the gradient f32 for batch norm's (the kernel's)
  std::vector<double> initial;
};

class ConvUnit {
 public:
  using Value = synapse::Session::Value;
  // Allocates the parameters and their gradients, named after `prefix`; writes their initial
  // values when `initialize` (a timing-only run need not).
  ConvUnit(synapse::Session& session, const ConvUnitConfig& config, const std::string& prefix,
           bool initialize);

  // Records the forward pass on x [C, W, H, N] and returns the output (a temporary of the
  // step). A classifier takes the labels (i32 [N]) and returns the per-sample losses.
  Value forward(Value x, Value labels = {});
  // Records the backward pass (after forward, in the same step) from the output's gradient (a
  // classifier from its mean loss, `dy` unused): every parameter's gradient, and the input's,
  // returned, when `input_gradient`.
  Value backward(Value dy, bool input_gradient);

  const std::vector<ConvParameter>& parameters() const { return params_; }
  // The unit's pass in double precision from the parameters' initial values, the input x and
  // the output's gradient dy (a classifier: the labels): "y" (a classifier's per-sample losses),
  // "dx" and each parameter's gradient as "d<name>". Independent of the device's arithmetic:
  // the convolutions by the MME's reference loops, the rest by their definitions (max pooling's
  // gradient to the first maximum of each window, as frameworks do).
  Tensors reference(const std::vector<double>& x, const std::vector<double>& dy) const;
  const ConvUnitConfig& config() const { return c_; }

 private:
  struct Conv {
    mme::ConvDesc desc;
    int weight = -1;  // index into params_
  };
  struct Norm {
    int gamma = -1, beta = -1;
  };
  Conv add_conv(const std::string& name, std::uint32_t c, std::uint32_t h, std::uint32_t w,
                std::uint32_t k, std::uint32_t window, std::uint32_t stride, std::uint32_t pad);
  Norm add_norm(const std::string& name, std::uint32_t channels);
  int add_param(const std::string& name, std::vector<std::uint32_t> shape,
                std::vector<double> initial, bool f32_gradient = false);
  Value tensor(const std::string& name, std::vector<std::uint32_t> shape);
  Value conv_forward(const std::string& name, const Conv& conv, Value x);
  Value conv_backward(const std::string& name, const Conv& conv, Value x, Value dy, bool dx);
  Value norm_forward(const std::string& name, const Norm& n, Value x, std::uint32_t channels,
                     std::uint64_t rows, Value* mean, Value* rstd);
  Value norm_backward(const std::string& name, const Norm& n, Value x, Value dy, Value mean,
                      Value rstd, std::uint32_t channels, std::uint64_t rows);
  Value relu(const std::string& name, Value x, std::vector<std::uint32_t> shape);
  Value relu_backward(const std::string& name, Value y, Value dy, std::vector<std::uint32_t> shape);
  Value add(const std::string& name, Value a, Value b, std::vector<std::uint32_t> shape);
  Value conv_block_forward(Value x);
  Value conv_block_backward(Value dy, bool input_gradient);
  Value bottleneck_forward(Value x);
  Value bottleneck_backward(Value dy, bool input_gradient);
  Value classifier_forward(Value x, Value labels);
  Value classifier_backward(bool input_gradient);

  synapse::Session& s_;
  ConvUnitConfig c_;
  std::string prefix_;
  std::vector<ConvParameter> params_;
  std::vector<Conv> convs_;  // conv block: 1; bottleneck: 3 and the projection's
  std::vector<Norm> norms_;
  std::vector<int> dense_w_, dense_b_;  // classifier
  std::map<std::string, Value> saved_;  // what forward keeps for backward, by name
  Value labels_, dloss_;
};

// A unit run on its own, as a training profile times it: `step(backward)` records one pass on
// a fixed input and output gradient (a classifier: labels) and ends the step. When `functional`,
// the input and output gradient are random, the parameters initialized and the results kept
// (results(), as ConvUnit::reference names them); otherwise nothing is written that a
// timing-only run does not need.
class ConvUnitStep {
 public:
  ConvUnitStep(synapse::Session& session, const ConvUnitConfig& config, bool functional,
               bool input_gradient = true);
  void step(bool backward = true);
  // The input and the output gradient (a classifier: the labels) the step runs on.
  const std::vector<double>& input() const { return x_values_; }
  const std::vector<double>& output_gradient() const { return dy_values_; }
  // The last step's results (functional only).
  Tensors results();
  ConvUnit& unit() { return unit_; }

 private:
  synapse::Session& s_;
  ConvUnit unit_;
  bool functional_, input_gradient_;
  synapse::Session::Value x_, dy_, labels_, y_, dx_;
  std::vector<double> x_values_, dy_values_;
};

// A whole network: its units chained on one batch, trained by SGD with momentum. A step is
// split in two, so that data-parallel replicas can average their gradients in between.
class ConvNet {
 public:
  // Allocates and initializes every unit's parameters (prefixed "u<i>"), their momenta, the
  // input and the labels.
  ConvNet(synapse::Session& session, std::vector<ConvUnitConfig> units);
  // Writes x [C, W, H, N] and the labels, runs forward and backward; returns the mean loss.
  // Every parameter's gradient is then on the device.
  double compute_gradients(const std::vector<double>& x, const std::vector<double>& labels);
  // Every parameter's update from its gradient, run.
  void update(double lr, double momentum);
  std::vector<const ConvParameter*> parameters() const;
  // The parameters' values as the device holds them, in parameters() order.
  std::vector<double> read_parameters();

 private:
  synapse::Session& s_;
  std::vector<std::unique_ptr<ConvUnit>> units_;
  std::vector<synapse::Session::Value> momenta_;  // by parameters()
  synapse::Session::Value x_, labels_, loss_;
};

// Synthetic MNIST-like data: 28x28 images of uniform pixels in [0, 1), labelled by a fixed
// random linear teacher (so that a net can learn them); batch `step` of `batch` samples,
// x [1, 28, 28, batch] and labels [batch]. The same seed and step give the same batch.
struct ImageBatch {
  std::vector<double> x, labels;
};
ImageBatch mnist_like_batch(std::uint32_t batch, int step, std::uint64_t seed, tpc::Dtype dtype);
// Samples [first, first + count) of a batch (N is the slowest dimension).
ImageBatch slice(const ImageBatch& b, std::uint32_t first, std::uint32_t count);

// The units of ResNet-50 v1.5 at a per-worker batch (224x224 images, 1000 classes): the stem,
// 16 bottlenecks in four stages (3, 4, 6, 3) and the classifier; 25,557,032 parameters.
std::vector<ConvUnitConfig> resnet50_units(std::uint32_t batch, tpc::Dtype dtype);
// The MNIST net of Graphcore's guide: a 3x3 convolution of 8 filters with ReLU and a 2x2 max
// pool on 28x28 images, then dense layers of 8 (ReLU) and 10; 10,994 parameters.
std::vector<ConvUnitConfig> mnist_units(std::uint32_t batch, tpc::Dtype dtype);

}  // namespace podsim::workloads
