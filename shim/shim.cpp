// libpodsim-accel.so: LD_PRELOAD it into a program built for the Linux accel driver and the
// program's device nodes are served by modeled Gaudis instead of a kernel: a model inside the
// process (model_server.h), or a podsim server's when $PODSIM_SERVER names its socket
// (backend.h). It serves the legacy node names a user library falls back to when /dev/accel does
// not exist — /dev/hl0 (the compute node) and /dev/hl_controlD0 — and the sysfs file the library
// reads a node's PCI address from (/sys/dev/char/<major>:<minor>/pci_addr); on those files it
// answers open, close, ioctl, mmap, munmap and fstat, and passes every other file through.
// Anonymous MAP_HUGETLB memory the machine cannot give (no huge pages reserved) becomes ordinary
// memory on a 2 MiB boundary, as a program testing huge-page mappings needs.
// dup, dup2, dup3 and fcntl(F_DUPFD) give descriptors sharing the node's open file.
// Ignores (for now): fork.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "drm/habanalabs_accel.h"
#include "shim/backend.h"

// libsystemc.so wants an sc_main; the client program has none, and the model never calls it.
extern "C" int sc_main(int, char*[]) { return 1; }

namespace {

using podsim::driver::shim::any_pages_lent;
using podsim::driver::shim::backend;
using podsim::driver::shim::OpenFile;

constexpr unsigned kMajor = 510;  // what fstat reports for the nodes
// Device i's nodes under the accel class's names and the legacy ones (what hl-thunk opens when
// /dev/accel does not exist); its primary node has minor 2i, its control node 2i + 1.
constexpr const char* kNodeNames[][2] = {{"/dev/accel/accel%d%n", "/dev/accel/accel_controlD%d%n"},
                                         {"/dev/hl%d%n", "/dev/hl_controlD%d%n"}};

// The device index `path` names with `pattern` (a %d then %n), or -1.
int index_in(const char* path, const char* pattern) {
  int index = -1, end = -1;
  if (std::sscanf(path, pattern, &index, &end) != 1 || end < 0 || path[end] != '\0') return -1;
  return index >= 0 ? index : -1;
}

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// A CB the program mapped; the mapping does not keep its file open.
struct Mapping {
  std::weak_ptr<OpenFile> file;
  std::uint64_t handle;
};

// A node's open file; dup'ed descriptors share it, and it closes with the last of them.
struct Node {
  int device;
  bool control;
  std::shared_ptr<OpenFile> file;
};

// Never destroyed, as the model server: a program may exit with its nodes open, and closing
// them from a static destructor would call into a simulation that no longer runs (the kernel
// reclaims a process's files at exit; the model ends with the process).
std::mutex& lock() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<int, Node>& nodes() {
  static auto* n = new std::map<int, Node>;
  return *n;
}
std::map<void*, Mapping>& mappings() {
  static auto* m = new std::map<void*, Mapping>;
  return *m;
}

// $PODSIM_SHIM_TRACE: every ioctl the model refuses is printed with its errno, to see why a
// program's call failed.
bool trace_failures() {
  static const bool on = [] {
    const char* v = std::getenv("PODSIM_SHIM_TRACE");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

int fail(int rc) {
  errno = -rc;
  return -1;
}

// Held for the length of a call, so that another thread's close cannot end the file under it.
std::shared_ptr<OpenFile> file_of(int fd) {
  std::lock_guard<std::mutex> guard(lock());
  const auto it = nodes().find(fd);
  return it == nodes().end() ? nullptr : it->second.file;
}

int open_node(int device, bool control, int flags) {
  const int fd = real<int (*)(const char*, int, ...)>("open")("/dev/null", flags & O_CLOEXEC);
  if (fd < 0) return -1;
  std::shared_ptr<OpenFile> file;
  if (const int rc = backend().open(device, control, file); rc != 0) {
    real<int (*)(int)>("close")(fd);
    return fail(rc);
  }
  std::lock_guard<std::mutex> guard(lock());
  nodes()[fd] = Node{device, control, std::move(file)};
  return fd;
}

// A new descriptor for the same open node, or -1 with errno as the C library's call gave.
int duplicate(int fd, int copy) {
  if (copy < 0) return copy;
  std::lock_guard<std::mutex> guard(lock());
  const auto it = nodes().find(fd);
  if (it != nodes().end() && copy != fd) nodes()[copy] = it->second;
  return copy;
}

// Forgets `fd` as a node. The file closes in the model when no descriptor holds it any more: as
// `file` goes, outside the lock, since closing is a call into the model.
void forget(int fd) {
  std::shared_ptr<OpenFile> file;
  std::lock_guard<std::mutex> guard(lock());
  const auto it = nodes().find(fd);
  if (it == nodes().end()) return;
  file = std::move(it->second.file);
  nodes().erase(it);
}

// A sysfs file with fixed contents: a memory file the program reads as usual.
int open_text(const char* text) {
  const int fd = memfd_create("podsim-sysfs", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = write(fd, text, std::strlen(text));
  lseek(fd, 0, SEEK_SET);
  return n < 0 ? -1 : fd;
}

// The sysfs class directory a library lists to find a device by its PCI address: a directory
// of the shim's own with the entries the kernel would show.
constexpr const char* kClassDir = "/sys/class/accel";

// Kept in a plain array: it must outlive the static destructors, since it is removed at exit.
char class_dir[] = "/tmp/podsim-accel-XXXXXX";

int devices() { return backend().devices(); }

void remove_class_dir_copy() {
  const std::string d = class_dir;
  for (int i = 0; i < devices(); ++i) {
    rmdir((d + "/accel" + std::to_string(i)).c_str());
    rmdir((d + "/accel_controlD" + std::to_string(i)).c_str());
  }
  rmdir(d.c_str());
}

const char* class_dir_copy() {
  static const bool made = [] {
    if (mkdtemp(class_dir) == nullptr) return false;
    const std::string d = class_dir;
    for (int i = 0; i < devices(); ++i) {
      mkdir((d + "/accel" + std::to_string(i)).c_str(), 0755);
      mkdir((d + "/accel_controlD" + std::to_string(i)).c_str(), 0755);
    }
    std::atexit(remove_class_dir_copy);  // the process leaves no trace of its listing
    return true;
  }();
  return made ? class_dir : "/nonexistent";
}

// Device i's PCI address ("0000:BB:00.0\n", its bus as the probe found it).
std::string pci_address(int device) {
  const int bus = backend().pci_bus(device);
  char text[32];
  std::snprintf(text, sizeof text, "0000:%02x:00.0\n", bus < 0 ? 0 : bus);
  return text;
}

bool is_class_dir(const char* path) {
  return std::strcmp(path, kClassDir) == 0 || std::strcmp(path, "/sys/class/accel/") == 0;
}

// A file of ours: -2 when the path is not one; -1 with errno for a device the model lacks.
int open_path(const char* path, int flags) {
  for (const auto& names : kNodeNames) {
    for (int control = 0; control < 2; ++control) {
      const int i = index_in(path, names[control]);
      if (i >= 0) return open_node(i, control != 0, flags);
    }
  }
  // pci_addr by the primary node's device number or its class entry; the control node's
  // device number (by which a library finds the primary's sysfs entry: its minor less one),
  // under the accel class and the legacy habanalabs class.
  const std::string major = std::to_string(kMajor);
  int i = -1, end = -1;
  if (std::sscanf(path, ("/sys/dev/char/" + major + ":%d/pci_addr%n").c_str(), &i, &end) == 1 &&
      end >= 0 && path[end] == '\0' && i % 2 == 0) {
    return i / 2 < devices() ? open_text(pci_address(i / 2).c_str()) : fail(-ENOENT);
  }
  if ((i = index_in(path, "/sys/class/accel/accel%d/pci_addr%n")) >= 0)
    return i < devices() ? open_text(pci_address(i).c_str()) : fail(-ENOENT);
  for (const char* pattern :
       {"/sys/class/accel/accel_controlD%d/dev%n", "/sys/class/habanalabs/hl_controlD%d/dev%n"}) {
    if ((i = index_in(path, pattern)) >= 0) {
      return i < devices() ? open_text((major + ":" + std::to_string(2 * i + 1) + "\n").c_str())
                           : fail(-ENOENT);
    }
  }
  return -2;  // not ours
}

// Anonymous huge-page memory where the machine has none reserved (most build and CI machines):
// ordinary memory on a 2 MiB boundary, rounded to 2 MiB, so that a program testing the device's
// huge-page mappings finds the alignment it asked for. Its munmap frees the length it names.
using MmapFn = void* (*)(void*, size_t, int, int, int, off_t);
void* huge_or_aligned(void* addr, size_t length, int prot, int flags, MmapFn next) {
  void* huge = next(addr, length, prot, flags, -1, 0);
  if (huge != MAP_FAILED) return huge;
  constexpr size_t kHuge = 2u << 20;
  const size_t rounded = (length + kHuge - 1) / kHuge * kHuge;
  const int plain = flags & ~(MAP_HUGETLB | (MAP_HUGE_MASK << MAP_HUGE_SHIFT));
  auto* area = static_cast<char*>(next(nullptr, rounded + kHuge, prot, plain, -1, 0));
  if (area == MAP_FAILED) return MAP_FAILED;
  char* aligned =
      reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(area) + kHuge - 1) / kHuge * kHuge);
  auto unmap = real<int (*)(void*, size_t)>("munmap");
  if (aligned > area) unmap(area, static_cast<size_t>(aligned - area));
  const size_t tail = static_cast<size_t>(area + rounded + kHuge - (aligned + rounded));
  if (tail > 0) unmap(aligned + rounded, tail);
  return aligned;
}

// Our files, or the C library's `name` (open or open64) for every other path.
int open_or_pass(const char* name, const char* path, int flags, mode_t mode) {
  const int ours = open_path(path, flags);
  if (ours != -2) return ours;
  return real<int (*)(const char*, int, ...)>(name)(path, flags, mode);
}

// Our sysfs files as streams, or the C library's `name` (fopen or fopen64) for every other path.
FILE* fopen_or_pass(const char* name, const char* path, const char* mode) {
  const int ours = open_path(path, O_RDONLY);
  if (ours == -2) return real<FILE* (*)(const char*, const char*)>(name)(path, mode);
  return ours < 0 ? nullptr : fdopen(ours, mode);
}

}  // namespace

namespace podsim::driver::shim {

Backend& backend() {
  static Backend& chosen = []() -> Backend& {
    const char* server = std::getenv("PODSIM_SERVER");
    return server != nullptr && *server != '\0' ? remote_backend(server) : local_backend();
  }();
  return chosen;
}

void* system_mmap(void* address, std::size_t length, int prot, int flags, int fd, long offset) {
  return real<void* (*)(void*, size_t, int, int, int, off_t)>("mmap")(address, length, prot, flags,
                                                                      fd, offset);
}

int system_munmap(void* address, std::size_t length) {
  return real<int (*)(void*, size_t)>("munmap")(address, length);
}

}  // namespace podsim::driver::shim

extern "C" {

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = (flags & O_CREAT) ? va_arg(args, mode_t) : 0;
  va_end(args);
  return open_or_pass("open", path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  const mode_t mode = (flags & O_CREAT) ? va_arg(args, mode_t) : 0;
  va_end(args);
  return open_or_pass("open64", path, flags, mode);
}

// The C library's fopen does not go through open: the sysfs files are served here too.
FILE* fopen(const char* path, const char* mode) { return fopen_or_pass("fopen", path, mode); }
FILE* fopen64(const char* path, const char* mode) { return fopen_or_pass("fopen64", path, mode); }

DIR* opendir(const char* path) {
  if (is_class_dir(path)) path = class_dir_copy();
  return real<DIR* (*)(const char*)>("opendir")(path);
}

int close(int fd) {
  forget(fd);
  return real<int (*)(int)>("close")(fd);
}

int dup(int fd) { return duplicate(fd, real<int (*)(int)>("dup")(fd)); }

int dup2(int fd, int copy) {
  if (fd != copy) forget(copy);  // dup2 closes what `copy` was
  return duplicate(fd, real<int (*)(int, int)>("dup2")(fd, copy));
}

int dup3(int fd, int copy, int flags) {
  if (fd != copy) forget(copy);
  return duplicate(fd, real<int (*)(int, int, int)>("dup3")(fd, copy, flags));
}

// F_DUPFD and F_DUPFD_CLOEXEC duplicate; every other command passes through.
int fcntl(int fd, int command, ...) {
  va_list args;
  va_start(args, command);
  void* arg = va_arg(args, void*);
  va_end(args);
  const int rc = real<int (*)(int, int, void*)>("fcntl")(fd, command, arg);
  if (command == F_DUPFD || command == F_DUPFD_CLOEXEC) return duplicate(fd, rc);
  return rc;
}

int ioctl(int fd, unsigned long request, ...) {
  va_list args;
  va_start(args, request);
  void* arg = va_arg(args, void*);
  va_end(args);
  const auto file = file_of(fd);
  if (file == nullptr) return real<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg);
  const int rc = file->ioctl(request, arg);
  if (rc < 0 && trace_failures()) {
    std::fprintf(stderr, "podsim shim: ioctl %#lx on fd %d: %s\n", request, fd, std::strerror(-rc));
  }
  return rc < 0 ? fail(rc) : rc;
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  const auto file = file_of(fd);
  auto next = real<void* (*)(void*, size_t, int, int, int, off_t)>("mmap");
  if (file == nullptr) {
    void* at = (flags & MAP_HUGETLB) != 0 && (flags & MAP_ANONYMOUS) != 0
                   ? huge_or_aligned(addr, length, prot, flags, next)
                   : next(addr, length, prot, flags, fd, offset);
    if (at != MAP_FAILED && any_pages_lent()) backend().address_space_changed(at, length);
    return at;
  }
  const auto handle = static_cast<std::uint64_t>(offset);
  void* at = nullptr;
  if (const int rc = file->mmap(handle, length, prot, at); rc < 0) {
    errno = -rc;
    return MAP_FAILED;
  }
  std::lock_guard<std::mutex> guard(lock());
  mappings()[at] = Mapping{file, handle};
  return at;
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

int munmap(void* addr, size_t length) {
  std::shared_ptr<OpenFile> file;
  std::uint64_t handle = 0;
  {
    std::lock_guard<std::mutex> guard(lock());
    const auto it = mappings().find(addr);
    if (it != mappings().end()) {
      file = it->second.file.lock();
      handle = it->second.handle;
      mappings().erase(it);
    }
  }
  if (file != nullptr) file->munmap(handle);
  if (any_pages_lent()) backend().address_space_changed(addr, length);
  return real<int (*)(void*, size_t)>("munmap")(addr, length);
}

int fstat(int fd, struct stat* st) {
  Node node{};
  {
    std::lock_guard<std::mutex> guard(lock());
    const auto it = nodes().find(fd);
    if (it == nodes().end()) return real<int (*)(int, struct stat*)>("fstat")(fd, st);
    node = it->second;
  }
  std::memset(st, 0, sizeof *st);
  st->st_mode = S_IFCHR | 0666;
  st->st_rdev = makedev(kMajor, static_cast<unsigned>(2 * node.device + (node.control ? 1 : 0)));
  return 0;
}

int fstat64(int fd, struct stat64* st) {
  static_assert(sizeof(struct stat64) == sizeof(struct stat), "LP64");
  return fstat(fd, reinterpret_cast<struct stat*>(st));
}

}  // extern "C"
