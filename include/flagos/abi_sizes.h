/*
 * flagos/abi_sizes.h — the frozen sizes of every released layout.
 *
 * A reader uses these to decide which members a peer's struct holds: a
 * plugin claiming minor M must present a table of at least the size recorded
 * for M. The LP64 byte counts below are asserted at compile time, so editing
 * a released struct (instead of appending) fails the build of everything that
 * includes this header.
 */
#ifndef FLAGOS_ABI_SIZES_H_
#define FLAGOS_ABI_SIZES_H_

#include "flagos/plugin_api.h"
#include "flagos/ext/kernels.h"
#include "flagos/ext/testing.h"
#include "flagos/ext/diagnostics.h"
#include "flagos/ext/collectives.h"
#include "flagos/ext/graphs.h"
#include "flagos/ext/profiler.h"
#include "flagos/ext/ipc.h"

/* ABI 1.0 */
#define FLAGOS_PLUGIN_API_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_plugin_api_t, event_elapsed_ms)
#define FLAGOS_HOST_INFO_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_host_info_t, option_values)
#define FLAGOS_DEVICE_PROPERTIES_SIZE_1_0 \
  FLAGOS_STRUCT_SIZE(flagos_device_properties_t, reserved0)
#define FLAGOS_EXTENSION_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_extension_t, next)
#define FLAGOS_TENSOR_DESC_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_tensor_desc_t, strides)
#define FLAGOS_KERNEL_CALL_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_kernel_call_t, args)
#define FLAGOS_KERNEL_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_kernel_t, run)
#define FLAGOS_KERNELS_EXT_SIZE_1_0 FLAGOS_STRUCT_SIZE(flagos_kernels_ext_t, kernels)
#define FLAGOS_TESTING_EXT_SIZE_1_0 \
  FLAGOS_STRUCT_SIZE(flagos_testing_ext_t, stream_enqueue_delay)

/* ABI 1.1: an extension type, no change to the table. */
#define FLAGOS_DIAGNOSTICS_EXT_SIZE_1_1 FLAGOS_STRUCT_SIZE(flagos_diagnostics_ext_t, device_note)
/* ABI 1.2: an extension type and two status codes, no change to the table. */
#define FLAGOS_COLLECTIVES_EXT_SIZE_1_2 FLAGOS_STRUCT_SIZE(flagos_collectives_ext_t, group_end)
/* ABI 1.3: an extension type and a status code, no change to the table. */
#define FLAGOS_GRAPHS_EXT_SIZE_1_3 FLAGOS_STRUCT_SIZE(flagos_graphs_ext_t, graph_exec_destroy)
/* ABI 1.4: an extension type and its records, no change to the table. */
#define FLAGOS_PROFILER_EXT_SIZE_1_4 FLAGOS_STRUCT_SIZE(flagos_profiler_ext_t, pop_correlation)
#define FLAGOS_PROFILER_OPTIONS_SIZE_1_4 FLAGOS_STRUCT_SIZE(flagos_profiler_options_t, max_records)
#define FLAGOS_ACTIVITY_RECORD_SIZE_1_4 FLAGOS_STRUCT_SIZE(flagos_activity_record_t, address)
/* ABI 1.5: an extension type and its handle, no change to the table. */
#define FLAGOS_IPC_EXT_SIZE_1_5 FLAGOS_STRUCT_SIZE(flagos_ipc_ext_t, close_memory)
#define FLAGOS_IPC_HANDLE_SIZE_1_5 FLAGOS_STRUCT_SIZE(flagos_ipc_handle_t, reserved)
/* ABI 1.6: host services, appended to the host info. */
#define FLAGOS_HOST_INFO_SIZE_1_6 FLAGOS_STRUCT_SIZE(flagos_host_info_t, services)
#define FLAGOS_HOST_SERVICES_SIZE_1_6 FLAGOS_STRUCT_SIZE(flagos_host_services_t, log)
/* ABI 1.7: a native kernel's cache statistics, appended to the kernel. */
#define FLAGOS_KERNEL_SIZE_1_7 FLAGOS_STRUCT_SIZE(flagos_kernel_t, cache_stats)

/* Smallest plugin table accepted for a claimed minor (index = minor). */
#define FLAGOS_PLUGIN_API_MIN_SIZE(minor) FLAGOS_PLUGIN_API_SIZE_1_0

#if defined(__LP64__) || defined(_LP64)
FLAGOS_ABI_ASSERT(FLAGOS_PLUGIN_API_SIZE_1_0 == 280, plugin_api_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_HOST_INFO_SIZE_1_0 == 56, host_info_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_DEVICE_PROPERTIES_SIZE_1_0 == 408, device_properties_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_EXTENSION_SIZE_1_0 == 24, extension_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_TENSOR_DESC_SIZE_1_0 == 56, tensor_desc_1_0);
FLAGOS_ABI_ASSERT(sizeof(flagos_kernel_arg_t) == 24, kernel_arg_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_KERNEL_CALL_SIZE_1_0 == 40, kernel_call_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_KERNEL_SIZE_1_0 == 24, kernel_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_KERNELS_EXT_SIZE_1_0 == 40, kernels_ext_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_TESTING_EXT_SIZE_1_0 == 32, testing_ext_1_0);
FLAGOS_ABI_ASSERT(FLAGOS_DIAGNOSTICS_EXT_SIZE_1_1 == 32, diagnostics_ext_1_1);
FLAGOS_ABI_ASSERT(FLAGOS_COLLECTIVES_EXT_SIZE_1_2 == 152, collectives_ext_1_2);
FLAGOS_ABI_ASSERT(FLAGOS_GRAPHS_EXT_SIZE_1_3 == 88, graphs_ext_1_3);
FLAGOS_ABI_ASSERT(FLAGOS_PROFILER_EXT_SIZE_1_4 == 88, profiler_ext_1_4);
FLAGOS_ABI_ASSERT(FLAGOS_PROFILER_OPTIONS_SIZE_1_4 == 16, profiler_options_1_4);
FLAGOS_ABI_ASSERT(FLAGOS_ACTIVITY_RECORD_SIZE_1_4 == 80, activity_record_1_4);
FLAGOS_ABI_ASSERT(FLAGOS_IPC_EXT_SIZE_1_5 == 64, ipc_ext_1_5);
FLAGOS_ABI_ASSERT(FLAGOS_IPC_HANDLE_SIZE_1_5 == 80, ipc_handle_1_5);
FLAGOS_ABI_ASSERT(FLAGOS_HOST_INFO_SIZE_1_6 == 64, host_info_1_6);
FLAGOS_ABI_ASSERT(FLAGOS_HOST_SERVICES_SIZE_1_6 == 48, host_services_1_6);
FLAGOS_ABI_ASSERT(FLAGOS_KERNEL_SIZE_1_7 == 32, kernel_1_7);
FLAGOS_ABI_ASSERT(offsetof(flagos_plugin_api_t, last_error_message) == 40, plugin_api_first_fn);
#endif

#endif /* FLAGOS_ABI_SIZES_H_ */
