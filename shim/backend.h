// What the shim's intercepted calls reach: the model inside the process (local_backend.cpp, the
// default) or a podsim server the process is a client of ($PODSIM_SERVER: remote_client.cpp).
// The shim itself (shim.cpp) only keeps the program's descriptors and mappings apart from the C
// library's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace podsim::driver::shim {

// One open node of a device; it closes with the last reference.
class OpenFile {
 public:
  virtual ~OpenFile() = default;
  virtual int ioctl(unsigned long request, void* arg) = 0;
  // Maps CB `handle` into the program: `length` bytes at `at`. 0 or -errno.
  virtual int mmap(std::uint64_t handle, std::size_t length, int prot, void*& at) = 0;
  // Forgets the mapping of CB `handle` in the model (the program unmaps the memory itself).
  virtual int munmap(std::uint64_t handle) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int devices() = 0;
  // The bus the driver found device `device` on, or -errno.
  virtual int pci_bus(int device) = 0;
  // 0 or -errno.
  virtual int open(int device, bool control, std::shared_ptr<OpenFile>& file) = 0;
  // The program maps or unmaps [address, address + length) of its own.
  virtual void address_space_changed(void* /*address*/, std::size_t /*length*/) {}
};

// The process's backend, chosen at its first use.
Backend& backend();
Backend& local_backend();
Backend& remote_backend(const char* socket_path);
// Whether a remote backend has lent pages (and so must hear of address_space_changed); cheap,
// and allocates nothing: it is asked on every mmap, including the C library's own.
bool any_pages_lent();

// The C library's mmap and munmap, past the shim's own.
void* system_mmap(void* address, std::size_t length, int prot, int flags, int fd, long offset);
int system_munmap(void* address, std::size_t length);

}  // namespace podsim::driver::shim
