// Pins the Linux 6.4 habanalabs accel uAPI as driver/uapi/drm/habanalabs_accel.h states it:
// every structure's size and every field's offset and size (x86_64), the ioctl request numbers
// and the constants user space relies on. The numbers are those the kernel's own header gives
// when compiled (docs/driver.md; sources C12). A C compiler must agree with C++ on the sizes, since
// hl-thunk, a C program, shares these structures with the C++ driver model.
#include <gtest/gtest.h>

#include <cstddef>

#include "drm/habanalabs_accel.h"
#include "podsim/spec/gaudi1.h"

extern "C" {
extern const std::size_t podsim_uapi_c_sizes[];
extern const std::size_t podsim_uapi_c_count;
}

namespace {

TEST(UapiLayout, hl_info_hw_ip_info) {
  EXPECT_EQ(sizeof(struct hl_info_hw_ip_info), 304u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, sram_base_address), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->sram_base_address), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, dram_base_address), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->dram_base_address), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, dram_size), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->dram_size), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, sram_size), 24u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->sram_size), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, num_of_events), 28u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->num_of_events), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, device_id), 32u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->device_id), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, module_id), 36u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->module_id), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, decoder_enabled_mask), 40u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->decoder_enabled_mask), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, first_available_interrupt_id), 44u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->first_available_interrupt_id), 2u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, server_type), 46u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->server_type), 2u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, cpld_version), 48u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->cpld_version), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, psoc_pci_pll_nr), 52u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->psoc_pci_pll_nr), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, psoc_pci_pll_nf), 56u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->psoc_pci_pll_nf), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, psoc_pci_pll_od), 60u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->psoc_pci_pll_od), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, psoc_pci_pll_div_factor), 64u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->psoc_pci_pll_div_factor), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, tpc_enabled_mask), 68u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->tpc_enabled_mask), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, dram_enabled), 69u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->dram_enabled), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, security_enabled), 70u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->security_enabled), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, mme_master_slave_mode), 71u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->mme_master_slave_mode), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, cpucp_version), 72u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->cpucp_version), 128u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, card_name), 200u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->card_name), 16u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, tpc_enabled_mask_ext), 216u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->tpc_enabled_mask_ext), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, dram_page_size), 224u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->dram_page_size), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, edma_enabled_mask), 232u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->edma_enabled_mask), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, number_of_user_interrupts), 236u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->number_of_user_interrupts), 2u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved1), 238u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved1), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved2), 239u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved2), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved3), 240u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved3), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, device_mem_alloc_default_page_size), 248u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->device_mem_alloc_default_page_size), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved4), 256u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved4), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved5), 264u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved5), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved6), 272u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved6), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved7), 276u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved7), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, revision_id), 277u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->revision_id), 1u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, tpc_interrupt_id), 278u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->tpc_interrupt_id), 2u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, rotator_enabled_mask), 280u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->rotator_enabled_mask), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved9), 284u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved9), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, engine_core_interrupt_reg_addr), 288u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->engine_core_interrupt_reg_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_ip_info, reserved_dram_size), 296u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_ip_info*)nullptr)->reserved_dram_size), 8u);
}

TEST(UapiLayout, hl_info_dram_usage) {
  EXPECT_EQ(sizeof(struct hl_info_dram_usage), 16u);
  EXPECT_EQ(offsetof(struct hl_info_dram_usage, dram_free_mem), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_dram_usage*)nullptr)->dram_free_mem), 8u);
  EXPECT_EQ(offsetof(struct hl_info_dram_usage, ctx_dram_mem), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_dram_usage*)nullptr)->ctx_dram_mem), 8u);
}

TEST(UapiLayout, hl_info_hw_idle) {
  EXPECT_EQ(sizeof(struct hl_info_hw_idle), 40u);
  EXPECT_EQ(offsetof(struct hl_info_hw_idle, is_idle), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_idle*)nullptr)->is_idle), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_idle, busy_engines_mask), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_idle*)nullptr)->busy_engines_mask), 4u);
  EXPECT_EQ(offsetof(struct hl_info_hw_idle, busy_engines_mask_ext), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_idle*)nullptr)->busy_engines_mask_ext), 32u);
}

TEST(UapiLayout, hl_info_device_status) {
  EXPECT_EQ(sizeof(struct hl_info_device_status), 8u);
  EXPECT_EQ(offsetof(struct hl_info_device_status, status), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_device_status*)nullptr)->status), 4u);
  EXPECT_EQ(offsetof(struct hl_info_device_status, pad), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_device_status*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_info_device_utilization) {
  EXPECT_EQ(sizeof(struct hl_info_device_utilization), 8u);
  EXPECT_EQ(offsetof(struct hl_info_device_utilization, utilization), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_device_utilization*)nullptr)->utilization), 4u);
  EXPECT_EQ(offsetof(struct hl_info_device_utilization, pad), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_device_utilization*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_info_clk_rate) {
  EXPECT_EQ(sizeof(struct hl_info_clk_rate), 8u);
  EXPECT_EQ(offsetof(struct hl_info_clk_rate, cur_clk_rate_mhz), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_rate*)nullptr)->cur_clk_rate_mhz), 4u);
  EXPECT_EQ(offsetof(struct hl_info_clk_rate, max_clk_rate_mhz), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_rate*)nullptr)->max_clk_rate_mhz), 4u);
}

