/* SPDX-License-Identifier: MIT */
/*
 * podsim's statement of the Linux 6.4 habanalabs accel driver uAPI (the kernel's
 * include/uapi/drm/habanalabs_accel.h): the ioctl numbers, argument layouts, opcodes, flags
 * and status codes that user space such as hl-thunk compiles against, written for podsim's
 * driver model (driver/) and its LD_PRELOAD shim. The names, values and layouts are the
 * interface; the text is podsim's own. tests/driver/uapi_layout_test.cpp pins every size and
 * offset. Sources: docs/sources.md (C12, C8).
 *
 * It is a C header (hl-thunk is C11 built with -Werror and strict warnings) that C++ includes
 * too. Like the kernel's, it needs only <linux/types.h> and <linux/ioctl.h>.
 */
#ifndef PODSIM_DRIVER_UAPI_HABANALABS_ACCEL_H
#define PODSIM_DRIVER_UAPI_HABANALABS_ACCEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Device memory the kernel driver keeps for itself. */
#define GOYA_KMD_SRAM_RESERVED_SIZE_FROM_START 0x8000
#define GAUDI_DRIVER_SRAM_RESERVED_SIZE_FROM_START 0x80

/* Gaudi's sync objects and monitors below these serve the driver's sync streams. */
#define GAUDI_FIRST_AVAILABLE_W_S_SYNC_OBJECT 144
#define GAUDI_FIRST_AVAILABLE_W_S_MONITOR 72

#define TS_MAX_ELEMENTS_NUM (1 << 20)

/* Four streams per queue manager: queue ids name a QMAN and a stream. */
#define PODSIM_HL_STREAMS(q) q##_0, q##_1, q##_2, q##_3

/* Queue ids a command-submission chunk names (queue_index). */
enum goya_queue_id {
  GOYA_QUEUE_ID_DMA_0 = 0,
  GOYA_QUEUE_ID_DMA_1 = 1,
  GOYA_QUEUE_ID_DMA_2 = 2,
  GOYA_QUEUE_ID_DMA_3 = 3,
  GOYA_QUEUE_ID_DMA_4 = 4,
  GOYA_QUEUE_ID_CPU_PQ = 5,
  GOYA_QUEUE_ID_MME = 6,
  GOYA_QUEUE_ID_TPC0 = 7,
  GOYA_QUEUE_ID_TPC1 = 8,
  GOYA_QUEUE_ID_TPC2 = 9,
  GOYA_QUEUE_ID_TPC3 = 10,
  GOYA_QUEUE_ID_TPC4 = 11,
  GOYA_QUEUE_ID_TPC5 = 12,
  GOYA_QUEUE_ID_TPC6 = 13,
  GOYA_QUEUE_ID_TPC7 = 14,
  GOYA_QUEUE_ID_SIZE
};

/*
 * Gaudi: DMA 0 and 1 face the host (the driver takes their command buffers and appends the
 * completion), the CPU queue is the driver's own, every other queue runs user buffers.
 */
enum gaudi_queue_id {
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_0),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_1),
  GAUDI_QUEUE_ID_CPU_PQ,
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_2),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_3),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_4),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_5),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_6),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_DMA_7),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_MME_0),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_MME_1),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_0),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_1),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_2),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_3),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_4),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_5),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_6),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_TPC_7),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_0),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_1),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_2),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_3),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_4),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_5),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_6),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_7),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_8),
  PODSIM_HL_STREAMS(GAUDI_QUEUE_ID_NIC_9),
  GAUDI_QUEUE_ID_SIZE
};

/* Gaudi2: four DCOREs of 2 EDMAs, an MME and 6 TPCs (DCORE0 has a seventh TPC). */
#define PODSIM_HL_GAUDI2_DCORE(d, tpcs)                     \
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_EDMA_0),     \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_EDMA_1), \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_MME_0),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_0),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_1),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_2),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_3),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_4),  \
      PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE##d##_TPC_5) tpcs
#define PODSIM_HL_GAUDI2_TPC6 , PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_DCORE0_TPC_6)
#define PODSIM_HL_NONE

enum gaudi2_queue_id {
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_PDMA_0),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_PDMA_1),
  PODSIM_HL_GAUDI2_DCORE(0, PODSIM_HL_GAUDI2_TPC6),
  PODSIM_HL_GAUDI2_DCORE(1, PODSIM_HL_NONE),
  PODSIM_HL_GAUDI2_DCORE(2, PODSIM_HL_NONE),
  PODSIM_HL_GAUDI2_DCORE(3, PODSIM_HL_NONE),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_0),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_1),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_2),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_3),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_4),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_5),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_6),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_7),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_8),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_9),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_10),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_11),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_12),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_13),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_14),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_15),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_16),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_17),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_18),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_19),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_20),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_21),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_22),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_NIC_23),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_ROT_0),
  PODSIM_HL_STREAMS(GAUDI2_QUEUE_ID_ROT_1),
  GAUDI2_QUEUE_ID_CPU_PQ,
  GAUDI2_QUEUE_ID_SIZE
};

