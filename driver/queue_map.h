// The uAPI's queue and engine ids of a device family (Gaudi1, Gaudi2) and the modeled engines
// each names. Captures: which ids are DMA, MME and TPC queues and their streams, which are
// host-facing (completion queues and MSI-X: DMA 0 and 1 on Gaudi1, PDMA 0 and 1 on Gaudi2),
// how many engines of each kind a family's ids can name, and the reverse lookup user space
// compiles queue ids with. Ignores the queues of engines the model does not have (NICs,
// rotators, decoders, the CPU queue): they name none.
// Gaudi2's ids are laid over podsim's chip, which programs every preset with Gaudi1's packets
// and register layout and numbers its engines plainly: PDMA p is DMA p, DCORE d's EDMA e is DMA
// 2 + 2d + e, its MME is MME d and its TPC t is TPC 6d + t (DCORE0's seventh TPC is TPC 24).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace podsim::driver {

// The PCI ids the driver binds to [C1], [C7].
constexpr std::uint16_t kHabanaVendorId = 0x1da3;
constexpr std::uint16_t kGaudiDeviceId = 0x1000;
constexpr std::uint16_t kGaudi2DeviceId = 0x1020;

enum class EngineKind { kDma, kMme, kTpc };

struct EngineRef {
  EngineKind kind = EngineKind::kDma;
  int index = 0;
  bool operator==(const EngineRef& o) const { return kind == o.kind && index == o.index; }
};

// Where a BAR opens the chip: BAR `bar` from its start maps chip addresses from `chip_base`.
struct BarWindow {
  int bar = 0;
  std::uint64_t chip_base = 0;
};

struct QueueRef {
  EngineRef engine;
  int stream = 0;
  bool host_facing = false;
};

class QueueMap {
 public:
  // The map of the family with PCI device id `device_id`; nullptr for a device the driver does
  // not serve.
  static const QueueMap* find(std::uint32_t device_id);
  // As find; throws std::invalid_argument naming the id and the families served.
  static const QueueMap& of(std::uint32_t device_id);

  const std::string& family() const { return family_; }
  std::uint32_t device_id() const { return device_id_; }
  std::uint16_t server_type() const { return server_type_; }  // its box (HW_IP server_type)
  // The BAR the driver reaches the chip's registers through (Gaudi1: BAR2 from the SRAM at
  // 0x7FF8000000 [C7]; Gaudi2: BAR0 from the registers at 0x7FFC000000 [C3]).
  BarWindow registers() const { return registers_; }
  std::uint32_t queue_ids() const { return static_cast<std::uint32_t>(queues_.size()); }
  int engine_ids() const { return static_cast<int>(engines_.size()); }
  // The modeled engine behind queue `id`; none for an id out of range or of an engine the model
  // does not have.
  std::optional<QueueRef> queue(std::uint32_t id) const;
  // The queue of `engine`'s `stream`. Throws std::out_of_range when the family has none.
  std::uint32_t queue_id(EngineRef engine, int stream) const;
  // The engine error records and idle masks name by `id`, if the model has it.
  std::optional<EngineRef> engine(int id) const;
  // How many engines of `kind` the family's ids name.
  int most(EngineKind kind) const;
  struct Limits {
    int dma = 0, mmes = 0, tpcs = 0;
  };
  Limits limits() const {
    return {most(EngineKind::kDma), most(EngineKind::kMme), most(EngineKind::kTpc)};
  }

 private:
  QueueMap(std::string family, std::uint32_t device_id, std::uint16_t server_type,
           BarWindow registers, std::uint32_t queue_ids, int engine_ids);
  static QueueMap gaudi1();
  static QueueMap gaudi2();
  // Queue ids first_id .. first_id + 3 as the four streams of `engine`.
  void streams(std::uint32_t first_id, EngineRef engine);

  std::string family_;
  std::uint32_t device_id_;
  std::uint16_t server_type_;
  BarWindow registers_;
  std::vector<std::optional<QueueRef>> queues_;
  std::vector<std::optional<EngineRef>> engines_;
};

// The QMAN of `engine` in podsim's chip map: where its PQs, fences and CPs are programmed.
std::uint64_t qman_base(EngineRef engine);

}  // namespace podsim::driver