TEST(UapiLayout, hl_info_reset_count) {
  EXPECT_EQ(sizeof(struct hl_info_reset_count), 8u);
  EXPECT_EQ(offsetof(struct hl_info_reset_count, hard_reset_cnt), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_reset_count*)nullptr)->hard_reset_cnt), 4u);
  EXPECT_EQ(offsetof(struct hl_info_reset_count, soft_reset_cnt), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_reset_count*)nullptr)->soft_reset_cnt), 4u);
}

TEST(UapiLayout, hl_info_time_sync) {
  EXPECT_EQ(sizeof(struct hl_info_time_sync), 16u);
  EXPECT_EQ(offsetof(struct hl_info_time_sync, device_time), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_time_sync*)nullptr)->device_time), 8u);
  EXPECT_EQ(offsetof(struct hl_info_time_sync, host_time), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_time_sync*)nullptr)->host_time), 8u);
}

TEST(UapiLayout, hl_info_pci_counters) {
  EXPECT_EQ(sizeof(struct hl_info_pci_counters), 24u);
  EXPECT_EQ(offsetof(struct hl_info_pci_counters, rx_throughput), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_pci_counters*)nullptr)->rx_throughput), 8u);
  EXPECT_EQ(offsetof(struct hl_info_pci_counters, tx_throughput), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_pci_counters*)nullptr)->tx_throughput), 8u);
  EXPECT_EQ(offsetof(struct hl_info_pci_counters, replay_cnt), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_pci_counters*)nullptr)->replay_cnt), 8u);
}

TEST(UapiLayout, hl_info_clk_throttle) {
  EXPECT_EQ(sizeof(struct hl_info_clk_throttle), 40u);
  EXPECT_EQ(offsetof(struct hl_info_clk_throttle, clk_throttling_reason), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_throttle*)nullptr)->clk_throttling_reason), 4u);
  EXPECT_EQ(offsetof(struct hl_info_clk_throttle, pad), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_throttle*)nullptr)->pad), 4u);
  EXPECT_EQ(offsetof(struct hl_info_clk_throttle, clk_throttling_timestamp_us), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_throttle*)nullptr)->clk_throttling_timestamp_us), 16u);
  EXPECT_EQ(offsetof(struct hl_info_clk_throttle, clk_throttling_duration_ns), 24u);
  EXPECT_EQ(sizeof(((struct hl_info_clk_throttle*)nullptr)->clk_throttling_duration_ns), 16u);
}

TEST(UapiLayout, hl_info_energy) {
  EXPECT_EQ(sizeof(struct hl_info_energy), 8u);
  EXPECT_EQ(offsetof(struct hl_info_energy, total_energy_consumption), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_energy*)nullptr)->total_energy_consumption), 8u);
}

TEST(UapiLayout, hl_pll_frequency_info) {
  EXPECT_EQ(sizeof(struct hl_pll_frequency_info), 8u);
  EXPECT_EQ(offsetof(struct hl_pll_frequency_info, output), 0u);
  EXPECT_EQ(sizeof(((struct hl_pll_frequency_info*)nullptr)->output), 8u);
}

TEST(UapiLayout, hl_open_stats_info) {
  EXPECT_EQ(sizeof(struct hl_open_stats_info), 24u);
  EXPECT_EQ(offsetof(struct hl_open_stats_info, open_counter), 0u);
  EXPECT_EQ(sizeof(((struct hl_open_stats_info*)nullptr)->open_counter), 8u);
  EXPECT_EQ(offsetof(struct hl_open_stats_info, last_open_period_ms), 8u);
  EXPECT_EQ(sizeof(((struct hl_open_stats_info*)nullptr)->last_open_period_ms), 8u);
  EXPECT_EQ(offsetof(struct hl_open_stats_info, is_compute_ctx_active), 16u);
  EXPECT_EQ(sizeof(((struct hl_open_stats_info*)nullptr)->is_compute_ctx_active), 1u);
  EXPECT_EQ(offsetof(struct hl_open_stats_info, compute_ctx_in_release), 17u);
  EXPECT_EQ(sizeof(((struct hl_open_stats_info*)nullptr)->compute_ctx_in_release), 1u);
  EXPECT_EQ(offsetof(struct hl_open_stats_info, pad), 18u);
  EXPECT_EQ(sizeof(((struct hl_open_stats_info*)nullptr)->pad), 6u);
}

TEST(UapiLayout, hl_power_info) {
  EXPECT_EQ(sizeof(struct hl_power_info), 8u);
  EXPECT_EQ(offsetof(struct hl_power_info, power), 0u);
  EXPECT_EQ(sizeof(((struct hl_power_info*)nullptr)->power), 8u);
}

TEST(UapiLayout, hl_info_sync_manager) {
  EXPECT_EQ(sizeof(struct hl_info_sync_manager), 16u);
  EXPECT_EQ(offsetof(struct hl_info_sync_manager, first_available_sync_object), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_sync_manager*)nullptr)->first_available_sync_object), 4u);
  EXPECT_EQ(offsetof(struct hl_info_sync_manager, first_available_monitor), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_sync_manager*)nullptr)->first_available_monitor), 4u);
  EXPECT_EQ(offsetof(struct hl_info_sync_manager, first_available_cq), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_sync_manager*)nullptr)->first_available_cq), 4u);
  EXPECT_EQ(offsetof(struct hl_info_sync_manager, reserved), 12u);
  EXPECT_EQ(sizeof(((struct hl_info_sync_manager*)nullptr)->reserved), 4u);
}

