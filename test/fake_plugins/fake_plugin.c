/*
 * One source for every fake plugin the loader tests use; FAKE_MODE picks the
 * defect. Built against include/ (or the frozen v1.0 copy under test/abi/),
 * exactly like a vendor plugin.
 *
 *   FAKE_OK             a minimal valid plugin with 0 devices
 *   FAKE_WRONG_MAJOR    claims the next ABI major
 *   FAKE_SHORT_TABLE    struct_size too small for the required members
 *   FAKE_NULL_REQUIRED  mem_alloc is NULL
 *   FAKE_ENTRY_FAILS    entry returns RUNTIME_UNAVAILABLE with a message
 *   FAKE_NO_ENTRY       exports a differently named symbol
 *   FAKE_FUTURE_MINOR   claims a newer minor with a larger table
 *   FAKE_MISSING_DEP    needs a vendor runtime library that is not on the path
 *   FAKE_STALE_KERNELS  a kernels extension whose schemas are one good, one
 *                       written for another torch, one unknown, one unparsable
 */
#include <string.h>

#include "flagos/flagos.h"

#ifdef FAKE_MISSING_DEP
extern int fake_vendor_runtime_version(void);
#endif

static const char* g_message = "";
static const char* last_error_message(void) { return g_message; }

static flagos_status_t unsupported(void) {
  g_message = "fake plugin: not implemented";
  return FLAGOS_ERROR_UNSUPPORTED;
}

static flagos_status_t device_count(int32_t* count) {
  if (!count) return FLAGOS_ERROR_INVALID_ARGUMENT;
#ifdef FAKE_MISSING_DEP
  *count = fake_vendor_runtime_version() > 0 ? 0 : 0;
#else
  *count = 0;
#endif
  return FLAGOS_SUCCESS;
}
static flagos_status_t get_device(flagos_device_t* d) {
  if (!d) return FLAGOS_ERROR_INVALID_ARGUMENT;
  *d = 0;
  return FLAGOS_SUCCESS;
}
static flagos_status_t no_device(flagos_device_t d) { (void)d; return FLAGOS_ERROR_INVALID_DEVICE; }
static flagos_status_t props(flagos_device_t d, flagos_device_properties_t* p) { (void)p; return no_device(d); }
static flagos_status_t mem_alloc(flagos_device_t d, uint64_t n, void** p) { (void)n; (void)p; return no_device(d); }
static flagos_status_t mem_free(flagos_device_t d, void* p) { (void)p; return p ? no_device(d) : FLAGOS_SUCCESS; }
static flagos_status_t ptr_attr(const void* p, int32_t* kind, flagos_device_t* d) {
  (void)p;
  if (!kind || !d) return FLAGOS_ERROR_INVALID_ARGUMENT;
  *kind = FLAGOS_POINTER_UNKNOWN;
  *d = -1;
  return FLAGOS_SUCCESS;
}
static flagos_status_t copy_sync(void* a, const void* b, uint64_t n, int32_t k) { (void)a; (void)b; (void)n; (void)k; return unsupported(); }
static flagos_status_t copy_async(void* a, const void* b, uint64_t n, int32_t k, flagos_stream_t s) { (void)s; return copy_sync(a, b, n, k); }
static flagos_status_t fill(void* a, uint8_t v, uint64_t n, flagos_stream_t s) { (void)a; (void)v; (void)n; (void)s; return unsupported(); }
static flagos_status_t default_stream(flagos_device_t d, flagos_stream_t* s) { (void)s; return no_device(d); }
static flagos_status_t stream_create(flagos_device_t d, int32_t p, flagos_stream_t* s) { (void)p; (void)s; return no_device(d); }
static flagos_status_t stream_op(flagos_stream_t s) { return s ? FLAGOS_ERROR_INVALID_HANDLE : FLAGOS_SUCCESS; }
static flagos_status_t stream_wait(flagos_stream_t s, flagos_event_t e) { (void)e; return stream_op(s); }
static flagos_status_t event_create(flagos_device_t d, uint32_t f, flagos_event_t* e) { (void)f; (void)e; return no_device(d); }
static flagos_status_t event_op(flagos_event_t e) { return e ? FLAGOS_ERROR_INVALID_HANDLE : FLAGOS_SUCCESS; }
static flagos_status_t event_record(flagos_event_t e, flagos_stream_t s) { (void)s; return event_op(e); }

static flagos_plugin_api_t g_api;

