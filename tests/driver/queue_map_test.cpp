// The families' uAPI ids against the engines they name: every queue id a map names is found
// again from its engine and stream, and the ids of engines the model lacks name none.
#include "driver/queue_map.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "drm/habanalabs_accel.h"

namespace podsim::driver {
namespace {

void expect_queue(const QueueMap& m, std::uint32_t id, EngineKind kind, int index, int stream,
                  bool host_facing) {
  const auto q = m.queue(id);
  ASSERT_TRUE(q.has_value()) << id;
  EXPECT_EQ(q->engine.kind, kind) << id;
  EXPECT_EQ(q->engine.index, index) << id;
  EXPECT_EQ(q->stream, stream) << id;
  EXPECT_EQ(q->host_facing, host_facing) << id;
}

TEST(QueueMap, Gaudi1sIdsNameItsDmaMmeAndTpcQueues) {
  const QueueMap& m = QueueMap::of(kGaudiDeviceId);
  EXPECT_EQ(m.family(), "Gaudi1");
  EXPECT_EQ(m.queue_ids(), static_cast<std::uint32_t>(GAUDI_QUEUE_ID_SIZE));
  expect_queue(m, GAUDI_QUEUE_ID_DMA_0_0, EngineKind::kDma, 0, 0, true);
  expect_queue(m, GAUDI_QUEUE_ID_DMA_1_3, EngineKind::kDma, 1, 3, true);
  expect_queue(m, GAUDI_QUEUE_ID_DMA_2_0, EngineKind::kDma, 2, 0, false);
  expect_queue(m, GAUDI_QUEUE_ID_MME_1_2, EngineKind::kMme, 1, 2, false);
  expect_queue(m, GAUDI_QUEUE_ID_TPC_7_3, EngineKind::kTpc, 7, 3, false);
  EXPECT_FALSE(m.queue(GAUDI_QUEUE_ID_CPU_PQ));
  EXPECT_FALSE(m.queue(GAUDI_QUEUE_ID_NIC_0_0));
  EXPECT_FALSE(m.queue(GAUDI_QUEUE_ID_SIZE));
  EXPECT_EQ(m.most(EngineKind::kDma), 8);
  EXPECT_EQ(m.most(EngineKind::kMme), 2);
  EXPECT_EQ(m.most(EngineKind::kTpc), 8);
  EXPECT_EQ(m.engine(GAUDI_ENGINE_ID_MME_2)->index, 0);  // the masters, in the chip's order
  EXPECT_EQ(m.engine(GAUDI_ENGINE_ID_MME_0)->index, 1);
  EXPECT_FALSE(m.engine(GAUDI_ENGINE_ID_MME_1));
  EXPECT_EQ(m.registers().bar, 2);
}

TEST(QueueMap, Gaudi2sDcoresAreNumberedOntoTheChipsEngines) {
  const QueueMap& m = QueueMap::of(kGaudi2DeviceId);
  EXPECT_EQ(m.family(), "Gaudi2");
  expect_queue(m, GAUDI2_QUEUE_ID_PDMA_0_0, EngineKind::kDma, 0, 0, true);
  expect_queue(m, GAUDI2_QUEUE_ID_PDMA_1_3, EngineKind::kDma, 1, 3, true);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE0_EDMA_0_0, EngineKind::kDma, 2, 0, false);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE3_EDMA_1_2, EngineKind::kDma, 9, 2, false);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE2_MME_0_1, EngineKind::kMme, 2, 1, false);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE1_TPC_3_1, EngineKind::kTpc, 9, 1, false);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE3_TPC_5_3, EngineKind::kTpc, 23, 3, false);
  expect_queue(m, GAUDI2_QUEUE_ID_DCORE0_TPC_6_0, EngineKind::kTpc, 24, 0, false);
  EXPECT_FALSE(m.queue(GAUDI2_QUEUE_ID_NIC_23_3));
  EXPECT_FALSE(m.queue(GAUDI2_QUEUE_ID_ROT_0_0));
  EXPECT_FALSE(m.queue(GAUDI2_QUEUE_ID_CPU_PQ));
  EXPECT_EQ(m.most(EngineKind::kDma), 10);
  EXPECT_EQ(m.most(EngineKind::kMme), 4);
  EXPECT_EQ(m.most(EngineKind::kTpc), 25);
  EXPECT_EQ(m.engine(GAUDI2_DCORE2_ENGINE_ID_TPC_4)->index, 16);
  EXPECT_EQ(m.engine(GAUDI2_ENGINE_ID_PDMA_1)->index, 1);
  EXPECT_FALSE(m.engine(GAUDI2_DCORE0_ENGINE_ID_DEC_0));
  EXPECT_EQ(m.registers().bar, 0);
}

TEST(QueueMap, EveryQueueIsFoundAgainFromItsEngineAndStream) {
  for (std::uint32_t device : {kGaudiDeviceId, kGaudi2DeviceId}) {
    const QueueMap& m = QueueMap::of(device);
    int named = 0;
    for (std::uint32_t id = 0; id < m.queue_ids(); ++id) {
      const auto q = m.queue(id);
      if (!q) continue;
      ++named;
      EXPECT_EQ(m.queue_id(q->engine, q->stream), id) << m.family() << " " << id;
    }
    EXPECT_EQ(named,
              4 * (m.most(EngineKind::kDma) + m.most(EngineKind::kMme) + m.most(EngineKind::kTpc)));
  }
}

TEST(QueueMap, OtherDevicesAndMissingEnginesAreRefused) {
  EXPECT_EQ(QueueMap::find(0x1030), nullptr);
  try {
    QueueMap::of(0x1030);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "PCI device id 0x1030: the driver serves Gaudi1 (0x1000) and Gaudi2 (0x1020)");
  }
  EXPECT_THROW(QueueMap::of(kGaudiDeviceId).queue_id({EngineKind::kTpc, 8}, 0), std::out_of_range);
  EXPECT_THROW(QueueMap::of(kGaudi2DeviceId).queue_id({EngineKind::kDma, 0}, 4), std::out_of_range);
}

}  // namespace
}  // namespace podsim::driver