TEST(UapiLayout, hl_info_cs_counters) {
  EXPECT_EQ(sizeof(struct hl_info_cs_counters), 96u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_out_of_mem_drop_cnt), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_out_of_mem_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_out_of_mem_drop_cnt), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_out_of_mem_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_parsing_drop_cnt), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_parsing_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_parsing_drop_cnt), 24u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_parsing_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_queue_full_drop_cnt), 32u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_queue_full_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_queue_full_drop_cnt), 40u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_queue_full_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_device_in_reset_drop_cnt), 48u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_device_in_reset_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_device_in_reset_drop_cnt), 56u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_device_in_reset_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_max_cs_in_flight_drop_cnt), 64u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_max_cs_in_flight_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_max_cs_in_flight_drop_cnt), 72u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_max_cs_in_flight_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, total_validation_drop_cnt), 80u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->total_validation_drop_cnt), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_counters, ctx_validation_drop_cnt), 88u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_counters*)nullptr)->ctx_validation_drop_cnt), 8u);
}

TEST(UapiLayout, hl_info_last_err_open_dev_time) {
  EXPECT_EQ(sizeof(struct hl_info_last_err_open_dev_time), 8u);
  EXPECT_EQ(offsetof(struct hl_info_last_err_open_dev_time, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_last_err_open_dev_time*)nullptr)->timestamp), 8u);
}

TEST(UapiLayout, hl_info_cs_timeout_event) {
  EXPECT_EQ(sizeof(struct hl_info_cs_timeout_event), 16u);
  EXPECT_EQ(offsetof(struct hl_info_cs_timeout_event, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_timeout_event*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_info_cs_timeout_event, seq), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_cs_timeout_event*)nullptr)->seq), 8u);
}

TEST(UapiLayout, hl_info_razwi_event) {
  EXPECT_EQ(sizeof(struct hl_info_razwi_event), 280u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, addr), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->addr), 8u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, engine_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->engine_id), 256u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, num_of_possible_engines), 272u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->num_of_possible_engines), 2u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, flags), 274u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->flags), 1u);
  EXPECT_EQ(offsetof(struct hl_info_razwi_event, pad), 275u);
  EXPECT_EQ(sizeof(((struct hl_info_razwi_event*)nullptr)->pad), 5u);
}

TEST(UapiLayout, hl_info_undefined_opcode_event) {
  EXPECT_EQ(sizeof(struct hl_info_undefined_opcode_event), 288u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, cb_addr_streams), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->cb_addr_streams), 256u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, cq_addr), 264u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->cq_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, cq_size), 272u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->cq_size), 4u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, cb_addr_streams_len), 276u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->cb_addr_streams_len), 4u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, engine_id), 280u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->engine_id), 4u);
  EXPECT_EQ(offsetof(struct hl_info_undefined_opcode_event, stream_id), 284u);
  EXPECT_EQ(sizeof(((struct hl_info_undefined_opcode_event*)nullptr)->stream_id), 4u);
}

TEST(UapiLayout, hl_info_hw_err_event) {
  EXPECT_EQ(sizeof(struct hl_info_hw_err_event), 16u);
  EXPECT_EQ(offsetof(struct hl_info_hw_err_event, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_err_event*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_info_hw_err_event, event_id), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_err_event*)nullptr)->event_id), 2u);
  EXPECT_EQ(offsetof(struct hl_info_hw_err_event, pad), 10u);
  EXPECT_EQ(sizeof(((struct hl_info_hw_err_event*)nullptr)->pad), 6u);
}

TEST(UapiLayout, hl_info_fw_err_event) {
  EXPECT_EQ(sizeof(struct hl_info_fw_err_event), 16u);
  EXPECT_EQ(offsetof(struct hl_info_fw_err_event, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_fw_err_event*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_info_fw_err_event, err_type), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_fw_err_event*)nullptr)->err_type), 2u);
  EXPECT_EQ(offsetof(struct hl_info_fw_err_event, event_id), 10u);
  EXPECT_EQ(sizeof(((struct hl_info_fw_err_event*)nullptr)->event_id), 2u);
  EXPECT_EQ(offsetof(struct hl_info_fw_err_event, pad), 12u);
  EXPECT_EQ(sizeof(((struct hl_info_fw_err_event*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_info_dev_memalloc_page_sizes) {
  EXPECT_EQ(sizeof(struct hl_info_dev_memalloc_page_sizes), 8u);
  EXPECT_EQ(offsetof(struct hl_info_dev_memalloc_page_sizes, page_order_bitmask), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_dev_memalloc_page_sizes*)nullptr)->page_order_bitmask), 8u);
}

TEST(UapiLayout, hl_info_sec_attest) {
  EXPECT_EQ(sizeof(struct hl_info_sec_attest), 3592u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, nonce), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->nonce), 4u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pcr_quote_len), 4u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pcr_quote_len), 2u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pub_data_len), 6u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pub_data_len), 2u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, certificate_len), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->certificate_len), 2u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pcr_num_reg), 10u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pcr_num_reg), 1u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pcr_reg_len), 11u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pcr_reg_len), 1u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, quote_sig_len), 12u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->quote_sig_len), 1u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pcr_data), 13u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pcr_data), 256u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pcr_quote), 269u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pcr_quote), 510u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, quote_sig), 779u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->quote_sig), 255u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, public_data), 1034u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->public_data), 510u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, certificate), 1544u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->certificate), 2046u);
  EXPECT_EQ(offsetof(struct hl_info_sec_attest, pad0), 3590u);
  EXPECT_EQ(sizeof(((struct hl_info_sec_attest*)nullptr)->pad0), 2u);
}

