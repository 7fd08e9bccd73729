#include "shim/model_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectives/system_file.h"
#include "drm/habanalabs_accel.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"
#include "shim/process_memory.h"

namespace podsim::driver::shim {
namespace {

// Host memory the driver allocates its buffers from (4 GiB per device), above what a test might
// use, and where the client's pages appear while a device maps them.
constexpr std::uint64_t kKernelFirst = 64ull << 30, kKernelPerDevice = 4ull << 30;
constexpr int kMaxDevices = 16;  // what fits below the lent range
constexpr std::uint64_t kLentFirst = 128ull << 30, kLentSize = 256ull << 30;

// $PODSIM_DEVICES (at most the box's chips), or one.
int device_count(int box_chips) {
  const char* text = std::getenv("PODSIM_DEVICES");
  int n = 1;
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*end != '\0' || v < 1 || v > box_chips) {
      throw std::invalid_argument("PODSIM_DEVICES=" + std::string(text) + ": 1 to " +
                                  std::to_string(box_chips) + " (the box's chips)");
    }
    n = static_cast<int>(v);
  }
  return n;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && *v != '0';
}

// The chip's error events since the last report, on stderr ($PODSIM_SHIM_ERRORS): why a
// submission a program waits for never completes.
void report_errors(chip::Chip& chip, std::uint64_t& reported) {
  const std::uint64_t count = chip.error_count();
  const auto& kept = chip.errors();
  const std::uint64_t fresh = std::min<std::uint64_t>(count - reported, kept.size());
  for (auto it = kept.end() - static_cast<std::ptrdiff_t>(fresh); it != kept.end(); ++it) {
    std::fprintf(stderr, "podsim: %.3f us %s %s at %#llx: %s\n", it->time_ps / 1e6,
                 it->block.c_str(), core::to_string(it->kind),
                 static_cast<unsigned long long>(it->address), it->detail.c_str());
  }
  reported = count;
}

}  // namespace

// How far ahead of its clients the simulation runs on its own: activity due within this much
// simulated time is run at once. A longer gap (a wait's or a fence's timeout, a CS deadline) is
// crossed only while a client waits in a call, and only after the clients have had as much
// wall-clock time as the gap (at least kMinGrace, at most kMaxGrace) to make another call,
// since another thread's next call may be what the wait waits for.
const sc_core::sc_time kNear(1, sc_core::SC_MS);
constexpr std::chrono::microseconds kMinGrace(20000), kMaxGrace(1000000);

std::chrono::microseconds grace(const sc_core::sc_time& gap) {
  const auto us = std::chrono::microseconds(static_cast<std::int64_t>(gap.to_seconds() * 1e6));
  return std::clamp(us, kMinGrace, kMaxGrace);
}

struct ModelServer::Impl {
  struct Request {
    int device;
    Work work;
    std::promise<int> result;
  };
  // A simulation thread that runs one request at a time; one per request under way (a blocked
  // wait holds its worker), reused after.
  struct Worker {
    sc_core::sc_event go;
    Request* request = nullptr;
  };
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Request*> requests;
  bool failed = false;
  std::promise<int> started;  // the number of devices, once probed (0: the model failed)
  std::shared_future<int> devices = started.get_future().share();
  // Simulation side, touched by the model thread only.
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker*> idle;
  std::size_t in_flight = 0;
  // The next activity the simulation last stopped short of with no call under way, since when
  // (simulated and wall-clock time): wait_for_calls.
  sc_core::sc_time stopped_short_of, stopped_at;
  std::chrono::steady_clock::time_point stopped_since;

  std::function<Setup()> setup;
  void serve();
  void fail_all(const std::string& why);
  bool take(std::deque<Request*>& batch, bool block);
  void wait_for_calls(std::deque<Request*>& batch);
  void assign(Request* request, std::vector<std::unique_ptr<Device>>& devices, Host& host);
  void advance();
};

void ModelServer::Impl::fail_all(const std::string& why) {
  std::fprintf(stderr, "podsim shim: the model cannot run: %s\n", why.c_str());
  std::unique_lock<std::mutex> lock(mutex);
  failed = true;
  for (Request* r : requests) r->result.set_value(-EIO);
  requests.clear();
  try {
    started.set_value(0);
  } catch (const std::future_error&) {
    // It had started: the devices' count stands.
  }
}

// The requests made since the last take; waits for one when `block`.
bool ModelServer::Impl::take(std::deque<Request*>& batch, bool block) {
  std::unique_lock<std::mutex> lock(mutex);
  if (block) wake.wait(lock, [this] { return !requests.empty(); });
  batch.clear();
  batch.swap(requests);
  return !batch.empty();
}

// With no call under way: waits for one, and meanwhile crosses to the simulation's next activity
// once as much wall-clock time has passed as lay between it and the time the simulation first
// stopped short of it: a client polling the device between sleeps (for a CS's timeout, for the
// end of the reset that follows) sees it go on, never faster than real time. Calls that leave
// the next activity where it was (the polls) do not restart that clock.
void ModelServer::Impl::wait_for_calls(std::deque<Request*>& batch) {
  for (;;) {
    if (!sc_core::sc_pending_activity()) {
      take(batch, true);
      return;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    const sc_core::sc_time next = now + sc_core::sc_time_to_pending_activity();
    if (next != stopped_short_of) {
      stopped_short_of = next;
      stopped_at = now;
      stopped_since = std::chrono::steady_clock::now();
    }
    const auto due = stopped_since + std::max(std::chrono::microseconds(static_cast<std::int64_t>(
                                                  (next - stopped_at).to_seconds() * 1e6)),
                                              kMinGrace);
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (wake.wait_until(lock, due, [this] { return !requests.empty(); })) {
        batch.clear();
        batch.swap(requests);
        return;
      }
    }
    sc_core::sc_start(next - now);
    advance();
  }
}