/* Engine ids, as error records (RAZWI, page faults, undefined opcodes) name them. */
enum goya_engine_id {
  GOYA_ENGINE_ID_DMA_0 = 0,
  GOYA_ENGINE_ID_DMA_1,
  GOYA_ENGINE_ID_DMA_2,
  GOYA_ENGINE_ID_DMA_3,
  GOYA_ENGINE_ID_DMA_4,
  GOYA_ENGINE_ID_MME_0,
  GOYA_ENGINE_ID_TPC_0,
  GOYA_ENGINE_ID_TPC_1,
  GOYA_ENGINE_ID_TPC_2,
  GOYA_ENGINE_ID_TPC_3,
  GOYA_ENGINE_ID_TPC_4,
  GOYA_ENGINE_ID_TPC_5,
  GOYA_ENGINE_ID_TPC_6,
  GOYA_ENGINE_ID_TPC_7,
  GOYA_ENGINE_ID_SIZE
};

enum gaudi_engine_id {
  GAUDI_ENGINE_ID_DMA_0 = 0,
  GAUDI_ENGINE_ID_DMA_1,
  GAUDI_ENGINE_ID_DMA_2,
  GAUDI_ENGINE_ID_DMA_3,
  GAUDI_ENGINE_ID_DMA_4,
  GAUDI_ENGINE_ID_DMA_5,
  GAUDI_ENGINE_ID_DMA_6,
  GAUDI_ENGINE_ID_DMA_7,
  GAUDI_ENGINE_ID_MME_0,
  GAUDI_ENGINE_ID_MME_1,
  GAUDI_ENGINE_ID_MME_2,
  GAUDI_ENGINE_ID_MME_3,
  GAUDI_ENGINE_ID_TPC_0,
  GAUDI_ENGINE_ID_TPC_1,
  GAUDI_ENGINE_ID_TPC_2,
  GAUDI_ENGINE_ID_TPC_3,
  GAUDI_ENGINE_ID_TPC_4,
  GAUDI_ENGINE_ID_TPC_5,
  GAUDI_ENGINE_ID_TPC_6,
  GAUDI_ENGINE_ID_TPC_7,
  GAUDI_ENGINE_ID_NIC_0,
  GAUDI_ENGINE_ID_NIC_1,
  GAUDI_ENGINE_ID_NIC_2,
  GAUDI_ENGINE_ID_NIC_3,
  GAUDI_ENGINE_ID_NIC_4,
  GAUDI_ENGINE_ID_NIC_5,
  GAUDI_ENGINE_ID_NIC_6,
  GAUDI_ENGINE_ID_NIC_7,
  GAUDI_ENGINE_ID_NIC_8,
  GAUDI_ENGINE_ID_NIC_9,
  GAUDI_ENGINE_ID_SIZE
};

#define PODSIM_HL_GAUDI2_DCORE_ENGINES(d)                                   \
  GAUDI2_DCORE##d##_ENGINE_ID_EDMA_0, GAUDI2_DCORE##d##_ENGINE_ID_EDMA_1,   \
      GAUDI2_DCORE##d##_ENGINE_ID_MME, GAUDI2_DCORE##d##_ENGINE_ID_TPC_0,   \
      GAUDI2_DCORE##d##_ENGINE_ID_TPC_1, GAUDI2_DCORE##d##_ENGINE_ID_TPC_2, \
      GAUDI2_DCORE##d##_ENGINE_ID_TPC_3, GAUDI2_DCORE##d##_ENGINE_ID_TPC_4, \
      GAUDI2_DCORE##d##_ENGINE_ID_TPC_5, GAUDI2_DCORE##d##_ENGINE_ID_DEC_0, \
      GAUDI2_DCORE##d##_ENGINE_ID_DEC_1
#define PODSIM_HL_GAUDI2_NIC_ENGINES(n) GAUDI2_ENGINE_ID_NIC##n##_0, GAUDI2_ENGINE_ID_NIC##n##_1

enum gaudi2_engine_id {
  PODSIM_HL_GAUDI2_DCORE_ENGINES(0),
  PODSIM_HL_GAUDI2_DCORE_ENGINES(1),
  PODSIM_HL_GAUDI2_DCORE_ENGINES(2),
  PODSIM_HL_GAUDI2_DCORE_ENGINES(3),
  GAUDI2_DCORE0_ENGINE_ID_TPC_6,
  GAUDI2_ENGINE_ID_PDMA_0,
  GAUDI2_ENGINE_ID_PDMA_1,
  GAUDI2_ENGINE_ID_ROT_0,
  GAUDI2_ENGINE_ID_ROT_1,
  GAUDI2_PCIE_ENGINE_ID_DEC_0,
  GAUDI2_PCIE_ENGINE_ID_DEC_1,
  PODSIM_HL_GAUDI2_NIC_ENGINES(0),
  PODSIM_HL_GAUDI2_NIC_ENGINES(1),
  PODSIM_HL_GAUDI2_NIC_ENGINES(2),
  PODSIM_HL_GAUDI2_NIC_ENGINES(3),
  PODSIM_HL_GAUDI2_NIC_ENGINES(4),
  PODSIM_HL_GAUDI2_NIC_ENGINES(5),
  PODSIM_HL_GAUDI2_NIC_ENGINES(6),
  PODSIM_HL_GAUDI2_NIC_ENGINES(7),
  PODSIM_HL_GAUDI2_NIC_ENGINES(8),
  PODSIM_HL_GAUDI2_NIC_ENGINES(9),
  PODSIM_HL_GAUDI2_NIC_ENGINES(10),
  PODSIM_HL_GAUDI2_NIC_ENGINES(11),
  GAUDI2_ENGINE_ID_PCIE,
  GAUDI2_ENGINE_ID_PSOC,
  GAUDI2_ENGINE_ID_ARC_FARM,
  GAUDI2_ENGINE_ID_KDMA,
  GAUDI2_ENGINE_ID_SIZE
};