TEST(UapiLayout, hl_page_fault_info) {
  EXPECT_EQ(sizeof(struct hl_page_fault_info), 24u);
  EXPECT_EQ(offsetof(struct hl_page_fault_info, timestamp), 0u);
  EXPECT_EQ(sizeof(((struct hl_page_fault_info*)nullptr)->timestamp), 8u);
  EXPECT_EQ(offsetof(struct hl_page_fault_info, addr), 8u);
  EXPECT_EQ(sizeof(((struct hl_page_fault_info*)nullptr)->addr), 8u);
  EXPECT_EQ(offsetof(struct hl_page_fault_info, engine_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_page_fault_info*)nullptr)->engine_id), 2u);
  EXPECT_EQ(offsetof(struct hl_page_fault_info, pad), 18u);
  EXPECT_EQ(sizeof(((struct hl_page_fault_info*)nullptr)->pad), 6u);
}

TEST(UapiLayout, hl_user_mapping) {
  EXPECT_EQ(sizeof(struct hl_user_mapping), 16u);
  EXPECT_EQ(offsetof(struct hl_user_mapping, dev_va), 0u);
  EXPECT_EQ(sizeof(((struct hl_user_mapping*)nullptr)->dev_va), 8u);
  EXPECT_EQ(offsetof(struct hl_user_mapping, size), 8u);
  EXPECT_EQ(sizeof(((struct hl_user_mapping*)nullptr)->size), 8u);
}

TEST(UapiLayout, hl_info_args) {
  EXPECT_EQ(sizeof(struct hl_info_args), 24u);
  EXPECT_EQ(offsetof(struct hl_info_args, return_pointer), 0u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->return_pointer), 8u);
  EXPECT_EQ(offsetof(struct hl_info_args, return_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->return_size), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, op), 12u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->op), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, dcore_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->dcore_id), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, ctx_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->ctx_id), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, period_ms), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->period_ms), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, pll_index), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->pll_index), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, eventfd), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->eventfd), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, user_buffer_actual_size), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->user_buffer_actual_size), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, sec_attest_nonce), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->sec_attest_nonce), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, array_size), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->array_size), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, fw_sub_opcode), 16u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->fw_sub_opcode), 4u);
  EXPECT_EQ(offsetof(struct hl_info_args, pad), 20u);
  EXPECT_EQ(sizeof(((struct hl_info_args*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_cb_in) {
  EXPECT_EQ(sizeof(struct hl_cb_in), 24u);
  EXPECT_EQ(offsetof(struct hl_cb_in, cb_handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_cb_in*)nullptr)->cb_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_cb_in, op), 8u);
  EXPECT_EQ(sizeof(((struct hl_cb_in*)nullptr)->op), 4u);
  EXPECT_EQ(offsetof(struct hl_cb_in, cb_size), 12u);
  EXPECT_EQ(sizeof(((struct hl_cb_in*)nullptr)->cb_size), 4u);
  EXPECT_EQ(offsetof(struct hl_cb_in, ctx_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_cb_in*)nullptr)->ctx_id), 4u);
  EXPECT_EQ(offsetof(struct hl_cb_in, flags), 20u);
  EXPECT_EQ(sizeof(((struct hl_cb_in*)nullptr)->flags), 4u);
}

TEST(UapiLayout, hl_cb_out) {
  EXPECT_EQ(sizeof(struct hl_cb_out), 8u);
  EXPECT_EQ(offsetof(struct hl_cb_out, cb_handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_cb_out*)nullptr)->cb_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_cb_out, usage_cnt), 0u);
  EXPECT_EQ(sizeof(((struct hl_cb_out*)nullptr)->usage_cnt), 4u);
  EXPECT_EQ(offsetof(struct hl_cb_out, pad), 4u);
  EXPECT_EQ(sizeof(((struct hl_cb_out*)nullptr)->pad), 4u);
  EXPECT_EQ(offsetof(struct hl_cb_out, device_va), 0u);
  EXPECT_EQ(sizeof(((struct hl_cb_out*)nullptr)->device_va), 8u);
}

TEST(UapiLayout, hl_cb_args) {
  EXPECT_EQ(sizeof(union hl_cb_args), 24u);
  EXPECT_EQ(offsetof(union hl_cb_args, in.cb_handle), 0u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->in.cb_handle), 8u);
  EXPECT_EQ(offsetof(union hl_cb_args, in.op), 8u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->in.op), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, in.cb_size), 12u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->in.cb_size), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, in.ctx_id), 16u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->in.ctx_id), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, in.flags), 20u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->in.flags), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, out.cb_handle), 0u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->out.cb_handle), 8u);
  EXPECT_EQ(offsetof(union hl_cb_args, out.usage_cnt), 0u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->out.usage_cnt), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, out.pad), 4u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->out.pad), 4u);
  EXPECT_EQ(offsetof(union hl_cb_args, out.device_va), 0u);
  EXPECT_EQ(sizeof(((union hl_cb_args*)nullptr)->out.device_va), 8u);
}

TEST(UapiLayout, hl_cs_chunk) {
  EXPECT_EQ(sizeof(struct hl_cs_chunk), 64u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, cb_handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->cb_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, signal_seq_arr), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->signal_seq_arr), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, encaps_signal_seq), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->encaps_signal_seq), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, queue_index), 8u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->queue_index), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, cb_size), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->cb_size), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, num_signal_seq_arr), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->num_signal_seq_arr), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, encaps_signal_offset), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->encaps_signal_offset), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, cs_chunk_flags), 16u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->cs_chunk_flags), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, collective_engine_id), 20u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->collective_engine_id), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_chunk, pad), 24u);
  EXPECT_EQ(sizeof(((struct hl_cs_chunk*)nullptr)->pad), 40u);
}

