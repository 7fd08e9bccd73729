/* The uAPI's sizes as a C compiler lays them out (uapi_layout_test.cpp compares them with C++'s).
 * Built with the warnings hl-thunk builds with, so the header stays clean for it. */
#include <stddef.h>

#include "drm/habanalabs_accel.h"

extern const size_t podsim_uapi_c_sizes[];
extern const size_t podsim_uapi_c_count;

const size_t podsim_uapi_c_sizes[] = {
    sizeof(struct hl_info_args),       sizeof(union hl_cb_args),
    sizeof(union hl_cs_args),          sizeof(union hl_wait_cs_args),
    sizeof(union hl_mem_args),         sizeof(struct hl_debug_args),
    sizeof(struct hl_cs_chunk),        sizeof(struct hl_info_hw_ip_info),
    sizeof(struct hl_info_hw_idle),    sizeof(struct hl_info_razwi_event),
    sizeof(struct hl_info_sec_attest), sizeof(struct hl_wait_cs_in)};
const size_t podsim_uapi_c_count = sizeof podsim_uapi_c_sizes / sizeof podsim_uapi_c_sizes[0];
