// A compiled graph: what the runtime needs to run it on a device at addresses the user gives
// (runtime.h). Its stages are engine work in program order: each stage runs on one engine class
// (the TPCs, the MMEs or an internal DMA), signals its own sync object once per engine, and
// waits for the stages it depends on; the TPC kernels it runs are in its program.
// Addresses inside engine registers are relative to a section (the program, the workspace, the
// runtime's part of the on-die SRAM or a persistent tensor) and listed as relocations, which the
// runtime adds the section's address to at launch (the patching SynapseAI's runtime does). The
// serialized form is versioned and checksummed: bytes that are not a recipe of this version are
// refused with a message saying why, before anything is used.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/register_run.h"
#include "synapse/graph.h"

namespace podsim::synapse {

// Where an address points: a section and an offset in it.
struct SectionAddress {
  std::uint32_t section = 0;
  std::uint64_t offset = 0;
};
// Sections: the program (kernel binaries), the workspace, the SRAM (the runtime's part of it:
// the compiler's staging buffers), then persistent tensor i.
inline constexpr std::uint32_t kProgramSection = 0, kWorkspaceSection = 1, kSramSection = 2,
                               kFirstTensorSection = 3;

// A 64-bit address in registers `index` (low half) and `index + 1` (high half) of run `run`,
// relative to `section`.
struct Relocation {
  std::uint32_t run = 0, index = 0, section = 0;
};

enum class Engine : std::uint8_t { kTpc, kMme, kDma };
const char* to_string(Engine e);

// One engine's part of a stage.
struct EngineJob {
  std::uint32_t queue = 0;  // the uAPI queue id (stream 0 of the engine's QMAN)
  // kTpc, kMme: the engine block's registers, then `execute` written with 1.
  std::vector<core::RegisterRun> registers;
  std::vector<Relocation> relocations;
  std::uint32_t execute = 0;
  // kDma: a linear copy.
  SectionAddress src, dst;
  std::uint64_t bytes = 0;
};

struct Stage {
  std::string node;  // the graph node it belongs to
  Engine engine = Engine::kTpc;
  std::vector<EngineJob> jobs;
  std::vector<std::uint32_t> waits;  // stages that must have ended first
  double flops = 0;
};

struct RecipeTensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint32_t> shape;
  bool persistent = false;
  bool sram = false;         // a staging buffer in the SRAM section (TensorKind::kSram)
  std::uint64_t offset = 0;  // workspace and SRAM tensors: where in their section
  std::uint64_t bytes = 0;
};

struct KernelBinary {
  std::string key;
  std::uint64_t offset = 0;  // in the program section
  std::vector<std::uint8_t> code;
};

struct Recipe {
  static constexpr std::uint32_t kVersion = 3;  // 2: the device id; 3: the SRAM section
  std::string signature;                        // the graph's (Graph::signature)
  std::uint32_t device_id = 0;  // the PCI device id of the family whose queue ids it names
  std::vector<RecipeTensor> tensors;
  std::vector<std::uint32_t> persistent;  // tensor indices in launch order (section 3 + i)
  std::uint64_t workspace_bytes = 0;
  std::uint64_t sram_bytes = 0;  // of the runtime's part of the SRAM
  std::uint64_t program_bytes = 0;
  std::vector<KernelBinary> program;
  std::vector<Stage> stages;
  // The device's sync objects and monitors the recipe's command buffers use: stage k signals
  // first_sob + k; engine queue slot q waits with monitor first_monitor + q.
  std::uint32_t first_sob = 0, first_monitor = 0;
  // What the compiler says about the graph (fusions, placements), for the user to read.
  std::vector<std::string> notes;
  // A hash of everything above, set by compile and deserialize (not serialized): what tells two
  // recipes of one graph apart (compiled with and without fusion, for other engines), the key
  // the runtime caches a recipe's uploads by.
  std::uint64_t fingerprint = 0;
};

// The chip address of user sync object `sob` (of the W_S manager, where the driver leaves
// user space its objects): what a stage's engines signal and its waiters watch.
std::uint64_t sob_address(std::uint32_t sob);

// The hash `fingerprint` holds.
std::uint64_t fingerprint(const Recipe& recipe);

class RecipeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<std::uint8_t> serialize(const Recipe& recipe);
// Throws RecipeError naming what is wrong: not a recipe, another version, a checksum mismatch,
// truncated data, a field out of range.
Recipe deserialize(const std::vector<std::uint8_t>& bytes);

}  // namespace podsim::synapse