TEST(UapiLayout, hl_cs_in) {
  EXPECT_EQ(sizeof(struct hl_cs_in), 48u);
  EXPECT_EQ(offsetof(struct hl_cs_in, chunks_restore), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->chunks_restore), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_in, chunks_execute), 8u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->chunks_execute), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_in, engine_cores), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->engine_cores), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_in, num_engine_cores), 8u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->num_engine_cores), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, core_command), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->core_command), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, engines), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->engines), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_in, num_engines), 8u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->num_engines), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, engine_command), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->engine_command), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, seq), 16u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->seq), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_in, encaps_sig_handle_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->encaps_sig_handle_id), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, encaps_signals_count), 16u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->encaps_signals_count), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, encaps_signals_q_idx), 20u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->encaps_signals_q_idx), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, num_chunks_restore), 24u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->num_chunks_restore), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, num_chunks_execute), 28u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->num_chunks_execute), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, timeout), 32u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->timeout), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, cs_flags), 36u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->cs_flags), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, ctx_id), 40u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->ctx_id), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_in, pad), 44u);
  EXPECT_EQ(sizeof(((struct hl_cs_in*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_cs_out) {
  EXPECT_EQ(sizeof(struct hl_cs_out), 24u);
  EXPECT_EQ(offsetof(struct hl_cs_out, seq), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->seq), 8u);
  EXPECT_EQ(offsetof(struct hl_cs_out, handle_id), 0u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->handle_id), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_out, count), 4u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->count), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_out, status), 8u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->status), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_out, sob_base_addr_offset), 12u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->sob_base_addr_offset), 4u);
  EXPECT_EQ(offsetof(struct hl_cs_out, sob_count_before_submission), 16u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->sob_count_before_submission), 2u);
  EXPECT_EQ(offsetof(struct hl_cs_out, pad), 18u);
  EXPECT_EQ(sizeof(((struct hl_cs_out*)nullptr)->pad), 6u);
}

TEST(UapiLayout, hl_cs_args) {
  EXPECT_EQ(sizeof(union hl_cs_args), 48u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.chunks_restore), 0u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.chunks_restore), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.chunks_execute), 8u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.chunks_execute), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.engine_cores), 0u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.engine_cores), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.num_engine_cores), 8u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.num_engine_cores), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.core_command), 12u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.core_command), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.engines), 0u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.engines), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.num_engines), 8u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.num_engines), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.engine_command), 12u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.engine_command), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.seq), 16u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.seq), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.encaps_sig_handle_id), 16u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.encaps_sig_handle_id), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.encaps_signals_count), 16u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.encaps_signals_count), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.encaps_signals_q_idx), 20u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.encaps_signals_q_idx), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.num_chunks_restore), 24u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.num_chunks_restore), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.num_chunks_execute), 28u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.num_chunks_execute), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.timeout), 32u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.timeout), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.cs_flags), 36u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.cs_flags), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.ctx_id), 40u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.ctx_id), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, in.pad), 44u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->in.pad), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.seq), 0u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.seq), 8u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.handle_id), 0u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.handle_id), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.count), 4u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.count), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.status), 8u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.status), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.sob_base_addr_offset), 12u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.sob_base_addr_offset), 4u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.sob_count_before_submission), 16u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.sob_count_before_submission), 2u);
  EXPECT_EQ(offsetof(union hl_cs_args, out.pad), 18u);
  EXPECT_EQ(sizeof(((union hl_cs_args*)nullptr)->out.pad), 6u);
}

TEST(UapiLayout, hl_wait_cs_in) {
  EXPECT_EQ(sizeof(struct hl_wait_cs_in), 56u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, seq), 0u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->seq), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, timeout_us), 8u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->timeout_us), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->addr), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, cq_counters_handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->cq_counters_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, target), 8u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->target), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, ctx_id), 16u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->ctx_id), 4u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, flags), 20u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->flags), 4u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, seq_arr_len), 24u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->seq_arr_len), 1u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, pad), 25u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->pad), 7u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, interrupt_timeout_us), 24u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->interrupt_timeout_us), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, cq_counters_offset), 32u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->cq_counters_offset), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, timestamp_handle), 40u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->timestamp_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_in, timestamp_offset), 48u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_in*)nullptr)->timestamp_offset), 8u);
}

