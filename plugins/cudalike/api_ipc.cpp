// FLAGOS_EXTENSION_IPC over the runtime's IpcGetMemHandle / IpcOpenMemHandle /
// IpcCloseMemHandle: every Malloc allocation exports, the handle is the
// runtime's 64 bytes and no descriptor. Always chained (the entry must not
// open the runtime); a runtime without the three calls makes every call
// UNSUPPORTED, naming the one missing.
#include <cstring>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "pointers.h"
#include "vendor.h"

namespace flagos_cudalike {
namespace {

using flagos::kit::need;

constexpr unsigned kLazyEnablePeerAccess = 1;  // cudaIpcMemLazyEnablePeerAccess; HIP alike

static_assert(sizeof(rt_ipc_handle) == FLAGOS_IPC_HANDLE_BYTES, "runtime IPC handle size");

flagos_status_t ipc_ready(const char* fn, int32_t device, DeviceScope& scope) {
  flagos_status_t st = check_device(fn, device);
  if (st == FLAGOS_SUCCESS) st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  const Runtime& r = rt();
  const char* missing = !r.ipc_get_mem_handle    ? "IpcGetMemHandle"
                        : !r.ipc_open_mem_handle  ? "IpcOpenMemHandle"
                        : !r.ipc_close_mem_handle ? "IpcCloseMemHandle"
                                                  : nullptr;
  if (missing != nullptr)
    return fail(FLAGOS_ERROR_UNSUPPORTED,
                "%s: the %s runtime %s has no %s%s: device memory cannot be shared between processes",
                fn, vendor().display, r.path.c_str(), vendor().prefix, missing);
  return scope.enter(fn, device);
}

flagos_status_t api_export_memory(flagos_device_t device, void* base, flagos_ipc_handle_t* handle) {
  static const char* fn = "export_memory";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = need(fn, handle, "handle");
    if (st == FLAGOS_SUCCESS) st = ipc_ready(fn, device, scope);
    if (st != FLAGOS_SUCCESS) return st;
    const size_t size = base != nullptr ? block_size(base) : 0;
    if (size == 0 || classify(base).device != device)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: %p is not the start of a live allocation of device %d", fn, base, device);
    rt_ipc_handle h{};
    int err = rt().ipc_get_mem_handle(&h, base);
    if (err != 0) return rt_fail(fn, err, "IpcGetMemHandle(%p) on device %d", base, device);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle->bytes, h.reserved, sizeof h.reserved);
    handle->size = size;
    handle->fd = -1;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_open_memory(flagos_device_t device, const flagos_ipc_handle_t* handle, void** base) {
  static const char* fn = "open_memory";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = need(fn, handle, "handle");
    if (st == FLAGOS_SUCCESS) st = need(fn, base, "base");
    if (st == FLAGOS_SUCCESS) st = ipc_ready(fn, device, scope);
    if (st != FLAGOS_SUCCESS) return st;
    if (handle->size == 0)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the handle's size is 0", fn);
    rt_ipc_handle h{};
    std::memcpy(h.reserved, handle->bytes, sizeof h.reserved);
    void* p = nullptr;
    int err = rt().ipc_open_mem_handle(&p, h, kLazyEnablePeerAccess);
    if (err != 0) return rt_fail(fn, err, "IpcOpenMemHandle on device %d", device);
    note_block(p, handle->size, Memory::kDevice, device);
    *base = p;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_close_memory(flagos_device_t device, void* base) {
  static const char* fn = "close_memory";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = ipc_ready(fn, device, scope);
    if (st != FLAGOS_SUCCESS) return st;
    const size_t size = base != nullptr ? forget_block(base) : 0;
    if (size == 0)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is not memory open_memory mapped", fn, base);
    int err = rt().ipc_close_mem_handle(base);  // the runtime waits for work that uses it
    if (err != 0) {
      note_block(base, size, Memory::kDevice, device);
      return rt_fail(fn, err, "IpcCloseMemHandle(%p) on device %d", base, device);
    }
    return FLAGOS_SUCCESS;
  });
}

}  // namespace

const flagos_extension_t* ipc_extension() {
  static const flagos_ipc_ext_t ext = {
      {sizeof(flagos_ipc_ext_t), FLAGOS_EXTENSION_IPC, FLAGOS_IPC_EXT_VERSION, collectives_extension()},
      FLAGOS_IPC_ALL_ALLOCATIONS,
      0,
      nullptr,  // every Malloc allocation exports
      api_export_memory,
      api_open_memory,
      api_close_memory};
  return &ext.base;
}

}  // namespace flagos_cudalike