/* PLLs INFO PLL_FREQUENCY reads (pll_index). */
enum hl_goya_pll_index {
  HL_GOYA_CPU_PLL = 0,
  HL_GOYA_IC_PLL,
  HL_GOYA_MC_PLL,
  HL_GOYA_MME_PLL,
  HL_GOYA_PCI_PLL,
  HL_GOYA_EMMC_PLL,
  HL_GOYA_TPC_PLL,
  HL_GOYA_PLL_MAX
};

enum hl_gaudi_pll_index {
  HL_GAUDI_CPU_PLL = 0,
  HL_GAUDI_PCI_PLL,
  HL_GAUDI_SRAM_PLL,
  HL_GAUDI_HBM_PLL,
  HL_GAUDI_NIC_PLL,
  HL_GAUDI_DMA_PLL,
  HL_GAUDI_MESH_PLL,
  HL_GAUDI_MME_PLL,
  HL_GAUDI_TPC_PLL,
  HL_GAUDI_IF_PLL,
  HL_GAUDI_PLL_MAX
};

enum hl_gaudi2_pll_index {
  HL_GAUDI2_CPU_PLL = 0,
  HL_GAUDI2_PCI_PLL,
  HL_GAUDI2_SRAM_PLL,
  HL_GAUDI2_HBM_PLL,
  HL_GAUDI2_NIC_PLL,
  HL_GAUDI2_DMA_PLL,
  HL_GAUDI2_MESH_PLL,
  HL_GAUDI2_MME_PLL,
  HL_GAUDI2_TPC_PLL,
  HL_GAUDI2_IF_PLL,
  HL_GAUDI2_VID_PLL,
  HL_GAUDI2_MSS_PLL,
  HL_GAUDI2_PLL_MAX
};

enum hl_goya_dma_direction {
  HL_DMA_HOST_TO_DRAM,
  HL_DMA_HOST_TO_SRAM,
  HL_DMA_DRAM_TO_SRAM,
  HL_DMA_SRAM_TO_DRAM,
  HL_DMA_SRAM_TO_HOST,
  HL_DMA_DRAM_TO_HOST,
  HL_DMA_DRAM_TO_DRAM,
  HL_DMA_SRAM_TO_SRAM,
  HL_DMA_ENUM_MAX
};

/* What INFO DEVICE_STATUS reports. */
enum hl_device_status {
  HL_DEVICE_STATUS_OPERATIONAL,
  HL_DEVICE_STATUS_IN_RESET,
  HL_DEVICE_STATUS_MALFUNCTION,
  HL_DEVICE_STATUS_NEEDS_RESET,
  HL_DEVICE_STATUS_IN_DEVICE_CREATION,
  HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE,
  HL_DEVICE_STATUS_LAST = HL_DEVICE_STATUS_IN_RESET_AFTER_DEVICE_RELEASE
};

/* The box a device sits in (HW_IP_INFO server_type). */
enum hl_server_type {
  HL_SERVER_TYPE_UNKNOWN = 0,
  HL_SERVER_GAUDI_HLS1 = 1,
  HL_SERVER_GAUDI_HLS1H = 2,
  HL_SERVER_GAUDI_TYPE1 = 3,
  HL_SERVER_GAUDI_TYPE2 = 4,
  HL_SERVER_GAUDI2_HLS2 = 5,
  HL_SERVER_GAUDI2_TYPE1 = 7
};

/* Bits of the notifier mask INFO GET_EVENTS returns (and clears). */
#define HL_NOTIFIER_EVENT_TPC_ASSERT (1ULL << 0)
#define HL_NOTIFIER_EVENT_UNDEFINED_OPCODE (1ULL << 1)
#define HL_NOTIFIER_EVENT_DEVICE_RESET (1ULL << 2)
#define HL_NOTIFIER_EVENT_CS_TIMEOUT (1ULL << 3)
#define HL_NOTIFIER_EVENT_DEVICE_UNAVAILABLE (1ULL << 4)
#define HL_NOTIFIER_EVENT_USER_ENGINE_ERR (1ULL << 5)
#define HL_NOTIFIER_EVENT_GENERAL_HW_ERR (1ULL << 6)
#define HL_NOTIFIER_EVENT_RAZWI (1ULL << 7)
#define HL_NOTIFIER_EVENT_PAGE_FAULT (1ULL << 8)
#define HL_NOTIFIER_EVENT_CRITICL_HW_ERR (1ULL << 9) /* the kernel's spelling */
#define HL_NOTIFIER_EVENT_CRITICL_FW_ERR (1ULL << 10)