TEST(UapiLayout, hl_wait_cs_out) {
  EXPECT_EQ(sizeof(struct hl_wait_cs_out), 24u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_out, status), 0u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_out*)nullptr)->status), 4u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_out, flags), 4u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_out*)nullptr)->flags), 4u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_out, timestamp_nsec), 8u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_out*)nullptr)->timestamp_nsec), 8u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_out, cs_completion_map), 16u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_out*)nullptr)->cs_completion_map), 4u);
  EXPECT_EQ(offsetof(struct hl_wait_cs_out, pad), 20u);
  EXPECT_EQ(sizeof(((struct hl_wait_cs_out*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_wait_cs_args) {
  EXPECT_EQ(sizeof(union hl_wait_cs_args), 56u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.seq), 0u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.seq), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.timeout_us), 8u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.timeout_us), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.addr), 0u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.addr), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.cq_counters_handle), 0u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.cq_counters_handle), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.target), 8u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.target), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.ctx_id), 16u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.ctx_id), 4u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.flags), 20u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.flags), 4u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.seq_arr_len), 24u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.seq_arr_len), 1u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.pad), 25u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.pad), 7u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.interrupt_timeout_us), 24u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.interrupt_timeout_us), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.cq_counters_offset), 32u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.cq_counters_offset), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.timestamp_handle), 40u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.timestamp_handle), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, in.timestamp_offset), 48u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->in.timestamp_offset), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, out.status), 0u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->out.status), 4u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, out.flags), 4u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->out.flags), 4u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, out.timestamp_nsec), 8u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->out.timestamp_nsec), 8u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, out.cs_completion_map), 16u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->out.cs_completion_map), 4u);
  EXPECT_EQ(offsetof(union hl_wait_cs_args, out.pad), 20u);
  EXPECT_EQ(sizeof(((union hl_wait_cs_args*)nullptr)->out.pad), 4u);
}

TEST(UapiLayout, hl_mem_in) {
  EXPECT_EQ(sizeof(struct hl_mem_in), 40u);
  EXPECT_EQ(offsetof(struct hl_mem_in, alloc.mem_size), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->alloc.mem_size), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, alloc.page_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->alloc.page_size), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, free.handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->free.handle), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_device.hint_addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_device.hint_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_device.handle), 8u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_device.handle), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_host.host_virt_addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_host.host_virt_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_host.hint_addr), 8u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_host.hint_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_host.mem_size), 16u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_host.mem_size), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, map_block.block_addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->map_block.block_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, unmap.device_virt_addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->unmap.device_virt_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, export_dmabuf_fd.addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->export_dmabuf_fd.addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, export_dmabuf_fd.mem_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->export_dmabuf_fd.mem_size), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, export_dmabuf_fd.offset), 16u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->export_dmabuf_fd.offset), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_in, op), 24u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->op), 4u);
  EXPECT_EQ(offsetof(struct hl_mem_in, flags), 28u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->flags), 4u);
  EXPECT_EQ(offsetof(struct hl_mem_in, ctx_id), 32u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->ctx_id), 4u);
  EXPECT_EQ(offsetof(struct hl_mem_in, num_of_elements), 36u);
  EXPECT_EQ(sizeof(((struct hl_mem_in*)nullptr)->num_of_elements), 4u);
}

TEST(UapiLayout, hl_mem_out) {
  EXPECT_EQ(sizeof(struct hl_mem_out), 16u);
  EXPECT_EQ(offsetof(struct hl_mem_out, device_virt_addr), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->device_virt_addr), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_out, handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->handle), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_out, block_handle), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->block_handle), 8u);
  EXPECT_EQ(offsetof(struct hl_mem_out, block_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->block_size), 4u);
  EXPECT_EQ(offsetof(struct hl_mem_out, pad), 12u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->pad), 4u);
  EXPECT_EQ(offsetof(struct hl_mem_out, fd), 0u);
  EXPECT_EQ(sizeof(((struct hl_mem_out*)nullptr)->fd), 4u);
}

TEST(UapiLayout, hl_mem_args) {
  EXPECT_EQ(sizeof(union hl_mem_args), 40u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.alloc.mem_size), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.alloc.mem_size), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.alloc.page_size), 8u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.alloc.page_size), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.free.handle), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.free.handle), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_device.hint_addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_device.hint_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_device.handle), 8u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_device.handle), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_host.host_virt_addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_host.host_virt_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_host.hint_addr), 8u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_host.hint_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_host.mem_size), 16u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_host.mem_size), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.map_block.block_addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.map_block.block_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.unmap.device_virt_addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.unmap.device_virt_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.export_dmabuf_fd.addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.export_dmabuf_fd.addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.export_dmabuf_fd.mem_size), 8u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.export_dmabuf_fd.mem_size), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.export_dmabuf_fd.offset), 16u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.export_dmabuf_fd.offset), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.op), 24u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.op), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.flags), 28u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.flags), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.ctx_id), 32u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.ctx_id), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, in.num_of_elements), 36u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->in.num_of_elements), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.device_virt_addr), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.device_virt_addr), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.handle), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.handle), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.block_handle), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.block_handle), 8u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.block_size), 8u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.block_size), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.pad), 12u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.pad), 4u);
  EXPECT_EQ(offsetof(union hl_mem_args, out.fd), 0u);
  EXPECT_EQ(sizeof(((union hl_mem_args*)nullptr)->out.fd), 4u);
}

TEST(UapiLayout, hl_debug_params_etr) {
  EXPECT_EQ(sizeof(struct hl_debug_params_etr), 24u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etr, buffer_address), 0u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etr*)nullptr)->buffer_address), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etr, buffer_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etr*)nullptr)->buffer_size), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etr, sink_mode), 16u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etr*)nullptr)->sink_mode), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etr, pad), 20u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etr*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_debug_params_etf) {
  EXPECT_EQ(sizeof(struct hl_debug_params_etf), 24u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etf, buffer_address), 0u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etf*)nullptr)->buffer_address), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etf, buffer_size), 8u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etf*)nullptr)->buffer_size), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etf, sink_mode), 16u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etf*)nullptr)->sink_mode), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_etf, pad), 20u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_etf*)nullptr)->pad), 4u);
}

