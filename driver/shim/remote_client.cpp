// The shim as a podsim server's client ($PODSIM_SERVER: the server's socket). Each call takes a
// connection of its own from a pool (a call that blocks holds only its connection), so the
// server runs the process's threads' calls as it runs an in-process shim's. Ioctl arguments
// travel by value; what they point to the server reads and writes in this process
// (process_vm_readv/writev, allowed to the server by PR_SET_PTRACER). Memory the device must
// reach is shared: a mapped CB is a memory file both sides map, and MAP USERPTR turns the pages
// it names into a memory file (their contents copied, the same addresses) lent to the server.
// Ignores: pages lent that the program then maps over only in part (the server keeps the old
// pages for the part), huge pages the machine really gives (the shim turns MAP_HUGETLB into
// ordinary memory when the machine has none).
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "driver/shim/backend.h"
#include "driver/shim/remote_protocol.h"
#include "drm/habanalabs_accel.h"

namespace podsim::driver::shim {
namespace {

constexpr std::uint64_t kPage = 4096;
std::atomic<bool> pages_lent{false};

// The program's pages lent to the server as memory files, by their first address.
class LentRegions {
 public:
  // A memory file holding [address, address + size) and the address its offset 0 is at; -errno
  // when the range is not the program's.
  int lend(std::uint64_t address, std::uint64_t size, int& fd, std::uint64_t& base) {
    const std::uint64_t first = address / kPage * kPage;
    const std::uint64_t end = (address + size + kPage - 1) / kPage * kPage;
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = regions_.upper_bound(first);
    if (it != regions_.begin() && std::prev(it)->second.end >= end) {
      fd = std::prev(it)->second.fd;
      base = std::prev(it)->first;
      return 0;
    }
    drop(first, end);
    std::vector<unsigned char> resident((end - first) / kPage);
    void* at = reinterpret_cast<void*>(first);
    if (first == 0 || mincore(at, end - first, resident.data()) != 0) return -EFAULT;
    fd = memfd_create("podsim-userptr", MFD_CLOEXEC);
    if (fd < 0) return -ENOMEM;
    if (pwrite(fd, at, end - first, 0) != static_cast<ssize_t>(end - first) ||
        system_mmap(at, end - first, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
            MAP_FAILED) {
      close(fd);
      return -EFAULT;
    }
    regions_[first] = Region{end, fd};
    pages_lent = true;
    base = first;
    return 0;
  }

  // The program maps or unmaps [first, end): the regions there are no longer its memory files.
  void drop(std::uint64_t first, std::uint64_t end) {
    for (auto it = regions_.begin(); it != regions_.end();) {
      if (it->first < end && it->second.end > first) {
        close(it->second.fd);
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void changed(std::uint64_t first, std::uint64_t end) {
    std::lock_guard<std::mutex> guard(mutex_);
    drop(first, end);
  }

 private:
  struct Region {
    std::uint64_t end;
    int fd;
  };
  std::mutex mutex_;
  std::map<std::uint64_t, Region> regions_;
};

class RemoteBackend;

class RemoteFile : public OpenFile {
 public:
  RemoteFile(RemoteBackend& server, int device, int id)
      : server_(server), device_(device), id_(id) {}
  ~RemoteFile() override;
  int ioctl(unsigned long request, void* arg) override;
  int mmap(std::uint64_t handle, std::size_t length, int prot, void*& at) override;
  int munmap(std::uint64_t handle) override;

 private:
  RemoteBackend& server_;
  int device_, id_;
};

class RemoteBackend : public Backend {
 public:
  explicit RemoteBackend(std::string path) : path_(std::move(path)) {}

  int devices() override {
    std::call_once(hello_, [this] {
      remote::Reply reply;
      if (call({remote::Op::kHello}, reply) == 0) devices_ = static_cast<int>(reply.value);
    });
    return devices_;
  }
  int pci_bus(int device) override {
    remote::Request r{remote::Op::kPciBus};
    r.device = device;
    remote::Reply reply;
    return call(r, reply);
  }
  int open(int device, bool control, std::shared_ptr<OpenFile>& file) override {
    remote::Request r{remote::Op::kOpen};
    r.device = device;
    r.a = control ? 1 : 0;
    remote::Reply reply;
    const int rc = call(r, reply);
    if (rc >= 0) file = std::make_shared<RemoteFile>(*this, device, rc);
    return rc < 0 ? rc : 0;
  }
  void address_space_changed(void* address, std::size_t length) override {
    const auto first = reinterpret_cast<std::uint64_t>(address);
    lent_.changed(first, first + length);
  }

  // One call: the request (with `payload` and the descriptor `fd` if not -1) and its reply, whose
  // payload lands in `out`. The reply's rc, or -EIO when the server cannot be reached.
  int call(const remote::Request& request, remote::Reply& reply, const void* payload = nullptr,
           int fd = -1, void* out = nullptr, std::size_t capacity = 0) {
    const int socket = take();
    if (socket < 0) return -EIO;
    if (!remote::send_message(socket, &request, sizeof request, payload, request.size, fd) ||
        !remote::receive_reply(socket, reply, out, capacity)) {
      close(socket);
      complain("the server closed the connection");
      return -EIO;
    }
    give_back(socket);
    return static_cast<int>(reply.rc);
  }
  LentRegions& lent() { return lent_; }

 private:
  int take() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!idle_.empty()) {
        const int s = idle_.back();
        idle_.pop_back();
        return s;
      }
    }
    const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
    if (s < 0 || path_.size() >= sizeof address.sun_path ||
        connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      complain(std::strerror(errno));
      if (s >= 0) close(s);
      return -1;
    }
    // The server reads and writes what ioctl arguments point to in this process.
    ucred peer{};
    socklen_t size = sizeof peer;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0) {
      prctl(PR_SET_PTRACER, static_cast<unsigned long>(peer.pid), 0, 0, 0);
    }
    return s;
  }
  void give_back(int socket) {
    std::lock_guard<std::mutex> guard(mutex_);
    idle_.push_back(socket);
  }
  void complain(const std::string& why) {
    static std::once_flag once;
    std::call_once(once, [&] {
      std::fprintf(stderr, "podsim shim: the podsim server at %s: %s\n", path_.c_str(),
                   why.c_str());
    });
  }

