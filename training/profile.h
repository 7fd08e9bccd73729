// A training step's compute on one chip, measured by running it: each distinct layer shape of a
// model (model.h) built as Synapse graphs (workloads/) and launched through the runtime and the
// driver on the modeled chip, once forward alone and once forward and backward (after one small
// step on every engine, and with the recipes compiled and uploaded but not run), and the
// optimizer's update of the layer's parameters (fp32 master weights: the bf16 gradient cast up, the
// model's optimizer (model.h), the weights cast down [T7]). The replicas of one box are measured at
// once, since they share the box's host, its PCIe tree and its CPU (host-side operations,
// submissions); data-parallel replicas do the same work, so one box's profile stands for every
// box's (a test holds this against running two boxes). Captures: the device time of each launch as
// the chip's engines, queues and memory give it. Ignores: the host's time between launches (a
// lazy-mode framework queues the next step's graphs ahead), the embedding lookup (model.h).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <systemc>
#include <vector>

#include "synapse/runtime.h"
#include "training/model.h"
#include "training/timeline.h"

namespace podsim::training {

struct StepProfile {
  std::string chip;                 // the chip it was measured on
  int replicas = 1;                 // measured at once on this many chips of one box
  std::string optimizer;            // the optimizer its updates ran (empty: not recorded)
  std::vector<std::string> keys;    // per shape: LayerShape::key()
  std::vector<LayerTiming> shapes;  // per shape of the model, in its order

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming `where` and what is missing or wrong.
  static StepProfile from_json(const nlohmann::json& j, const std::string& where);
  // Throws std::invalid_argument when this profile was not measured for `model`'s shapes.
  void check_matches(const Model& model, const std::string& where) const;
};

// The profile of replicas measured at once: per shape, the slowest replica's times (a
// synchronous step waits for it). Throws std::invalid_argument on none or unlike profiles.
StepProfile slowest_replica(const std::vector<StepProfile>& replicas);

// Lines the replicas measured at once up before each launch, as synchronous data-parallel steps
// start together: the replicas then contend for the box's host the same way every time.
class ReplicaBarrier {
 public:
  explicit ReplicaBarrier(int replicas) : replicas_(replicas) {}
  // From each replica's program: returns once every replica has arrived.
  void arrive_and_wait();

 private:
  int replicas_, arrived_ = 0;
  sc_core::sc_event all_arrived_;
};

// From a host CPU's program (SystemC thread): runs each distinct shape of `model` on the chip
// behind `runtime` (named `chip` in the profile); `progress(done, total)` after each. With a
// barrier, every launch waits for the other replicas' same launch.
StepProfile measure_profile(synapse::Runtime& runtime, const Model& model, const std::string& chip,
                            const std::function<void(int, int)>& progress = {},
                            ReplicaBarrier* barrier = nullptr);

}  // namespace podsim::training