TEST(UapiLayout, hl_debug_params_stm) {
  EXPECT_EQ(sizeof(struct hl_debug_params_stm), 24u);
  EXPECT_EQ(offsetof(struct hl_debug_params_stm, he_mask), 0u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_stm*)nullptr)->he_mask), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_stm, sp_mask), 8u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_stm*)nullptr)->sp_mask), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_stm, id), 16u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_stm*)nullptr)->id), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_stm, frequency), 20u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_stm*)nullptr)->frequency), 4u);
}

TEST(UapiLayout, hl_debug_params_bmon) {
  EXPECT_EQ(sizeof(struct hl_debug_params_bmon), 80u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, start_addr0), 0u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->start_addr0), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, addr_mask0), 8u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->addr_mask0), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, start_addr1), 16u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->start_addr1), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, addr_mask1), 24u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->addr_mask1), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, bw_win), 32u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->bw_win), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, win_capture), 36u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->win_capture), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, id), 40u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->id), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, control), 44u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->control), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, start_addr2), 48u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->start_addr2), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, end_addr2), 56u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->end_addr2), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, start_addr3), 64u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->start_addr3), 8u);
  EXPECT_EQ(offsetof(struct hl_debug_params_bmon, end_addr3), 72u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_bmon*)nullptr)->end_addr3), 8u);
}

TEST(UapiLayout, hl_debug_params_spmu) {
  EXPECT_EQ(sizeof(struct hl_debug_params_spmu), 96u);
  EXPECT_EQ(offsetof(struct hl_debug_params_spmu, event_types), 0u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_spmu*)nullptr)->event_types), 80u);
  EXPECT_EQ(offsetof(struct hl_debug_params_spmu, event_types_num), 80u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_spmu*)nullptr)->event_types_num), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_spmu, pmtrc_val), 84u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_spmu*)nullptr)->pmtrc_val), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_spmu, trc_ctrl_host_val), 88u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_spmu*)nullptr)->trc_ctrl_host_val), 4u);
  EXPECT_EQ(offsetof(struct hl_debug_params_spmu, trc_en_host_val), 92u);
  EXPECT_EQ(sizeof(((struct hl_debug_params_spmu*)nullptr)->trc_en_host_val), 4u);
}
TEST(UapiLayout, hl_debug_args) {
  EXPECT_EQ(sizeof(struct hl_debug_args), 40u);
  const std::size_t offsets[] = {
      offsetof(hl_debug_args, input_ptr),  offsetof(hl_debug_args, output_ptr),
      offsetof(hl_debug_args, input_size), offsetof(hl_debug_args, output_size),
      offsetof(hl_debug_args, op),         offsetof(hl_debug_args, reg_idx),
      offsetof(hl_debug_args, enable),     offsetof(hl_debug_args, ctx_id)};
  const std::size_t expected[] = {0, 8, 16, 20, 24, 28, 32, 36};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(offsets[i], expected[i]) << "field " << i;
}

// The request numbers are _IOWR('H', n, argument): direction, size, type and number in one word.
TEST(UapiIoctls, RequestNumbersAreThoseOfLinux64) {
  EXPECT_EQ(HL_IOCTL_INFO, 0xC0184801u);
  EXPECT_EQ(HL_IOCTL_CB, 0xC0184802u);
  EXPECT_EQ(HL_IOCTL_CS, 0xC0304803u);
  EXPECT_EQ(HL_IOCTL_WAIT_CS, 0xC0384804u);
  EXPECT_EQ(HL_IOCTL_MEMORY, 0xC0284805u);
  EXPECT_EQ(HL_IOCTL_DEBUG, 0xC0284806u);
  EXPECT_EQ(HL_COMMAND_START, 1);
  EXPECT_EQ(HL_COMMAND_END, 7);
}

TEST(UapiConstants, QueueAndEngineIdsCountAsTheDriversDo) {
  EXPECT_EQ(GOYA_QUEUE_ID_SIZE, 15);
  EXPECT_EQ(GAUDI_QUEUE_ID_CPU_PQ, 8);
  EXPECT_EQ(GAUDI_QUEUE_ID_DMA_2_0, 9);
  EXPECT_EQ(GAUDI_QUEUE_ID_MME_0_0, 33);
  EXPECT_EQ(GAUDI_QUEUE_ID_TPC_0_0, 41);
  EXPECT_EQ(GAUDI_QUEUE_ID_TPC_7_3, 72);
  EXPECT_EQ(GAUDI_QUEUE_ID_NIC_0_0, 73);
  EXPECT_EQ(GAUDI_QUEUE_ID_SIZE, 113);
  EXPECT_EQ(GAUDI2_QUEUE_ID_DCORE0_TPC_6_0, 44);
  EXPECT_EQ(GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0, 48);
  EXPECT_EQ(GAUDI2_QUEUE_ID_NIC_0_0, 156);
  EXPECT_EQ(GAUDI2_QUEUE_ID_ROT_0_0, 252);
  EXPECT_EQ(GAUDI2_QUEUE_ID_CPU_PQ, 260);
  EXPECT_EQ(GAUDI2_QUEUE_ID_SIZE, 261);
  EXPECT_EQ(GAUDI_ENGINE_ID_MME_0, 8);
  EXPECT_EQ(GAUDI_ENGINE_ID_TPC_0, 12);
  EXPECT_EQ(GAUDI_ENGINE_ID_SIZE, 30);
  EXPECT_EQ(GAUDI2_DCORE0_ENGINE_ID_TPC_6, 44);
  EXPECT_EQ(GAUDI2_ENGINE_ID_NIC0_0, 51);
  EXPECT_EQ(GAUDI2_ENGINE_ID_SIZE, 79);
  EXPECT_EQ(HL_GAUDI_PLL_MAX, 10);
  EXPECT_EQ(HL_GAUDI2_PLL_MAX, 12);
}

