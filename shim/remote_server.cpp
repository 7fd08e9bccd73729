#include "shim/remote_server.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "drm/habanalabs_accel.h"
#include "shim/cb_mappings.h"
#include "shim/remote_protocol.h"

namespace podsim::driver::shim {
namespace {

// A client process's memory as its driver calls reach it: ioctl arguments' pointers through
// process_vm_readv/writev, and for MAP USERPTR the pieces of the client's memory file of lent
// pages (remote_client.cpp) sent with the call, mapped side by side as the range's pages.
class ClientMemory : public UserMemory {
 public:
  explicit ClientMemory(pid_t pid) : pid_(pid) {}
  ~ClientMemory() override {
    for (const auto& [physical, m] : pinned_) munmap(m.local, m.size);
  }

  // For the call under way: the pool to lend pages at, and the client's memory file (-1: none)
  // with the pieces of it the call names.
  void offer(LentPages& lent, int fd, std::vector<remote::LentPiece> pieces) {
    lent_ = &lent;
    fd_ = fd;
    pieces_ = std::move(pieces);
  }
  void withdraw() {
    fd_ = -1;
    pieces_.clear();
  }

  int pin(std::uint64_t address, std::uint64_t size, std::uint64_t& physical) override {
    void* local = map_pieces(address, size);
    if (local == nullptr) return -EFAULT;
    const auto at = lent_->lend(static_cast<std::uint8_t*>(local), size);
    if (!at) {
      munmap(local, size);
      return -ENOMEM;
    }
    pinned_[*at] = Pinned{local, size};
    physical = *at;
    return 0;
  }

  void unpin(std::uint64_t physical, std::uint64_t size) override {
    const auto it = pinned_.find(physical);
    if (it == pinned_.end()) return;
    lent_->take_back(physical, size);
    munmap(it->second.local, it->second.size);
    pinned_.erase(it);
  }

  int copy_from(void* to, std::uint64_t user_address, std::size_t size) override {
    if (size == 0) return 0;
    iovec local{to, size};
    iovec remote{reinterpret_cast<void*>(user_address), size};
    return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size) ? 0
                                                                                          : -EFAULT;
  }

  int copy_to(std::uint64_t user_address, const void* from, std::size_t size) override {
    if (size == 0) return 0;
    iovec local{const_cast<void*>(from), size};
    iovec remote{reinterpret_cast<void*>(user_address), size};
    return process_vm_writev(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size)
               ? 0
               : -EFAULT;
  }

 private:
  // [address, address + size) as the offered pieces give it, mapped here; null when they do not
  // cover it exactly, in order.
  void* map_pieces(std::uint64_t address, std::uint64_t size) {
    if (fd_ < 0 || lent_ == nullptr || pieces_.empty()) return nullptr;
    std::uint64_t at = address;
    for (const remote::LentPiece& p : pieces_) {
      if (p.address != at || p.length == 0 || p.length % 4096 != 0) return nullptr;
      at += p.length;
    }
    if (at != address + size) return nullptr;
    auto* area = static_cast<std::uint8_t*>(
        mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (area == MAP_FAILED) return nullptr;
    for (const remote::LentPiece& p : pieces_) {
      if (mmap(area + (p.address - address), p.length, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_FIXED, fd_, static_cast<off_t>(p.offset)) == MAP_FAILED) {
        munmap(area, size);
        return nullptr;
      }
    }
    return area;
  }

  struct Pinned {
    void* local;
    std::uint64_t size;
  };
  pid_t pid_;
  LentPages* lent_ = nullptr;
  int fd_ = -1;
  std::vector<remote::LentPiece> pieces_;
  std::map<std::uint64_t, Pinned> pinned_;  // by host physical address
};

// One client process: its files by the id it names them with, its memory and mapped CBs. Model
// state (files, pins, CB copies) is touched on the simulation's thread only, through
// ModelServer::run; the tables under `mutex`. A file closes when its client closes it; the shim
// never does so while a call on it is under way (a client that did would close it under the
// call).
struct Session {
  explicit Session(pid_t pid) : memory(pid) {}
  struct Entry {
    int device;
    std::shared_ptr<File> file;
    CbMappings cbs;  // the memory files both map
  };
  std::mutex mutex;
  std::map<int, std::shared_ptr<Entry>> files;
  int next_id = 1;
  int connections = 0;
  ClientMemory memory;
};

}  // namespace

struct RemoteServer::Impl {
  ModelServer& model;
  std::string path;
  int listener = -1;
  std::atomic<bool> stopping{false};
  std::mutex mutex;
  std::map<pid_t, std::shared_ptr<Session>> sessions;

