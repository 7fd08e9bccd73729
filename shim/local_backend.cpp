// The shim's model inside the client process (model_server.h): a mapped CB lives in the
// program's memory and is copied into the modeled host memory before a CS that names it
// (cb_mappings.h); MAP USERPTR lends the program's own pages (process_memory.h).
#include <sys/mman.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "drm/habanalabs_accel.h"
#include "shim/backend.h"
#include "shim/cb_mappings.h"
#include "shim/model_server.h"

namespace podsim::driver::shim {
namespace {

class LocalFile : public OpenFile {
 public:
  LocalFile(int device, std::unique_ptr<File> file) : device_(device), file_(std::move(file)) {}
  ~LocalFile() override {
    ModelServer::instance().run(device_, [this](Device&, ModelServer::Host&) {
      file_.reset();
      return 0;
    });
  }

  int ioctl(unsigned long request, void* arg) override {
    return ModelServer::instance().run(device_, [&](Device&, ModelServer::Host& host) {
      if (request == HL_IOCTL_CS && arg != nullptr) {
        ProcessMemory self(host.lent);  // the CS's chunks are this process's own memory
        std::lock_guard<std::mutex> guard(mutex_);
        cbs_.copy_named(*static_cast<const hl_cs_args*>(arg), self, host.memory.backing());
      }
      return file_->ioctl(request, arg);
    });
  }

  int mmap(std::uint64_t handle, std::size_t length, int prot, void*& at) override {
    std::uint64_t address = 0;
    const int rc = ModelServer::instance().run(
        device_, [&](Device&, ModelServer::Host&) { return file_->mmap(handle, length, address); });
    if (rc < 0) return rc;
    at = system_mmap(nullptr, length, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) return -errno;
    std::lock_guard<std::mutex> guard(mutex_);
    cbs_.add(handle, {static_cast<std::uint8_t*>(at), address, length});
    return 0;
  }

  int munmap(std::uint64_t handle) override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      cbs_.remove(handle);
    }
    return ModelServer::instance().run(
        device_, [&](Device&, ModelServer::Host&) { return file_->munmap(handle); });
  }

 private:
  int device_;
  std::unique_ptr<File> file_;
  std::mutex mutex_;
  CbMappings cbs_;
};

class LocalBackend : public Backend {
 public:
  int devices() override { return ModelServer::instance().devices(); }
  int pci_bus(int device) override {
    return ModelServer::instance().run(device,
                                       [](Device& d, ModelServer::Host&) { return d.pci().bus; });
  }
  int open(int device, bool control, std::shared_ptr<OpenFile>& file) override {
    std::unique_ptr<File> opened;
    const int rc = ModelServer::instance().run(
        device, [&](Device& d, ModelServer::Host&) { return d.open(control, opened); });
    if (rc == 0) file = std::make_shared<LocalFile>(device, std::move(opened));
    return rc;
  }
};

}  // namespace

Backend& local_backend() {
  static auto* b = new LocalBackend;  // never destroyed, as the model
  return *b;
}

}  // namespace podsim::driver::shim