/* ------------------------------------------------------------------ INFO */

/* hl_info_args.op: what to report (no 5, 19 or 20). */
#define HL_INFO_HW_IP_INFO 0
#define HL_INFO_HW_EVENTS 1
#define HL_INFO_DRAM_USAGE 2
#define HL_INFO_HW_IDLE 3
#define HL_INFO_DEVICE_STATUS 4
#define HL_INFO_DEVICE_UTILIZATION 6
#define HL_INFO_HW_EVENTS_AGGREGATE 7
#define HL_INFO_CLK_RATE 8
#define HL_INFO_RESET_COUNT 9
#define HL_INFO_TIME_SYNC 10
#define HL_INFO_CS_COUNTERS 11
#define HL_INFO_PCI_COUNTERS 12
#define HL_INFO_CLK_THROTTLE_REASON 13
#define HL_INFO_SYNC_MANAGER 14
#define HL_INFO_TOTAL_ENERGY 15
#define HL_INFO_PLL_FREQUENCY 16
#define HL_INFO_POWER 17
#define HL_INFO_OPEN_STATS 18
#define HL_INFO_DRAM_REPLACED_ROWS 21
#define HL_INFO_DRAM_PENDING_ROWS 22
#define HL_INFO_LAST_ERR_OPEN_DEV_TIME 23
#define HL_INFO_CS_TIMEOUT_EVENT 24
#define HL_INFO_RAZWI_EVENT 25
#define HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES 26
#define HL_INFO_SECURED_ATTESTATION 27
#define HL_INFO_REGISTER_EVENTFD 28
#define HL_INFO_UNREGISTER_EVENTFD 29
#define HL_INFO_GET_EVENTS 30
#define HL_INFO_UNDEFINED_OPCODE_EVENT 31
#define HL_INFO_ENGINE_STATUS 32
#define HL_INFO_PAGE_FAULT_EVENT 33
#define HL_INFO_USER_MAPPINGS 34
#define HL_INFO_FW_GENERIC_REQ 35
#define HL_INFO_HW_ERR_EVENT 36
#define HL_INFO_FW_ERR_EVENT 37

#define HL_INFO_VERSION_MAX_LEN 128
#define HL_INFO_CARD_NAME_MAX_LEN 16
#define HL_ENGINES_DATA_MAX_SIZE (1 << 20) /* ENGINE_STATUS's largest buffer */

/* HW_IP_INFO: the device's memories, engines and versions. */
struct hl_info_hw_ip_info {
  __u64 sram_base_address;
  __u64 dram_base_address;
  __u64 dram_size;
  __u32 sram_size;
  __u32 num_of_events;
  __u32 device_id; /* the PCI device id */
  __u32 module_id;
  __u32 decoder_enabled_mask;
  __u16 first_available_interrupt_id;
  __u16 server_type; /* enum hl_server_type */
  __u32 cpld_version;
  __u32 psoc_pci_pll_nr;
  __u32 psoc_pci_pll_nf;
  __u32 psoc_pci_pll_od;
  __u32 psoc_pci_pll_div_factor;
  __u8 tpc_enabled_mask;
  __u8 dram_enabled;
  __u8 security_enabled;
  __u8 mme_master_slave_mode;
  __u8 cpucp_version[HL_INFO_VERSION_MAX_LEN];
  __u8 card_name[HL_INFO_CARD_NAME_MAX_LEN];
  __u64 tpc_enabled_mask_ext;
  __u64 dram_page_size;
  __u32 edma_enabled_mask;
  __u16 number_of_user_interrupts;
  __u8 reserved1;
  __u8 reserved2;
  __u64 reserved3;
  __u64 device_mem_alloc_default_page_size;
  __u64 reserved4;
  __u64 reserved5;
  __u32 reserved6;
  __u8 reserved7;
  __u8 revision_id;
  __u16 tpc_interrupt_id;
  __u32 rotator_enabled_mask;
  __u32 reserved9;
  __u64 engine_core_interrupt_reg_addr;
  __u64 reserved_dram_size;
};

struct hl_info_dram_usage {
  __u64 dram_free_mem;
  __u64 ctx_dram_mem;
};

#define HL_BUSY_ENGINES_MASK_EXT_SIZE 4

/* HW_IDLE: a bit per busy engine, by the ASIC's engine id. */
struct hl_info_hw_idle {
  __u32 is_idle;
  __u32 busy_engines_mask;
  __u64 busy_engines_mask_ext[HL_BUSY_ENGINES_MASK_EXT_SIZE];
};

struct hl_info_device_status {
  __u32 status; /* enum hl_device_status */
  __u32 pad;
};

