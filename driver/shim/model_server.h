// The model a client process talks to through the LD_PRELOAD shim: a modeled system whose first
// chip the driver probes and serves, in a thread of the process's own. Client threads hand it
// work one call at a time; each runs as a program of the host CPU inside the simulation, which
// then runs until nothing is left to do, so a blocking wait advances simulated time to its
// completion or its timeout.
// Captures: one device and the kernel's call semantics (results and errno) for any number of
// client threads. Ignores (for now): several devices or processes, and the grace a wait should
// give other client threads before simulated time moves on (docs/driver.md).
#pragma once

#include <functional>
#include <memory>

#include "driver/device.h"

namespace podsim::driver::shim {

class ModelServer {
 public:
  // The process's server, started at its first use. System: $PODSIM_SYSTEM (a preset or a
  // file; default hls1). A model that fails to start answers every call with -EIO and says why
  // on stderr once.
  static ModelServer& instance();

  using Work = std::function<int(Device&, host::HostMemory&)>;
  // Runs `work` in the simulation and returns its result; any thread may call it.
  int run(Work work);

  struct Impl;

 private:
  ModelServer();
  Impl* impl_;  // never destroyed: the simulation lives until the process ends
};

}  // namespace podsim::driver::shim