  Impl(ModelServer& m, std::string p) : model(m), path(std::move(p)) {}

  std::shared_ptr<Session> join(pid_t pid) {
    std::lock_guard<std::mutex> guard(mutex);
    auto& s = sessions[pid];
    if (!s) s = std::make_shared<Session>(pid);
    ++s->connections;
    return s;
  }
  void leave(pid_t pid, const std::shared_ptr<Session>& s) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      if (--s->connections > 0) return;
      sessions.erase(pid);
    }
    // The process has gone: its files close, as the kernel closes them at exit.
    std::lock_guard<std::mutex> guard(s->mutex);
    for (auto& [id, e] : s->files) close_file(*e);
    s->files.clear();
  }
  void close_file(Session::Entry& e) {
    model.run(e.device, [&](Device&, ModelServer::Host&) {
      for (const auto& [handle, cb] : e.cbs.all()) munmap(cb.local, cb.length);
      e.cbs = {};
      e.file.reset();
      return 0;
    });
  }

  void serve(int socket, pid_t pid);
  remote::Reply answer(Session& s, const remote::Request& r, std::uint8_t* payload, int fd);
  std::shared_ptr<Session::Entry> entry(Session& s, int id) {
    std::lock_guard<std::mutex> guard(s.mutex);
    const auto it = s.files.find(id);
    return it == s.files.end() ? nullptr : it->second;
  }
};

