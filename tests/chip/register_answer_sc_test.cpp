// A bad register access gets one answer wherever it lands (core/register_access.h): the same TLM
// response and an address-error event from the block it reached, for the engines' shell (DMA,
// MME, TPC) and the queue and sync managers alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/system_file.h"
#include "core/kernel.h"
#include "hw/chip/chip.h"
#include "hw/system/system_model.h"
#include "hw/system/topology.h"

namespace podsim::chip {
namespace {

using ::testing::HasSubstr;

TEST(RegisterAnswer, IsTheSameForEveryBlock) {
  auto loaded = collectives::load_system_file("hls2", {});
  system::SystemModel m("system", loaded.config, system::build_topology(loaded.config),
                        system::ModelOptions{1, false});
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  Chip& c = m.chip(0);
  const struct {
    const char* block;
    std::uint64_t base;
  } blocks[] = {{"dma2", Chip::dma_core_base(2)},
                {"mme1", Chip::mme_desc_base(1)},
                {"tpc5", Chip::tpc_cfg_base(5)},
                {"tpc5_qman", Chip::tpc_qman_base(5)},
                {"sync_manager", Chip::sync_manager_base(1)}};
  for (const auto& b : blocks) {
    const std::size_t before = c.errors().size();
    std::string refusal;
    try {
      c.write_register(b.base + 0x102, 1);  // not a whole aligned word
    } catch (const std::out_of_range& e) {
      refusal = e.what();
    }
    EXPECT_THAT(refusal, HasSubstr("TLM_ADDRESS_ERROR_RESPONSE")) << b.block;
    ASSERT_EQ(c.errors().size(), before + 1) << b.block;
    const core::ErrorEvent& e = c.errors().back();
    EXPECT_EQ(e.kind, core::ErrorEvent::Kind::kAddressError) << b.block;
    EXPECT_THAT(e.block, HasSubstr(b.block));
    EXPECT_EQ(e.address, 0x102u) << b.block;
    EXPECT_EQ(e.detail,
              "a 4-byte register write at offset 0x102: registers take whole aligned 32-bit words")
        << b.block;
  }
}

}  // namespace
}  // namespace podsim::chip
