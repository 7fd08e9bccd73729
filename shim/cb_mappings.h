// The CBs a client maps, as the shim keeps them: each lives in memory of the client's (or, for a
// podsim server, memory shared with the client) and is copied into the modeled host memory
// before a CS that names it, as the kernel's pages would already hold what user space wrote.
// Only the CBs a CS names are copied: a program with a thousand mapped CBs (hl-thunk's 512-thread
// DMA test) would otherwise copy them all on every submission, and on every retry of one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/sparse_memory.h"
#include "driver/user_memory.h"
#include "drm/habanalabs_accel.h"

namespace podsim::driver::shim {

class CbMappings {
 public:
  struct Mapping {
    std::uint8_t* local;  // where the client's writes are
    std::uint64_t address, length;
  };
  void add(std::uint64_t handle, Mapping m) { by_handle_[handle] = m; }
  // The mapping removed, if there was one (for its owner to unmap).
  std::optional<Mapping> remove(std::uint64_t handle) {
    const auto it = by_handle_.find(handle);
    if (it == by_handle_.end()) return std::nullopt;
    const Mapping m = it->second;
    by_handle_.erase(it);
    return m;
  }
  const std::map<std::uint64_t, Mapping>& all() const { return by_handle_; }

  // Before CS `args` (read from `user` as the driver will read it): the mapped CBs its chunks
  // name, into `memory`. Chunks that cannot be read are left to the driver to refuse.
  void copy_named(const hl_cs_args& args, UserMemory& user, core::SparseMemory& memory) const {
    if (by_handle_.empty()) return;
    copy_chunks(args.in.chunks_restore, args.in.num_chunks_restore, user, memory);
    copy_chunks(args.in.chunks_execute, args.in.num_chunks_execute, user, memory);
  }

 private:
  void copy_chunks(std::uint64_t array, std::uint32_t count, UserMemory& user,
                   core::SparseMemory& memory) const {
    if (array == 0 || count == 0 || count > HL_MAX_JOBS_PER_CS) return;
    std::vector<hl_cs_chunk> chunks(count);
    if (user.copy_from(chunks.data(), array, count * sizeof(hl_cs_chunk)) != 0) return;
    for (const hl_cs_chunk& c : chunks) {
      const auto it = by_handle_.find(c.cb_handle);
      if (it == by_handle_.end()) continue;
      const Mapping& m = it->second;
      memory.write(m.address, m.local, m.length);
    }
  }

  std::map<std::uint64_t, Mapping> by_handle_;
};

}  // namespace podsim::driver::shim