struct hl_info_device_utilization {
  __u32 utilization; /* percent over the requested period */
  __u32 pad;
};

struct hl_info_clk_rate {
  __u32 cur_clk_rate_mhz;
  __u32 max_clk_rate_mhz;
};

struct hl_info_reset_count {
  __u32 hard_reset_cnt;
  __u32 soft_reset_cnt;
};

/* TIME_SYNC: the device's and the host's clocks read together. */
struct hl_info_time_sync {
  __u64 device_time;
  __u64 host_time;
};

struct hl_info_pci_counters {
  __u64 rx_throughput;
  __u64 tx_throughput;
  __u64 replay_cnt;
};

enum hl_clk_throttling_type {
  HL_CLK_THROTTLE_TYPE_POWER,
  HL_CLK_THROTTLE_TYPE_THERMAL,
  HL_CLK_THROTTLE_TYPE_MAX
};

#define HL_CLK_THROTTLE_POWER (1 << HL_CLK_THROTTLE_TYPE_POWER)
#define HL_CLK_THROTTLE_THERMAL (1 << HL_CLK_THROTTLE_TYPE_THERMAL)

struct hl_info_clk_throttle {
  __u32 clk_throttling_reason;
  __u32 pad;
  __u64 clk_throttling_timestamp_us[HL_CLK_THROTTLE_TYPE_MAX];
  __u64 clk_throttling_duration_ns[HL_CLK_THROTTLE_TYPE_MAX];
};

struct hl_info_energy {
  __u64 total_energy_consumption;
};

#define HL_PLL_NUM_OUTPUTS 4

struct hl_pll_frequency_info {
  __u16 output[HL_PLL_NUM_OUTPUTS];
};

struct hl_open_stats_info {
  __u64 open_counter;
  __u64 last_open_period_ms;
  __u8 is_compute_ctx_active;
  __u8 compute_ctx_in_release;
  __u8 pad[6];
};

struct hl_power_info {
  __u64 power;
};

/* SYNC_MANAGER: the first objects, monitors and CQ user space may use (per dcore_id). */
struct hl_info_sync_manager {
  __u32 first_available_sync_object;
  __u32 first_available_monitor;
  __u32 first_available_cq;
  __u32 reserved;
};

/* CS_COUNTERS: submissions dropped, for the device and for the caller's context. */
struct hl_info_cs_counters {
  __u64 total_out_of_mem_drop_cnt;
  __u64 ctx_out_of_mem_drop_cnt;
  __u64 total_parsing_drop_cnt;
  __u64 ctx_parsing_drop_cnt;
  __u64 total_queue_full_drop_cnt;
  __u64 ctx_queue_full_drop_cnt;
  __u64 total_device_in_reset_drop_cnt;
  __u64 ctx_device_in_reset_drop_cnt;
  __u64 total_max_cs_in_flight_drop_cnt;
  __u64 ctx_max_cs_in_flight_drop_cnt;
  __u64 total_validation_drop_cnt;
  __u64 ctx_validation_drop_cnt;
};

struct hl_info_last_err_open_dev_time {
  __s64 timestamp;
};

struct hl_info_cs_timeout_event {
  __s64 timestamp;
  __u64 seq;
};

/* RAZWI (an access nothing answers): who may have made it, where, and how. */
#define HL_RAZWI_NA_ENG_ID 0xFFFF
#define HL_RAZWI_MAX_NUM_OF_ENGINES_PER_RTR 128
#define HL_RAZWI_READ (1 << 0)
#define HL_RAZWI_WRITE (1 << 1)
#define HL_RAZWI_LBW (1 << 2)
#define HL_RAZWI_HBW (1 << 3)
#define HL_RAZWI_RR (1 << 4)
#define HL_RAZWI_ADDR_DEC (1 << 5)

struct hl_info_razwi_event {
  __s64 timestamp;
  __u64 addr;
  __u16 engine_id[HL_RAZWI_MAX_NUM_OF_ENGINES_PER_RTR];
  __u16 num_of_possible_engines;
  __u8 flags;
  __u8 pad[5];
};

#define MAX_QMAN_STREAMS_INFO 4
#define OPCODE_INFO_MAX_ADDR_SIZE 8

/* UNDEFINED_OPCODE_EVENT: the command buffers a QMAN was running when it met one. */
struct hl_info_undefined_opcode_event {
  __s64 timestamp;
  __u64 cb_addr_streams[MAX_QMAN_STREAMS_INFO][OPCODE_INFO_MAX_ADDR_SIZE];
  __u64 cq_addr;
  __u32 cq_size;
  __u32 cb_addr_streams_len;
  __u32 engine_id;
  __u32 stream_id;
};

struct hl_info_hw_err_event {
  __s64 timestamp;
  __u16 event_id;
  __u16 pad[3];
};

enum hl_info_fw_err_type { HL_INFO_FW_HEARTBEAT_ERR, HL_INFO_FW_REPORTED_ERR };

struct hl_info_fw_err_event {
  __s64 timestamp;
  __u16 err_type; /* enum hl_info_fw_err_type */
  __u16 event_id;
  __u32 pad;
};

