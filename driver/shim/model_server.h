// The model a client process talks to through the LD_PRELOAD shim: a modeled system whose first
// box's chips the driver probes and serves (each a device of its own, as the kernel would list
// them: $PODSIM_DEVICES of them, default 1), in a thread of the process's own. Client threads
// hand it calls; each runs in a simulation thread of its own (kept for the next call), so a call
// that blocks (WAIT_CS) holds only its own thread. Between calls the simulation runs the activity
// due soon (within 1 ms of simulated time: the work just submitted) and stops at a longer gap; it
// crosses a gap (a timeout) only while a call waits, and only after the other client threads
// have had as much wall-clock time as the gap (20 ms to 1 s) to make the call the waiter may be
// waiting for.
// Captures: the box's devices and the kernel's call semantics (results and errno) for any number
// of client threads. Ignores (for now): several processes (docs/driver.md).
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
  // Runs `work` on device `device` in the simulation and returns its result (-ENOENT for a
  // device the model does not have); any thread may call it.
  int run(int device, Work work);
  // How many devices the model serves (waits for it to start; 0 if it could not).
  int devices();

  struct Impl;

 private:
  ModelServer();
  Impl* impl_;  // never destroyed: the simulation lives until the process ends
};

}  // namespace podsim::driver::shim
