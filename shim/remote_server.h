// A podsim server: one simulation (a ModelServer's devices) that several client processes share,
// each a program under the shim with $PODSIM_SERVER naming the server's socket (remote_client.cpp)
// — the ranks of a job on one box, each on its own device, in one simulated time.
// Captures: each client process's own files and contexts (a process is known by the kernel's
// credentials of its connections: it can name only the files it opened, and the device reaches
// only memory it lent); the kernel's copies of ioctl arguments from and to the process; a client
// that goes away has its files closed, as the kernel does at exit. Only the server's own user can
// connect: the socket is made 0600 and a peer of another user is refused.
// Ignores: clients of other users, a client that forks (the child is another process).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "shim/model_server.h"

namespace podsim::driver::shim {

class RemoteServer {
 public:
  // Listens on `socket_path`; throws std::runtime_error (naming the path) when it cannot: the
  // path exists, or its folder does not.
  RemoteServer(ModelServer& model, std::string socket_path);
  ~RemoteServer();  // removes the socket
  RemoteServer(const RemoteServer&) = delete;
  RemoteServer& operator=(const RemoteServer&) = delete;

  // Serves connections until stop() (from a signal handler too).
  void run();
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace podsim::driver::shim