struct hl_info_dev_memalloc_page_sizes {
  __u64 page_order_bitmask;
};

#define SEC_PCR_DATA_BUF_SZ 256
#define SEC_PCR_QUOTE_BUF_SZ 510
#define SEC_SIGNATURE_BUF_SZ 255
#define SEC_PUB_DATA_BUF_SZ 510
#define SEC_CERTIFICATE_BUF_SZ 2046

struct hl_info_sec_attest {
  __u32 nonce;
  __u16 pcr_quote_len;
  __u16 pub_data_len;
  __u16 certificate_len;
  __u8 pcr_num_reg;
  __u8 pcr_reg_len;
  __u8 quote_sig_len;
  __u8 pcr_data[SEC_PCR_DATA_BUF_SZ];
  __u8 pcr_quote[SEC_PCR_QUOTE_BUF_SZ];
  __u8 quote_sig[SEC_SIGNATURE_BUF_SZ];
  __u8 public_data[SEC_PUB_DATA_BUF_SZ];
  __u8 certificate[SEC_CERTIFICATE_BUF_SZ];
  __u8 pad0[2];
};

struct hl_page_fault_info {
  __s64 timestamp;
  __u64 addr;
  __u16 engine_id;
  __u8 pad[6];
};

struct hl_user_mapping {
  __u64 dev_va;
  __u64 size;
};

/* Gaudi's DCOREs, for SYNC_MANAGER's dcore_id. */
enum gaudi_dcores { HL_GAUDI_WS_DCORE, HL_GAUDI_WN_DCORE, HL_GAUDI_EN_DCORE, HL_GAUDI_ES_DCORE };

/* INFO's argument: where the result goes, how large that buffer is, and what to report. */
struct hl_info_args {
  __u64 return_pointer;
  __u32 return_size;
  __u32 op; /* HL_INFO_* */
  union {   /* what the op takes */
    __u32 dcore_id;
    __u32 ctx_id;
    __u32 period_ms;
    __u32 pll_index;
    __u32 eventfd;
    __u32 user_buffer_actual_size; /* written back by ENGINE_STATUS */
    __u32 sec_attest_nonce;
    __u32 array_size; /* written back by USER_MAPPINGS */
    __u32 fw_sub_opcode;
  };
  __u32 pad; /* must be 0 */
};

/* -------------------------------------------------------- command buffers */

#define HL_CB_OP_CREATE 0
#define HL_CB_OP_DESTROY 1
#define HL_CB_OP_INFO 2

/* The largest buffer: 2 MiB less the 32 bytes of the two packets the driver may append. */
#define HL_MAX_CB_SIZE (0x200000 - 32)

#define HL_CB_FLAGS_MAP 0x1
#define HL_CB_FLAGS_GET_DEVICE_VA 0x2

struct hl_cb_in {
  __u64 cb_handle; /* DESTROY, INFO */
  __u32 op;        /* HL_CB_OP_* */
  __u32 cb_size;   /* CREATE: bytes */
  __u32 ctx_id;
  __u32 flags; /* HL_CB_FLAGS_* */
};

struct hl_cb_out {
  union {
    __u64 cb_handle; /* CREATE: what mmap takes as its offset */
    union {
      struct { /* INFO */
        __u32 usage_cnt;
        __u32 pad;
      };
      __u64 device_va; /* INFO with HL_CB_FLAGS_GET_DEVICE_VA */
    };
  };
};

union hl_cb_args {
  struct hl_cb_in in;
  struct hl_cb_out out;
};

/* ------------------------------------------------------ command submission */

#define HL_CS_CHUNK_FLAGS_USER_ALLOC_CB 0x1

/* One job: a command buffer for one queue. */
struct hl_cs_chunk {
  union {
    __u64 cb_handle;         /* a driver CB, or the device address of a user CB */
    __u64 signal_seq_arr;    /* WAIT/COLLECTIVE_WAIT: the signal CSs to wait for */
    __u64 encaps_signal_seq; /* ENCAP_SIGNALS: the reservation's sequence */
  };
  __u32 queue_index; /* a queue id */
  union {
    __u32 cb_size;
    __u32 num_signal_seq_arr;
    __u32 encaps_signal_offset;
  };
  __u32 cs_chunk_flags; /* HL_CS_CHUNK_FLAGS_* */
  __u32 collective_engine_id;
  __u32 pad[10];
};

