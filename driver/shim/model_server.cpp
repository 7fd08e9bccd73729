#include "driver/shim/model_server.h"

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "collectives/system_file.h"
#include "drm/habanalabs_accel.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"

namespace podsim::driver::shim {
namespace {

// Host memory the driver allocates its buffers from, above what a test might use.
constexpr KernelMemory kKernelMemory{64ull << 30, 4ull << 30};

}  // namespace

struct ModelServer::Impl {
  struct Request {
    Work work;
    std::promise<int> result;
  };
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Request*> requests;
  bool failed = false;

  void serve();
  void fail_all(const std::string& why);
};

void ModelServer::Impl::fail_all(const std::string& why) {
  std::fprintf(stderr, "podsim shim: the model cannot run: %s\n", why.c_str());
  std::unique_lock<std::mutex> lock(mutex);
  failed = true;
  for (Request* r : requests) r->result.set_value(-EIO);
  requests.clear();
}

void ModelServer::Impl::serve() {
  try {
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
    const char* name = std::getenv("PODSIM_SYSTEM");
    const auto loaded = collectives::load_system_file(name && *name ? name : "hls1", {});
    system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                              system::ModelOptions{1, true});
    system::HostSide& host = model.host(0);
    std::unique_ptr<Device> device;
    host.cpu().run([&](host::HostCpu& cpu) {
      const PciFunction pci = probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
      device = std::make_unique<Device>(
          cpu, host.memory(), pci,
          DeviceProperties::of(model.chip(0).config(), HL_SERVER_GAUDI_HLS1), kKernelMemory);
    });
    sc_core::sc_start();
    if (!device) throw std::runtime_error("the device was not probed");
    for (;;) {
      std::deque<Request*> batch;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return !requests.empty(); });
        batch.swap(requests);
      }
      for (Request* r : batch) {
        host.cpu().run([&device, &host, r](host::HostCpu&) {
          r->result.set_value(r->work(*device, host.memory()));
        });
      }
      sc_core::sc_start();
    }
  } catch (const std::exception& e) {
    fail_all(e.what());
  }
}

ModelServer::ModelServer() : impl_(new Impl) {
  std::thread([impl = impl_] { impl->serve(); }).detach();
}

ModelServer& ModelServer::instance() {
  static ModelServer* server = new ModelServer;
  return *server;
}

int ModelServer::run(Work work) {
  Impl::Request request{std::move(work), {}};
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
