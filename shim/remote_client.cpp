// The shim as a podsim server's client ($PODSIM_SERVER: the server's socket). Each call takes a
// connection of its own from a pool (a call that blocks holds only its connection), so the
// server runs the process's threads' calls as it runs an in-process shim's. Ioctl arguments
// travel by value; what they point to the server reads and writes in this process
// (process_vm_readv/writev, allowed to the server by PR_SET_PTRACER). Memory the device must
// reach is shared: a mapped CB is a memory file both sides map, and MAP USERPTR lends the pages it
// names through the process's memory file of lent pages (LentPages: their contents copied, the
// same addresses). Ignores: huge pages the machine really gives (the shim turns MAP_HUGETLB into
// ordinary memory when the machine has none), fork.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "drm/habanalabs_accel.h"
#include "shim/backend.h"
#include "shim/remote_protocol.h"

namespace podsim::driver::shim {
namespace {

constexpr std::uint64_t kPage = 4096;
std::atomic<bool> pages_lent{false};

// The program's pages lent to the server: one memory file for the process, each page lent once
// at an offset of its own (its contents copied there, the file then mapped over it) and kept
// there while the program keeps the page, so that ranges mapped later that share pages with
// earlier ones (buffers from malloc) share them with the server too.
class LentPages {
 public:
  // The memory file's pieces that hold the pages of [address, address + size), lending those not
  // lent yet; -errno when a page is not the program's.
  int lend(std::uint64_t address, std::uint64_t size, std::vector<remote::LentPiece>& pieces,
           int& fd) {
    const std::uint64_t first = address / kPage * kPage;
    const std::uint64_t end = (address + size + kPage - 1) / kPage * kPage;
    std::lock_guard<std::mutex> guard(mutex_);
    if (fd_ < 0 && (fd_ = memfd_create("podsim-userptr", MFD_CLOEXEC)) < 0) return -ENOMEM;
    for (std::uint64_t at = first; at < end;) {
      auto next = runs_.upper_bound(at);
      if (next != runs_.begin()) {
        const remote::LentPiece& run = std::prev(next)->second;
        if (run.address + run.length > at) {
          at = run.address + run.length;
          continue;
        }
      }
      const std::uint64_t gap_end = next == runs_.end() ? end : std::min(end, next->first);
      if (const int rc = lend_run(at, gap_end); rc != 0) return rc;
      at = gap_end;
    }
    pieces.clear();
    for (auto it = std::prev(runs_.upper_bound(first)); it != runs_.end() && it->first < end;
         ++it) {
      const remote::LentPiece& run = it->second;
      const std::uint64_t from = std::max(first, run.address);
      const std::uint64_t to = std::min(end, run.address + run.length);
      const std::uint64_t offset = run.offset + (from - run.address);
      if (!pieces.empty() && pieces.back().address + pieces.back().length == from &&
          pieces.back().offset + pieces.back().length == offset) {
        pieces.back().length += to - from;
      } else {
        pieces.push_back({from, offset, to - from});
      }
    }
    fd = fd_;
    return 0;
  }

  // The program maps or unmaps [first, end): its pages there are no longer lent (their room in
  // the file is given back).
  void forget(std::uint64_t first, std::uint64_t end) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = runs_.upper_bound(first);
    if (it != runs_.begin()) --it;
    while (it != runs_.end() && it->first < end) {
      const remote::LentPiece run = it->second;
      const std::uint64_t run_end = run.address + run.length;
      if (run_end <= first) {
        ++it;
        continue;
      }
      it = runs_.erase(it);
      const std::uint64_t cut_from = std::max(first, run.address), cut_to = std::min(end, run_end);
      if (run.address < cut_from)
        runs_[run.address] = {run.address, run.offset, cut_from - run.address};
      if (cut_to < run_end) {
        runs_[cut_to] = {cut_to, run.offset + (cut_to - run.address), run_end - cut_to};
      }
      fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                static_cast<off_t>(run.offset + (cut_from - run.address)),
                static_cast<off_t>(cut_to - cut_from));
      it = runs_.lower_bound(cut_to);
    }
  }

 private:
  // Pages [first, end), none lent yet: to the end of the file, and the file over them.
  int lend_run(std::uint64_t first, std::uint64_t end) {
    const std::uint64_t length = end - first;
    std::vector<unsigned char> resident(length / kPage);
    void* at = reinterpret_cast<void*>(first);
    if (first == 0 || mincore(at, length, resident.data()) != 0) return -EFAULT;
    if (ftruncate(fd_, static_cast<off_t>(size_ + length)) != 0) return -ENOMEM;
    if (!copy_into_file(static_cast<const std::uint8_t*>(at), length) ||
        system_mmap(at, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_,
                    static_cast<long>(size_)) == MAP_FAILED) {
      return -EFAULT;
    }
    runs_[first] = {first, size_, length};
    size_ += length;
    pages_lent = true;
    return 0;
  }

  // The pages' contents to the file's end (pwrite moves at most 2 GiB a call).
  bool copy_into_file(const std::uint8_t* from, std::uint64_t length) {
    for (std::uint64_t done = 0; done < length;) {
      const ssize_t n = pwrite(fd_, from + done, length - done, static_cast<off_t>(size_ + done));
      if (n <= 0) return false;
      done += static_cast<std::uint64_t>(n);
    }
    return true;
  }

  std::mutex mutex_;
  int fd_ = -1;
  std::uint64_t size_ = 0;                           // the file's length
  std::map<std::uint64_t, remote::LentPiece> runs_;  // by address: pages contiguous in the file
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
    lent_.forget(first, first + length);
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
  LentPages& lent() { return lent_; }

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
  LentPages lent_;
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
  const std::uint32_t size = arg == nullptr ? 0 : static_cast<std::uint32_t>(_IOC_SIZE(request));
  // The argument, then for MAP USERPTR the pieces of the memory file its pages are in.
  std::vector<std::uint8_t> payload(static_cast<std::uint8_t*>(arg),
                                    static_cast<std::uint8_t*>(arg) + size);
  int fd = -1;
  std::vector<remote::LentPiece> pieces;
  if (request == HL_IOCTL_MEMORY && arg != nullptr) {
    const hl_mem_in& in = static_cast<hl_mem_args*>(arg)->in;
    if (in.op == HL_MEM_OP_MAP && (in.flags & HL_MEM_USERPTR) != 0 && in.map_host.mem_size != 0 &&
        in.map_host.mem_size <= remote::kMaxLentBytes &&
        server_.lent().lend(in.map_host.host_virt_addr, in.map_host.mem_size, pieces, fd) == 0 &&
        pieces.size() <= remote::kMaxPieces) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(pieces.data());
      payload.insert(payload.end(), p, p + pieces.size() * sizeof(remote::LentPiece));
      r.b = pieces.size();
    }
  }
  r.size = static_cast<std::uint32_t>(payload.size());
  remote::Reply reply;
  return server_.call(r, reply, payload.data(), r.b == 0 ? -1 : fd, arg, size);
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