#ifdef FAKE_STALE_KERNELS
static flagos_status_t kernel_run(const flagos_kernel_call_t* call) { (void)call; return unsupported(); }
#define FAKE_KERNEL(schema) {sizeof(flagos_kernel_t), schema, kernel_run}
static const flagos_kernel_t g_good = FAKE_KERNEL(
    "aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
static const flagos_kernel_t g_stale = FAKE_KERNEL(  /* add.out without its alpha */
    "aten::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
static const flagos_kernel_t g_unknown = FAKE_KERNEL(
    "aten::no_such_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
static const flagos_kernel_t g_garbled = FAKE_KERNEL("aten::sub.out(Tensor self");
static const flagos_kernel_t* const g_kernels[] = {&g_good, &g_stale, &g_unknown, &g_garbled};
static const flagos_kernels_ext_t g_kernels_ext = {
    {sizeof(flagos_kernels_ext_t), FLAGOS_EXTENSION_KERNELS, FLAGOS_KERNELS_EXT_VERSION, NULL}, 4, g_kernels};
#endif

#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif

static void fill_table(void) {
  g_api.struct_size = sizeof(g_api);
  g_api.abi_major = FLAGOS_ABI_MAJOR;
  g_api.abi_minor = FLAGOS_ABI_MINOR;
  g_api.name = FAKE_NAME;
  g_api.version = "0.0-test";
  g_api.last_error_message = last_error_message;
  g_api.device_count = device_count;
  g_api.get_device_properties = props;
  g_api.get_device = get_device;
  g_api.set_device = no_device;
  g_api.device_synchronize = no_device;
  g_api.mem_alloc = mem_alloc;
  g_api.mem_free = mem_free;
  g_api.pointer_get_attributes = ptr_attr;
  g_api.memcpy_sync = copy_sync;
  g_api.memcpy_async = copy_async;
  g_api.memset_async = fill;
  g_api.get_default_stream = default_stream;
  g_api.stream_create = stream_create;
  g_api.stream_destroy = stream_op;
  g_api.stream_query = stream_op;
  g_api.stream_synchronize = stream_op;
  g_api.stream_wait_event = stream_wait;
  g_api.event_create = event_create;
  g_api.event_destroy = event_op;
  g_api.event_record = event_record;
  g_api.event_query = event_op;
  g_api.event_synchronize = event_op;
#if defined(FAKE_WRONG_MAJOR)
  g_api.abi_major = FLAGOS_ABI_MAJOR + 1;
#elif defined(FAKE_SHORT_TABLE)
  g_api.struct_size = FLAGOS_STRUCT_SIZE(flagos_plugin_api_t, memcpy_sync);
#elif defined(FAKE_NULL_REQUIRED)
  g_api.mem_alloc = NULL;
#elif defined(FAKE_STALE_KERNELS)
  g_api.extensions = &g_kernels_ext.base;
#elif defined(FAKE_FUTURE_MINOR)
  /* A plugin from a future 1.7 whose table grew by appended members: the
   * core must accept it and use only what it knows. */
  g_api.abi_minor = FLAGOS_ABI_MINOR + 7;
  g_api.struct_size = sizeof(g_api) + 64;
#endif
}

#ifdef FAKE_FUTURE_MINOR
/* Room for the "future" members past the 1.0 table, so reading struct_size
 * bytes from g_api stays inside this object. */
static struct {
  flagos_plugin_api_t api;
  char future[64];
} g_future;
#endif

#ifdef FAKE_NO_ENTRY
FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api_v0(const flagos_host_info_t* host,
                                                       const flagos_plugin_api_t** api)
#else
FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api(const flagos_host_info_t* host,
                                                    const flagos_plugin_api_t** api)
#endif
{
  if (!host || !api) return FLAGOS_ERROR_INVALID_ARGUMENT;
  fill_table();
#ifdef FAKE_FUTURE_MINOR
  memcpy(&g_future.api, &g_api, sizeof(g_api));
  memset(g_future.future, 0, sizeof(g_future.future));
  *api = &g_future.api;
#else
  *api = &g_api;
#endif
#ifdef FAKE_ENTRY_FAILS
  g_message = "libfakevendor.so.3: cannot open shared object file (set FAKE_HOME)";
  return FLAGOS_ERROR_RUNTIME_UNAVAILABLE;
#else
  return FLAGOS_SUCCESS;
#endif
}