#define HL_CS_FLAGS_FORCE_RESTORE 0x1
#define HL_CS_FLAGS_SIGNAL 0x2
#define HL_CS_FLAGS_WAIT 0x4
#define HL_CS_FLAGS_COLLECTIVE_WAIT 0x8
#define HL_CS_FLAGS_TIMESTAMP 0x20
#define HL_CS_FLAGS_STAGED_SUBMISSION 0x40
#define HL_CS_FLAGS_STAGED_SUBMISSION_FIRST 0x80
#define HL_CS_FLAGS_STAGED_SUBMISSION_LAST 0x100
#define HL_CS_FLAGS_CUSTOM_TIMEOUT 0x200
#define HL_CS_FLAGS_SKIP_RESET_ON_TIMEOUT 0x400
#define HL_CS_FLAGS_ENCAP_SIGNALS 0x800
#define HL_CS_FLAGS_RESERVE_SIGNALS_ONLY 0x1000
#define HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY 0x2000
#define HL_CS_FLAGS_ENGINE_CORE_COMMAND 0x4000
#define HL_CS_FLAGS_FLUSH_PCI_HBW_WRITES 0x8000
#define HL_CS_FLAGS_ENGINES_COMMAND 0x10000

#define HL_CS_STATUS_SUCCESS 0

#define HL_MAX_JOBS_PER_CS 512

enum hl_engine_command {
  HL_ENGINE_CORE_HALT = 1,
  HL_ENGINE_CORE_RUN = 2,
  HL_ENGINE_STALL = 3,
  HL_ENGINE_RESUME = 4,
  HL_ENGINE_COMMAND_MAX
};

struct hl_cs_in {
  union {
    struct {
      __u64 chunks_restore; /* user pointers to arrays of struct hl_cs_chunk */
      __u64 chunks_execute;
    };
    struct {
      __u64 engine_cores; /* ENGINE_CORE_COMMAND: a u32 array of core ids */
      __u32 num_engine_cores;
      __u32 core_command;
    };
    struct {
      __u64 engines; /* ENGINES_COMMAND: a u32 array of engine ids */
      __u32 num_engines;
      __u32 engine_command;
    };
  };
  union {
    __u64 seq; /* STAGED_SUBMISSION: the first CS's sequence */
    __u32 encaps_sig_handle_id;
    struct {
      __u32 encaps_signals_count;
      __u32 encaps_signals_q_idx;
    };
  };
  __u32 num_chunks_restore;
  __u32 num_chunks_execute;
  __u32 timeout;  /* seconds, with HL_CS_FLAGS_CUSTOM_TIMEOUT */
  __u32 cs_flags; /* HL_CS_FLAGS_* */
  __u32 ctx_id;
  __u8 pad[4]; /* must be 0 */
};

struct hl_cs_out {
  union {
    __u64 seq; /* the submission's sequence number, returned at once */
    struct {   /* RESERVE_SIGNALS_ONLY */
      __u32 handle_id;
      __u32 count;
    };
  };
  __u32 status; /* HL_CS_STATUS_* */
  __u32 sob_base_addr_offset;
  __u16 sob_count_before_submission;
  __u16 pad[3];
};

union hl_cs_args {
  struct hl_cs_in in;
  struct hl_cs_out out;
};

/* ------------------------------------------------------------------ WAIT_CS */

#define HL_WAIT_CS_FLAGS_INTERRUPT 0x2
#define HL_WAIT_CS_FLAGS_INTERRUPT_MASK 0xFFF00000
#define HL_WAIT_CS_FLAGS_ANY_CQ_INTERRUPT 0xFFF00000
#define HL_WAIT_CS_FLAGS_ANY_DEC_INTERRUPT 0xFFE00000
#define HL_WAIT_CS_FLAGS_MULTI_CS 0x4
#define HL_WAIT_CS_FLAGS_INTERRUPT_KERNEL_CQ 0x10
#define HL_WAIT_CS_FLAGS_REGISTER_INTERRUPT 0x20

#define HL_WAIT_MULTI_CS_LIST_MAX_LEN 32

struct hl_wait_cs_in {
  union {
    struct {
      __u64 seq;        /* MULTI_CS: a user pointer to seq_arr_len sequences */
      __u64 timeout_us; /* 0: poll */
    };
    struct { /* INTERRUPT */
      union {
        __u64 addr;
        __u64 cq_counters_handle;
      };
      __u64 target;
    };
  };
  __u32 ctx_id;
  __u32 flags; /* HL_WAIT_CS_FLAGS_* */
  union {
    struct {
      __u8 seq_arr_len;
      __u8 pad[7]; /* must be 0 */
    };
    __u64 interrupt_timeout_us;
  };
  __u64 cq_counters_offset;
  __u64 timestamp_handle;
  __u64 timestamp_offset;
};

#define HL_WAIT_CS_STATUS_COMPLETED 0
#define HL_WAIT_CS_STATUS_BUSY 1
#define HL_WAIT_CS_STATUS_TIMEDOUT 2
#define HL_WAIT_CS_STATUS_ABORTED 3

#define HL_WAIT_CS_STATUS_FLAG_GONE 0x1
#define HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD 0x2

struct hl_wait_cs_out {
  __u32 status; /* HL_WAIT_CS_STATUS_* */
  __u32 flags;  /* HL_WAIT_CS_STATUS_FLAG_* */
  __s64 timestamp_nsec;
  __u32 cs_completion_map; /* MULTI_CS: which of the sequences completed */
  __u32 pad;
};

union hl_wait_cs_args {
  struct hl_wait_cs_in in;
  struct hl_wait_cs_out out;
};