TEST(UapiConstants, OpcodesFlagsAndLimits) {
  EXPECT_EQ(HL_INFO_DEVICE_UTILIZATION, 6);
  EXPECT_EQ(HL_INFO_DRAM_REPLACED_ROWS, 21);
  EXPECT_EQ(HL_INFO_FW_ERR_EVENT, 37);
  EXPECT_EQ(HL_MAX_CB_SIZE, 0x1FFFE0);
  EXPECT_EQ(HL_MAX_JOBS_PER_CS, 512);
  EXPECT_EQ(HL_CS_FLAGS_ENGINES_COMMAND, 0x10000);
  EXPECT_EQ(HL_WAIT_CS_FLAGS_INTERRUPT_MASK, 0xFFF00000u);
  EXPECT_EQ(HL_WAIT_MULTI_CS_LIST_MAX_LEN, 32);
  EXPECT_EQ(HL_MEM_PREFETCH, 0x40);
  EXPECT_EQ(HL_ENGINES_DATA_MAX_SIZE, 1 << 20);
  EXPECT_EQ(HL_RAZWI_NA_ENG_ID, 0xFFFF);
  EXPECT_EQ(HL_NOTIFIER_EVENT_CRITICL_FW_ERR, 1ull << 10);
  EXPECT_EQ(HL_SERVER_GAUDI2_TYPE1, 7);
  EXPECT_EQ(HL_DEVICE_STATUS_LAST, 5);
  EXPECT_EQ(GAUDI_FIRST_AVAILABLE_W_S_SYNC_OBJECT, 144);
  EXPECT_EQ(GAUDI_FIRST_AVAILABLE_W_S_MONITOR, 72);
}

// hl-thunk is C: the C compiler lays out the ioctls' arguments as C++ does.
TEST(UapiLayout, CAndCxxAgree) {
  const std::size_t cxx[] = {sizeof(struct hl_info_args),       sizeof(union hl_cb_args),
                             sizeof(union hl_cs_args),          sizeof(union hl_wait_cs_args),
                             sizeof(union hl_mem_args),         sizeof(struct hl_debug_args),
                             sizeof(struct hl_cs_chunk),        sizeof(struct hl_info_hw_ip_info),
                             sizeof(struct hl_info_hw_idle),    sizeof(struct hl_info_razwi_event),
                             sizeof(struct hl_info_sec_attest), sizeof(struct hl_wait_cs_in)};
  ASSERT_EQ(podsim_uapi_c_count, sizeof cxx / sizeof cxx[0]);
  for (std::size_t i = 0; i < podsim_uapi_c_count; ++i)
    EXPECT_EQ(podsim_uapi_c_sizes[i], cxx[i]) << "type " << i;
}

// The queue numbering is stated twice: by the uAPI header and by the chip's machine-readable
// specification (hw/chip/spec/gaudi1.yaml, which the QMAN model and the driver route by).
#define PODSIM_SAME_QUEUE(name)                              \
  EXPECT_EQ(static_cast<int>(GAUDI_QUEUE_ID_##name),         \
            static_cast<int>(PODSIM_GAUDI1_QUEUE_ID_##name)) \
      << #name
#define PODSIM_SAME_STREAMS(name) \
  PODSIM_SAME_QUEUE(name##_0);    \
  PODSIM_SAME_QUEUE(name##_1);    \
  PODSIM_SAME_QUEUE(name##_2);    \
  PODSIM_SAME_QUEUE(name##_3)

TEST(UapiConstants, GaudiQueueIdsAreTheChipSpecificationsOwn) {
  PODSIM_SAME_STREAMS(DMA_0);
  PODSIM_SAME_STREAMS(DMA_1);
  PODSIM_SAME_QUEUE(CPU_PQ);
  PODSIM_SAME_STREAMS(DMA_2);
  PODSIM_SAME_STREAMS(DMA_3);
  PODSIM_SAME_STREAMS(DMA_4);
  PODSIM_SAME_STREAMS(DMA_5);
  PODSIM_SAME_STREAMS(DMA_6);
  PODSIM_SAME_STREAMS(DMA_7);
  PODSIM_SAME_STREAMS(MME_0);
  PODSIM_SAME_STREAMS(MME_1);
  PODSIM_SAME_STREAMS(TPC_0);
  PODSIM_SAME_STREAMS(TPC_1);
  PODSIM_SAME_STREAMS(TPC_2);
  PODSIM_SAME_STREAMS(TPC_3);
  PODSIM_SAME_STREAMS(TPC_4);
  PODSIM_SAME_STREAMS(TPC_5);
  PODSIM_SAME_STREAMS(TPC_6);
  PODSIM_SAME_STREAMS(TPC_7);
  PODSIM_SAME_STREAMS(NIC_0);
  PODSIM_SAME_STREAMS(NIC_1);
  PODSIM_SAME_STREAMS(NIC_2);
  PODSIM_SAME_STREAMS(NIC_3);
  PODSIM_SAME_STREAMS(NIC_4);
  PODSIM_SAME_STREAMS(NIC_5);
  PODSIM_SAME_STREAMS(NIC_6);
  PODSIM_SAME_STREAMS(NIC_7);
  PODSIM_SAME_STREAMS(NIC_8);
  PODSIM_SAME_STREAMS(NIC_9);
  PODSIM_SAME_QUEUE(SIZE);
}

}  // namespace
