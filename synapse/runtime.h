// The runtime in SynapseAI's shape: a device acquired through the driver's uAPI (the calls an
// application makes to the kernel, driver/device.h), host memory pinned and mapped for the
// device, device memory, streams, events, copies and recipe launches. Nothing here reaches the
// model except through the driver: data moves by DMA command submissions, recipes run as CSs of
// engine jobs whose command buffers the runtime writes into device memory.
// A launch patches the recipe's relocations with the section addresses (program, workspace,
// persistent tensors), writes one command buffer per engine queue (each stage's waits as
// monitor + fence, its registers, its start) and a completion job on the stream's host-facing
// queue that waits for the last stage of each engine class and clears the recipe's sync objects.
// Captures: stream order, events with the device's completion times, recipes cached on the
// device by graph signature and tensor addresses. Ignores: the host CPU's time (compiling,
// patching and writing command buffers cost no simulated time) and overlap between
// submissions: a stream waits for its previous work, and one recipe runs on a device at a time
// (recipes share the user sync objects), before the next is submitted.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/range_allocator.h"
#include "driver/device.h"
#include "hw/chip/resources.h"
#include "hw/host/host_memory.h"
#include "synapse/compiler.h"
#include "synapse/recipe.h"

namespace podsim::synapse {

class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Host memory the application owns (host physical addresses in the in-process model).
struct HostRegion {
  std::uint64_t base = 0, size = 0;
};

enum class StreamKind : std::uint8_t {
  kCompute,
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kCollective
};

using StreamId = int;

// A point in a stream's work: complete when the stream's CSs up to it are.
struct Event {
  StreamId stream = -1;
  std::uint64_t seq = 0;  // the CS it follows, 0 for none
  core::TimePs recorded = 0;
};

// A launch: its CS's sequence, and what it had to upload first (nothing once cached).
struct LaunchInfo {
  std::uint64_t seq = 0;
  bool uploaded_program = false, uploaded_command_buffers = false;
};

class Runtime {
 public:
  // Opens `device`'s compute node (exclusive, as a process acquiring the device). Throws
  // RuntimeError when the driver refuses, naming its errno. `share`: the runtime's part of the
  // chip (its preset's chip.resources.runtime): the engine QMAN stream it queues recipes on and
  // the end of its sync objects and monitors, whose start the driver reports.
  Runtime(driver::Device& device, host::HostMemory& memory, HostRegion region,
          const chip::ResourceShare& share = chip::default_resources().runtime);
  // Over a compute node the application already holds open, shared with its other libraries (as
  // HCCL shares SynapseAI's device); the file stays the caller's.
  Runtime(driver::File& file, host::HostMemory& memory, HostRegion region,
          const chip::ResourceShare& share = chip::default_resources().runtime);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // What to compile for: the engines and sync objects the driver reports.
  const Target& target() const { return target_; }
  const driver::QueueMap& map() const { return driver::QueueMap::of(target_.device_id); }

  // Host memory pinned and mapped for the device's DMA; host_write/host_read are the
  // application's own loads and stores.
  std::uint64_t host_malloc(std::uint64_t bytes);
  void host_free(std::uint64_t address);
  void host_write(std::uint64_t address, const void* data, std::uint64_t bytes);
  void host_read(std::uint64_t address, void* data, std::uint64_t bytes);
  // Device memory (HBM), accounted with the driver.
  std::uint64_t device_malloc(std::uint64_t bytes);
  void device_free(std::uint64_t address);

  StreamId create_stream(StreamKind kind);
  // Copies on a copy stream: host to device, device to host or device to device, by its kind.
  // `host` addresses must lie in one host_malloc'd buffer.
  void memcpy(StreamId stream, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes);
  // Runs `recipe` on a compute stream: `tensors` the device addresses of its persistent tensors
  // in the recipe's order, `workspace` at least recipe.workspace_bytes (0 when none needed).
  LaunchInfo launch(StreamId stream, const Recipe& recipe,
                    const std::vector<std::uint64_t>& tensors, std::uint64_t workspace);
  // What launch() uploads before it submits (the program, the command buffers for these
  // addresses), and nothing else: a later launch with the same arguments starts as one that
  // follows a launch of its own. Returns when the uploads are on the device, with what had to
  // be uploaded (seq 0).
  LaunchInfo prepare(const Recipe& recipe, const std::vector<std::uint64_t>& tensors,
                     std::uint64_t workspace);

