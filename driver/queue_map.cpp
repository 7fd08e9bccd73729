#include "driver/queue_map.h"

#include <fmt/format.h>

#include <stdexcept>

#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"

namespace podsim::driver {
namespace {

constexpr int kStreams = 4;

}  // namespace

QueueMap::QueueMap(std::string family, std::uint32_t device_id, std::uint16_t server_type,
                   BarWindow registers, std::uint32_t queue_ids, int engine_ids)
    : family_(std::move(family)),
      device_id_(device_id),
      server_type_(server_type),
      registers_(registers),
      queues_(queue_ids),
      engines_(static_cast<std::size_t>(engine_ids)) {}

void QueueMap::streams(std::uint32_t first_id, EngineRef engine) {
  const bool host_facing = engine.kind == EngineKind::kDma && engine.index < 2;
  for (int s = 0; s < kStreams; ++s) {
    queues_[first_id + static_cast<std::uint32_t>(s)] = QueueRef{engine, s, host_facing};
  }
}

// Gaudi1: DMA 0-7 (0 and 1 host-facing), the two master MMEs' queues MME_0 (MME 2's QMAN, the
// chip's MME 0) and MME_1, TPC 0-7 [C1], [C9].
QueueMap QueueMap::gaudi1() {
  QueueMap m("Gaudi1", kGaudiDeviceId, HL_SERVER_GAUDI_HLS1, {2, 0x7FF8000000}, GAUDI_QUEUE_ID_SIZE,
             GAUDI_ENGINE_ID_SIZE);
  const std::uint32_t dma[] = {GAUDI_QUEUE_ID_DMA_0_0, GAUDI_QUEUE_ID_DMA_1_0,
                               GAUDI_QUEUE_ID_DMA_2_0, GAUDI_QUEUE_ID_DMA_3_0,
                               GAUDI_QUEUE_ID_DMA_4_0, GAUDI_QUEUE_ID_DMA_5_0,
                               GAUDI_QUEUE_ID_DMA_6_0, GAUDI_QUEUE_ID_DMA_7_0};
  for (int i = 0; i < 8; ++i) {
    m.streams(dma[i], {EngineKind::kDma, i});
    m.engines_[static_cast<std::size_t>(GAUDI_ENGINE_ID_DMA_0 + i)] =
        EngineRef{EngineKind::kDma, i};
  }
  m.streams(GAUDI_QUEUE_ID_MME_0_0, {EngineKind::kMme, 0});
  m.streams(GAUDI_QUEUE_ID_MME_1_0, {EngineKind::kMme, 1});
  m.engines_[GAUDI_ENGINE_ID_MME_2] = EngineRef{EngineKind::kMme, 0};
  m.engines_[GAUDI_ENGINE_ID_MME_0] = EngineRef{EngineKind::kMme, 1};
  for (int i = 0; i < 8; ++i) {
    m.streams(GAUDI_QUEUE_ID_TPC_0_0 + 4u * static_cast<std::uint32_t>(i), {EngineKind::kTpc, i});
    m.engines_[static_cast<std::size_t>(GAUDI_ENGINE_ID_TPC_0 + i)] =
        EngineRef{EngineKind::kTpc, i};
  }
  return m;
}

// Gaudi2: PDMA 0 and 1 host-facing, then per DCORE two EDMAs, an MME and six TPCs (a seventh
// in DCORE0) [C1]; numbered onto podsim's engines as queue_map.h says.
QueueMap QueueMap::gaudi2() {
  QueueMap m("Gaudi2", kGaudi2DeviceId, HL_SERVER_GAUDI2_HLS2, {0, 0x7FFC000000},
             GAUDI2_QUEUE_ID_SIZE, GAUDI2_ENGINE_ID_SIZE);
  m.streams(GAUDI2_QUEUE_ID_PDMA_0_0, {EngineKind::kDma, 0});
  m.streams(GAUDI2_QUEUE_ID_PDMA_1_0, {EngineKind::kDma, 1});
  m.engines_[GAUDI2_ENGINE_ID_PDMA_0] = EngineRef{EngineKind::kDma, 0};
  m.engines_[GAUDI2_ENGINE_ID_PDMA_1] = EngineRef{EngineKind::kDma, 1};
  struct Dcore {
    std::uint32_t edma0, edma1, mme, tpc0;
    int engine_edma0;
  };
  const Dcore dcores[] = {{GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE0_EDMA_1_0,
                           GAUDI2_QUEUE_ID_DCORE0_MME_0_0, GAUDI2_QUEUE_ID_DCORE0_TPC_0_0,
                           GAUDI2_DCORE0_ENGINE_ID_EDMA_0},
                          {GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE1_EDMA_1_0,
                           GAUDI2_QUEUE_ID_DCORE1_MME_0_0, GAUDI2_QUEUE_ID_DCORE1_TPC_0_0,
                           GAUDI2_DCORE1_ENGINE_ID_EDMA_0},
                          {GAUDI2_QUEUE_ID_DCORE2_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE2_EDMA_1_0,
                           GAUDI2_QUEUE_ID_DCORE2_MME_0_0, GAUDI2_QUEUE_ID_DCORE2_TPC_0_0,
                           GAUDI2_DCORE2_ENGINE_ID_EDMA_0},
                          {GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0, GAUDI2_QUEUE_ID_DCORE3_EDMA_1_0,
                           GAUDI2_QUEUE_ID_DCORE3_MME_0_0, GAUDI2_QUEUE_ID_DCORE3_TPC_0_0,
                           GAUDI2_DCORE3_ENGINE_ID_EDMA_0}};
  // A DCORE's engine ids: EDMA 0 and 1, the MME, TPC 0-5, then its decoders.
  constexpr int kMmeOffset = 2, kTpcOffset = 3, kTpcs = 6;
  for (int d = 0; d < 4; ++d) {
    const Dcore& c = dcores[d];
    for (int e = 0; e < 2; ++e) {
      const EngineRef edma{EngineKind::kDma, 2 + 2 * d + e};
      m.streams(e == 0 ? c.edma0 : c.edma1, edma);
      m.engines_[static_cast<std::size_t>(c.engine_edma0 + e)] = edma;
    }
    m.streams(c.mme, {EngineKind::kMme, d});
    m.engines_[static_cast<std::size_t>(c.engine_edma0 + kMmeOffset)] =
        EngineRef{EngineKind::kMme, d};
    for (int t = 0; t < kTpcs; ++t) {
      const EngineRef tpc{EngineKind::kTpc, kTpcs * d + t};
      m.streams(c.tpc0 + 4u * static_cast<std::uint32_t>(t), tpc);
      m.engines_[static_cast<std::size_t>(c.engine_edma0 + kTpcOffset + t)] = tpc;
    }
  }
  m.streams(GAUDI2_QUEUE_ID_DCORE0_TPC_6_0, {EngineKind::kTpc, 4 * kTpcs});
  m.engines_[GAUDI2_DCORE0_ENGINE_ID_TPC_6] = EngineRef{EngineKind::kTpc, 4 * kTpcs};
  return m;
}

const QueueMap* QueueMap::find(std::uint32_t device_id) {
  static const QueueMap gaudi1_map = gaudi1(), gaudi2_map = gaudi2();
  if (device_id == kGaudiDeviceId) return &gaudi1_map;
  if (device_id == kGaudi2DeviceId) return &gaudi2_map;
  return nullptr;
}

const QueueMap& QueueMap::of(std::uint32_t device_id) {
  if (const QueueMap* m = find(device_id)) return *m;
  throw std::invalid_argument(
      fmt::format("PCI device id {:#06x}: the driver serves Gaudi1 ({:#06x}) and Gaudi2 ({:#06x})",
                  device_id, kGaudiDeviceId, kGaudi2DeviceId));
}

std::optional<QueueRef> QueueMap::queue(std::uint32_t id) const {
  return id < queues_.size() ? queues_[id] : std::nullopt;
}

std::uint32_t QueueMap::queue_id(EngineRef engine, int stream) const {
  for (std::uint32_t id = 0; id < queues_.size(); ++id) {
    const auto& q = queues_[id];
    if (q && q->engine == engine && q->stream == stream) return id;
  }
  throw std::out_of_range(fmt::format("{} has no queue for stream {} of {} engine {}", family_,
                                      stream,
                                      engine.kind == EngineKind::kDma   ? "DMA"
                                      : engine.kind == EngineKind::kMme ? "MME"
                                                                        : "TPC",
                                      engine.index));
}

std::optional<EngineRef> QueueMap::engine(int id) const {
  return id >= 0 && id < engine_ids() ? engines_[static_cast<std::size_t>(id)] : std::nullopt;
}

int QueueMap::most(EngineKind kind) const {
  int n = 0;
  for (const auto& q : queues_) {
    if (q && q->engine.kind == kind) n = std::max(n, q->engine.index + 1);
  }
  return n;
}

std::uint64_t qman_base(EngineRef engine) {
  switch (engine.kind) {
    case EngineKind::kDma:
      return chip::Chip::dma_qman_base(engine.index);
    case EngineKind::kMme:
      return chip::Chip::mme_qman_base(engine.index);
    case EngineKind::kTpc:
      break;
  }
  return chip::Chip::tpc_qman_base(engine.index);
}

}  // namespace podsim::driver