void ModelServer::Impl::assign(Request* request, std::vector<std::unique_ptr<Device>>& devices,
                               Host& host) {
  if (request->device < 0 || static_cast<std::size_t>(request->device) >= devices.size()) {
    request->result.set_value(-ENOENT);
    return;
  }
  ++in_flight;
  Worker* worker = nullptr;
  if (idle.empty()) {
    workers.push_back(std::make_unique<Worker>());
    worker = workers.back().get();
    sc_core::sc_spawn([this, worker, &devices, &host] {
      for (;;) {
        while (worker->request == nullptr) sc_core::wait(worker->go);
        Request* r = worker->request;
        worker->request = nullptr;
        const int rc = r->work(*devices[static_cast<std::size_t>(r->device)], host);
        idle.push_back(worker);
        --in_flight;
        r->result.set_value(rc);
      }
    });
  } else {
    worker = idle.back();
    idle.pop_back();
  }
  worker->request = request;
  worker->go.notify(sc_core::SC_ZERO_TIME);
}

// Runs the simulation while its next activity is near; at a gap it stops if no call is under
// way, or gives other client threads their grace before crossing it. Returns when a call has come
// in (once simulated time has moved at least once, so that a client retrying a call that failed
// for now, such as a CS on a full queue, cannot hold it still) or nothing more is to be done
// without one.
void ModelServer::Impl::advance() {
  for (bool moved = false;;) {
    bool asked = false;
    {
      std::unique_lock<std::mutex> lock(mutex);
      asked = !requests.empty();
    }
    if (asked && moved) return;
    if (!sc_core::sc_pending_activity()) return;
    const sc_core::sc_time next = sc_core::sc_time_to_pending_activity();
    if (next > kNear) {
      if (asked || in_flight == 0) return;
      std::unique_lock<std::mutex> lock(mutex);
      if (wake.wait_for(lock, grace(next), [this] { return !requests.empty(); })) return;
    }
    sc_core::sc_start(next);
    moved = moved || next > sc_core::SC_ZERO_TIME;
  }
}

void ModelServer::Impl::serve() {
  try {
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
    const Setup s = setup();
    if (s.devices < 1 || s.devices > std::min(s.system.box.chips, kMaxDevices)) {
      throw std::invalid_argument(fmt::format("{} devices: 1 to {} (the box's chips, at most {})",
                                              s.devices, s.system.box.chips, kMaxDevices));
    }
    system::SystemModel model("system", s.system, system::build_topology(s.system),
                              system::ModelOptions{1, true});
    system::HostSide& host = model.host(0);
    const int count = s.devices;
    std::vector<std::unique_ptr<Device>> devices;
    LentPages lent_pages(host.memory(), kLentFirst, kLentSize);
    ProcessMemory lent(lent_pages);
    Host reach{host.memory(), lent_pages};
    host.cpu().run([&](host::HostCpu& cpu) {
      for (int i = 0; i < count; ++i) {
        const PciFunction pci = probe(cpu, host.bus(i), {host.window_base(i), host.window_size()});
        const KernelMemory kernel{kKernelFirst + kKernelPerDevice * static_cast<unsigned>(i),
                                  kKernelPerDevice};
        devices.push_back(std::make_unique<Device>(
            cpu, host.memory(), pci, DeviceProperties::of(model.chip(i).config()), kernel));
      }
    });
    sc_core::sc_start();
    if (devices.size() != static_cast<std::size_t>(count))
      throw std::runtime_error("the devices were not probed");
    for (auto& d : devices) d->set_user_memory(lent);
    started.set_value(count);
    const bool log_errors = s.log_errors;
    std::vector<std::uint64_t> reported(static_cast<std::size_t>(count), 0);
    for (;;) {
      std::deque<Request*> batch;
      wait_for_calls(batch);
      do {
        for (Request* r : batch) assign(r, devices, reach);
        advance();
        if (log_errors) {
          for (int i = 0; i < count; ++i) report_errors(model.chip(i), reported[i]);
        }
      } while (take(batch, false));
    }
  } catch (const std::exception& e) {
    fail_all(e.what());
  }
}

ModelServer::ModelServer(std::function<Setup()> setup) : impl_(new Impl) {
  impl_->setup = std::move(setup);
  std::thread([impl = impl_] { impl->serve(); }).detach();
}

ModelServer& ModelServer::instance() {
  static ModelServer* server = new ModelServer([] {
    const char* name = std::getenv("PODSIM_SYSTEM");
    Setup s;
    s.system = collectives::load_system_file(name && *name ? name : "hls1", {}).config;
    s.devices = device_count(s.system.box.chips);
    s.log_errors = env_flag("PODSIM_SHIM_ERRORS");
    return s;
  });
  return *server;
}

int ModelServer::devices() { return impl_->devices.get(); }

int ModelServer::run(int device, Work work) {
  Impl::Request request{device, std::move(work), {}};
  std::future<int> result = request.result.get_future();
  {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    if (impl_->failed) return -EIO;
    impl_->requests.push_back(&request);
  }
  impl_->wake.notify_one();
  return result.get();
}

}  // namespace podsim::driver::shim