  Event record(StreamId stream);
  // Work submitted to `stream` from now on starts after `event`.
  void wait(StreamId stream, const Event& event);
  void synchronize(const Event& event);
  void synchronize(StreamId stream);
  void synchronize_device();
  // Simulated time between two completed events, in picoseconds.
  core::TimePs elapsed(const Event& from, const Event& to);

 private:
  struct Stream {
    StreamKind kind = StreamKind::kCompute;
    std::uint32_t queue = 0;  // the host-facing queue its CSs complete on
    std::uint64_t cb_handle = 0, cb_address = 0;
    std::uint64_t last = 0;
    std::vector<std::uint64_t> after;  // CSs its next submission waits for
  };
  struct HostBuffer {
    std::uint64_t bytes = 0, va = 0;
  };
  // An internal job's command buffer: its queue, device address and size.
  struct QueueBuffer {
    std::uint32_t queue;
    std::uint64_t address;
    std::uint32_t bytes;
  };
  struct Uploaded {
    std::uint64_t address = 0, bytes = 0;
    std::vector<QueueBuffer> buffers;
  };

  int call(unsigned long request, void* arg, const char* what);
  Stream make_stream(StreamKind kind);
  Stream& stream(StreamId id);
  std::uint64_t device_va(std::uint64_t host, std::uint64_t bytes);
  // Submits `packets` on stream `s`'s queue, with `internal` jobs beside it; returns the sequence.
  std::uint64_t submit(Stream& s, const std::vector<std::uint8_t>& packets,
                       const std::vector<QueueBuffer>& internal = {});
  void before_submit(Stream& s);
  void wait_seq(std::uint64_t seq);
  void upload(std::uint64_t device, const std::vector<std::uint8_t>& bytes);
  std::uint64_t program(const Recipe& recipe, bool& uploaded);
  const Uploaded& command_buffers(const Recipe& recipe, const std::vector<std::uint64_t>& bases,
                                  bool& uploaded);
  // The program and the command buffers of a launch, the recipe checked against the device and
  // its arguments, uploaded when not cached.
  const Uploaded& uploaded(const Recipe& recipe, const std::vector<std::uint64_t>& tensors,
                           std::uint64_t workspace, LaunchInfo& info);
  std::vector<std::uint8_t> completion(const Recipe& recipe, std::uint32_t monitor,
                                       std::uint32_t queue) const;

  // Queries the device and sets up the allocators and the upload stream, once file_ is open.
  void set_up(const chip::ResourceShare& share);

  host::HostMemory& memory_;
  std::unique_ptr<driver::File> owned_file_;  // when the runtime opened the device itself
  driver::File* file_ = nullptr;
  Target target_;
  std::uint64_t sram_base_ = 0;  // where the runtime's part of the SRAM starts
  core::RangeAllocator host_, dram_;
  std::map<std::uint64_t, HostBuffer> host_buffers_;       // by host address
  std::map<std::uint64_t, std::uint64_t> device_buffers_;  // address -> bytes
  std::uint64_t staging_ = 0, staging_bytes_ = 0;
  std::vector<Stream> streams_;
  Stream uploads_;  // the runtime's own: programs and command buffers
  std::uint64_t last_launch_ = 0;
  // By recipe fingerprint: where its program is, and its size.
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> programs_;
  std::map<std::string, Uploaded> command_buffers_;  // by recipe fingerprint and addresses
  std::map<std::uint64_t, core::TimePs> completed_;  // seq -> completion time
};

}  // namespace podsim::synapse
