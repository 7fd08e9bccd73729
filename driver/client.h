// A thin user-space library over an open node's ioctls, as libhl-thunk is over the kernel's:
// each call checked, a failure thrown with the call and the errno named. For user-space models
// (the collectives) that talk to a device only through its uAPI.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/device.h"
#include "drm/habanalabs_accel.h"

namespace podsim::driver {

class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client {
 public:
  // `who` prefixes every error ("collectives: chip 3").
  Client(File& file, std::string who) : file_(file), who_(std::move(who)) {}

  struct Cb {
    std::uint64_t handle = 0, address = 0;  // address: where the mapping lies in host memory
    std::uint32_t size = 0;
  };
  // A driver command buffer of `bytes`, created and mapped.
  Cb create_cb(std::uint32_t bytes);
  void destroy_cb(const Cb& cb);
  // Pins and maps host memory [address, address + bytes) for the device; its device address.
  std::uint64_t map_host(std::uint64_t address, std::uint64_t bytes);
  // Submits one CS of `chunks`; its sequence number.
  std::uint64_t submit(const std::vector<hl_cs_chunk>& chunks);
  // Waits for CS `seq` up to `timeout_us`; WAIT_CS's status (HL_WAIT_CS_STATUS_*).
  std::uint32_t wait(std::uint64_t seq, std::uint64_t timeout_us);

  static hl_cs_chunk chunk(std::uint32_t queue, std::uint64_t cb, std::uint32_t bytes);

 private:
  void call(unsigned long request, void* arg, const char* what);

  File& file_;
  std::string who_;
};

}  // namespace podsim::driver