remote::Reply RemoteServer::Impl::answer(Session& s, const remote::Request& r,
                                         std::uint8_t* payload, int fd) {
  remote::Reply reply;
  switch (r.op) {
    case remote::Op::kHello:
      reply.value = static_cast<std::uint64_t>(model.devices());
      return reply;
    case remote::Op::kPciBus:
      reply.rc = model.run(r.device, [](Device& d, ModelServer::Host&) { return d.pci().bus; });
      return reply;
    case remote::Op::kOpen: {
      std::unique_ptr<File> file;
      reply.rc = model.run(r.device, [&](Device& d, ModelServer::Host&) {
        const int rc = d.open(r.a != 0, file);
        if (rc == 0) file->set_user_memory(s.memory);
        return rc;
      });
      if (reply.rc != 0) return reply;
      std::lock_guard<std::mutex> guard(s.mutex);
      reply.rc = s.next_id++;
      s.files[static_cast<int>(reply.rc)] =
          std::make_shared<Session::Entry>(Session::Entry{r.device, std::move(file), {}});
      return reply;
    }
    case remote::Op::kClose: {
      std::lock_guard<std::mutex> guard(s.mutex);
      const auto it = s.files.find(r.file);
      if (it == s.files.end()) {
        reply.rc = -EBADF;
        return reply;
      }
      close_file(*it->second);
      s.files.erase(it);
      return reply;
    }
    default:
      break;
  }
  const std::shared_ptr<Session::Entry> e = entry(s, r.file);
  if (e == nullptr) {
    reply.rc = -EBADF;
    return reply;
  }
  if (r.op == remote::Op::kIoctl) {
    // The argument, then the pieces of lent memory a MAP USERPTR names.
    const std::uint64_t pieces_size = r.b * sizeof(remote::LentPiece);
    if (r.b > remote::kMaxPieces || pieces_size > r.size) {
      reply.rc = -EINVAL;
      return reply;
    }
    const auto arg_size = static_cast<std::uint32_t>(r.size - pieces_size);
    std::vector<remote::LentPiece> pieces(r.b);
    if (r.b > 0) std::memcpy(pieces.data(), payload + arg_size, pieces_size);
    reply.rc = model.run(e->device, [&](Device&, ModelServer::Host& host) {
      if (r.a == HL_IOCTL_CS && arg_size == sizeof(hl_cs_args)) {
        e->cbs.copy_named(*reinterpret_cast<const hl_cs_args*>(payload), s.memory,
                          host.memory.backing());
      }
      s.memory.offer(host.lent, fd, std::move(pieces));
      const int rc = e->file->ioctl(r.a, arg_size == 0 ? nullptr : payload);
      s.memory.withdraw();
      return rc;
    });
    reply.size = arg_size;
    return reply;
  }
  if (r.op == remote::Op::kMmap) {
    if (fd < 0) {
      reply.rc = -EINVAL;
      return reply;
    }
    std::uint64_t address = 0;
    reply.rc = model.run(e->device, [&](Device&, ModelServer::Host&) {
      const int rc = e->file->mmap(r.a, r.b, address);
      if (rc != 0) return rc;
      void* local = mmap(nullptr, r.b, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (local == MAP_FAILED) {
        e->file->munmap(r.a);
        return -ENOMEM;
      }
      e->cbs.add(r.a, {static_cast<std::uint8_t*>(local), address, r.b});
      return 0;
    });
    reply.value = address;
    return reply;
  }
  if (r.op == remote::Op::kMunmap) {
    reply.rc = model.run(e->device, [&](Device&, ModelServer::Host&) {
      if (const auto cb = e->cbs.remove(r.a)) munmap(cb->local, cb->length);
      return e->file->munmap(r.a);
    });
    return reply;
  }
  reply.rc = -EINVAL;
  return reply;
}

void RemoteServer::Impl::serve(int socket, pid_t pid) {
  const std::shared_ptr<Session> s = join(pid);
  std::vector<std::uint8_t> payload(remote::kMaxPayload);
  for (;;) {
    remote::Request r;
    int fd = -1;
    if (!remote::receive_request(socket, r, payload.data(), fd)) break;
    const remote::Reply reply = answer(*s, r, payload.data(), fd);
    if (fd >= 0) close(fd);
    if (!remote::send_message(socket, &reply, sizeof reply, payload.data(), reply.size)) break;
  }
  close(socket);
  leave(pid, s);
}

RemoteServer::RemoteServer(ModelServer& model, std::string socket_path)
    : impl_(std::make_unique<Impl>(model, std::move(socket_path))) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (impl_->path.empty() || impl_->path.size() >= sizeof address.sun_path) {
    throw std::runtime_error("socket path '" + impl_->path + "': 1 to " +
                             std::to_string(sizeof address.sun_path - 1) + " characters");
  }
  std::strncpy(address.sun_path, impl_->path.c_str(), sizeof address.sun_path - 1);
  impl_->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // Made with no access for others from the start, then listening.
  const mode_t old_mask = umask(0177);
  const int bound = bind(impl_->listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
  const int error = errno;
  umask(old_mask);
  if (bound != 0 || listen(impl_->listener, 64) != 0) {
    close(impl_->listener);
    throw std::runtime_error("socket path '" + impl_->path + "': " + std::strerror(error));
  }
}

RemoteServer::~RemoteServer() {
  close(impl_->listener);
  unlink(impl_->path.c_str());
}

void RemoteServer::run() {
  while (!impl_->stopping) {
    const int s = accept4(impl_->listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      break;
    }
    ucred peer{};
    socklen_t size = sizeof peer;
    if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != geteuid()) {
      close(s);  // only the server's own user
      continue;
    }
    std::thread([impl = impl_.get(), s, pid = peer.pid] { impl->serve(s, pid); }).detach();
  }
}

void RemoteServer::stop() {
  impl_->stopping = true;
  shutdown(impl_->listener, SHUT_RDWR);
}

}  // namespace podsim::driver::shim