/* ------------------------------------------------------------------- MEMORY */

#define HL_MEM_OP_ALLOC 0
#define HL_MEM_OP_FREE 1
#define HL_MEM_OP_MAP 2
#define HL_MEM_OP_UNMAP 3
#define HL_MEM_OP_MAP_BLOCK 4
#define HL_MEM_OP_EXPORT_DMABUF_FD 5
#define HL_MEM_OP_TS_ALLOC 6

#define HL_MEM_CONTIGUOUS 0x1
#define HL_MEM_SHARED 0x2
#define HL_MEM_USERPTR 0x4
#define HL_MEM_FORCE_HINT 0x8
#define HL_MEM_PREFETCH 0x40

struct hl_mem_in {
  union {
    struct {
      __u64 mem_size;
      __u64 page_size;
    } alloc;
    struct {
      __u64 handle;
    } free;
    struct {
      __u64 hint_addr;
      __u64 handle;
    } map_device;
    struct {
      __u64 host_virt_addr;
      __u64 hint_addr;
      __u64 mem_size;
    } map_host;
    struct {
      __u64 block_addr;
    } map_block;
    struct {
      __u64 device_virt_addr;
    } unmap;
    struct {
      __u64 addr;
      __u64 mem_size;
      __u64 offset;
    } export_dmabuf_fd;
  };
  __u32 op;    /* HL_MEM_OP_* */
  __u32 flags; /* HL_MEM_* */
  __u32 ctx_id;
  __u32 num_of_elements; /* TS_ALLOC */
};

struct hl_mem_out {
  union {
    __u64 device_virt_addr; /* MAP */
    __u64 handle;           /* ALLOC */
    struct {                /* MAP_BLOCK */
      __u64 block_handle;
      __u32 block_size;
      __u32 pad;
    };
    __s32 fd; /* EXPORT_DMABUF_FD */
  };
};

union hl_mem_args {
  struct hl_mem_in in;
  struct hl_mem_out out;
};

/* -------------------------------------------------------------------- DEBUG */

#define HL_DEBUG_MAX_AUX_VALUES 10

struct hl_debug_params_etr {
  __u64 buffer_address;
  __u64 buffer_size;
  __u32 sink_mode;
  __u32 pad;
};

struct hl_debug_params_etf {
  __u64 buffer_address;
  __u64 buffer_size;
  __u32 sink_mode;
  __u32 pad;
};

struct hl_debug_params_stm {
  __u64 he_mask;
  __u64 sp_mask;
  __u32 id;
  __u32 frequency;
};

struct hl_debug_params_bmon {
  __u64 start_addr0;
  __u64 addr_mask0;
  __u64 start_addr1;
  __u64 addr_mask1;
  __u32 bw_win;
  __u32 win_capture;
  __u32 id;
  __u32 control;
  __u64 start_addr2;
  __u64 end_addr2;
  __u64 start_addr3;
  __u64 end_addr3;
};

struct hl_debug_params_spmu {
  __u64 event_types[HL_DEBUG_MAX_AUX_VALUES];
  __u32 event_types_num;
  __u32 pmtrc_val;
  __u32 trc_ctrl_host_val;
  __u32 trc_en_host_val;
};

#define HL_DEBUG_OP_ETR 0
#define HL_DEBUG_OP_ETF 1
#define HL_DEBUG_OP_STM 2
#define HL_DEBUG_OP_FUNNEL 3
#define HL_DEBUG_OP_BMON 4
#define HL_DEBUG_OP_SPMU 5
#define HL_DEBUG_OP_TIMESTAMP 6
#define HL_DEBUG_OP_SET_MODE 7

struct hl_debug_args {
  __u64 input_ptr;
  __u64 output_ptr;
  __u32 input_size;
  __u32 output_size;
  __u32 op; /* HL_DEBUG_OP_* */
  __u32 reg_idx;
  __u32 enable;
  __u32 ctx_id;
};

/* ------------------------------------------------------------------- ioctls */

#define HL_IOCTL_INFO _IOWR('H', 0x01, struct hl_info_args)
#define HL_IOCTL_CB _IOWR('H', 0x02, union hl_cb_args)
#define HL_IOCTL_CS _IOWR('H', 0x03, union hl_cs_args)
#define HL_IOCTL_WAIT_CS _IOWR('H', 0x04, union hl_wait_cs_args)
#define HL_IOCTL_MEMORY _IOWR('H', 0x05, union hl_mem_args)
#define HL_IOCTL_DEBUG _IOWR('H', 0x06, struct hl_debug_args)

#define HL_COMMAND_START 0x01
#define HL_COMMAND_END 0x07

#undef PODSIM_HL_STREAMS
#undef PODSIM_HL_GAUDI2_DCORE
#undef PODSIM_HL_GAUDI2_TPC6
#undef PODSIM_HL_NONE
#undef PODSIM_HL_GAUDI2_DCORE_ENGINES
#undef PODSIM_HL_GAUDI2_NIC_ENGINES

#endif /* PODSIM_DRIVER_UAPI_HABANALABS_ACCEL_H */
