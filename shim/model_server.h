// The model a client process talks to through the LD_PRELOAD shim, or a podsim server's clients:
// a modeled system whose first box's chips the driver probes and serves (each a device of its
// own, as the kernel would list them), in a thread of its own. Client threads hand it calls; each
// runs in a simulation thread of its own (kept for the next call), so a call that blocks (WAIT_CS)
// holds only its own thread. Between calls the simulation runs the activity due soon (within 1 ms
// of simulated time: the work just submitted) and stops at a longer gap; it crosses a gap (a
// timeout) while a call waits, after the other client threads have had as much wall-clock time
// as the gap (20 ms to 1 s) to make the call the waiter may be waiting for, and with no call
// under way once as much wall-clock time as the gap has passed. Between batches of calls it moves
// at least one step, so calls retried at once (EAGAIN) cannot hold simulated time still.
// Captures: the box's devices and the kernel's call semantics (results and errno) for any number
// of client threads (of one process, or of several through a server: remote_server.h).
#pragma once

#include <functional>
#include <memory>

#include "driver/device.h"
#include "hw/system/system_config.h"
#include "shim/process_memory.h"

namespace podsim::driver::shim {

class ModelServer {
 public:
  struct Setup {
    system::SystemConfig system;
    int devices = 1;          // the first box's first chips
    bool log_errors = false;  // the chips' error events on stderr as they happen
  };
  // Starts the model in a thread of its own; `setup` runs there first. A model that fails to
  // start (setup throws) answers every call with -EIO and says why on stderr once.
  explicit ModelServer(std::function<Setup()> setup);

  // The shim's server inside the client process, started at its first use. System:
  // $PODSIM_SYSTEM (a preset or a file; default hls1); devices: $PODSIM_DEVICES (default 1: a
  // program that opens "any device" twice expects the second open to fail on a one-card
  // machine); $PODSIM_SHIM_ERRORS logs errors.
  static ModelServer& instance();

  // What a call reaches besides its device: the host memory and the pool client pages are lent
  // to it from.
  struct Host {
    host::HostMemory& memory;
    LentPages& lent;
  };
  using Work = std::function<int(Device&, Host&)>;
  // Runs `work` on device `device` in the simulation and returns its result (-ENOENT for a
  // device the model does not have); any thread may call it.
  int run(int device, Work work);
  // How many devices the model serves (waits for it to start; 0 if it could not).
  int devices();

  struct Impl;

 private:
  Impl* impl_;  // never destroyed: the simulation lives until the process ends
};

}  // namespace podsim::driver::shim