  std::string path_;
  std::mutex mutex_;
  std::vector<int> idle_;
  std::once_flag hello_;
  int devices_ = 0;
  LentRegions lent_;
};

RemoteFile::~RemoteFile() {
  remote::Request r{remote::Op::kClose};
  r.device = device_;
  r.file = id_;
  remote::Reply reply;
  server_.call(r, reply);
}

int RemoteFile::ioctl(unsigned long request, void* arg) {
  remote::Request r{remote::Op::kIoctl};
  r.device = device_;
  r.file = id_;
  r.a = request;
  r.size = arg == nullptr ? 0 : static_cast<std::uint32_t>(_IOC_SIZE(request));
  int fd = -1;
  if (request == HL_IOCTL_MEMORY && arg != nullptr) {
    const hl_mem_in& in = static_cast<hl_mem_args*>(arg)->in;
    if (in.op == HL_MEM_OP_MAP && (in.flags & HL_MEM_USERPTR) != 0 && in.map_host.mem_size != 0) {
      server_.lent().lend(in.map_host.host_virt_addr, in.map_host.mem_size, fd, r.b);
    }
  }
  remote::Reply reply;
  return server_.call(r, reply, arg, fd, arg, r.size);
}

int RemoteFile::mmap(std::uint64_t handle, std::size_t length, int prot, void*& at) {
  const int fd = memfd_create("podsim-cb", MFD_CLOEXEC);
  if (fd < 0) return -ENOMEM;
  if (ftruncate(fd, static_cast<off_t>(length)) != 0 ||
      (at = system_mmap(nullptr, length, prot, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    close(fd);
    return -ENOMEM;
  }
  remote::Request r{remote::Op::kMmap};
  r.device = device_;
  r.file = id_;
  r.a = handle;
  r.b = length;
  remote::Reply reply;
  const int rc = server_.call(r, reply, nullptr, fd);
  close(fd);
  if (rc < 0) system_munmap(at, length);
  return rc < 0 ? rc : 0;
}

int RemoteFile::munmap(std::uint64_t handle) {
  remote::Request r{remote::Op::kMunmap};
  r.device = device_;
  r.file = id_;
  r.a = handle;
  remote::Reply reply;
  return server_.call(r, reply);
}

}  // namespace

bool any_pages_lent() { return pages_lent.load(std::memory_order_relaxed); }

Backend& remote_backend(const char* socket_path) {
  static auto* b = new RemoteBackend(socket_path);  // never destroyed, as the local model
  return *b;
}

}  // namespace podsim::driver::shim
