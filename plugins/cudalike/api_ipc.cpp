// FLAGOS_EXTENSION_IPC over the runtime's IpcGetMemHandle / IpcOpenMemHandle /
// IpcCloseMemHandle: every Malloc allocation exports, the handle is the
// runtime's 64 bytes and no descriptor. An allocation the plugin did not make
// (torch's CUDA caching allocator's segments) is found through the driver's
// MemGetAddressRange. Always chained (the entry must not open the runtime);
// a runtime without the three calls makes every call UNSUPPORTED, naming the
// one missing.
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <unordered_set>
#include <utility>

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

// What every IPC entry point checks first, in this order: its required
// pointer arguments (pointer, name), the device, a runtime with the three IPC
// calls; then the device is made current for the scope.
flagos_status_t ipc_ready(const char* fn, int32_t device, DeviceScope& scope,
                          std::initializer_list<std::pair<const void*, const char*>> required = {}) {
  for (const auto& [pointer, name] : required) {
    flagos_status_t st = need(fn, pointer, name);
    if (st != FLAGOS_SUCCESS) return st;
  }
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

// Bases open_memory mapped (also in the pointer table, as device blocks).
std::mutex g_imported_mutex;
std::unordered_set<const void*> g_imported;

bool is_imported(const void* base) {
  std::lock_guard<std::mutex> lock(g_imported_mutex);
  return g_imported.count(base) != 0;
}

// The allocation holding `p`: the plugin's own blocks, else the driver's
// answer (memory torch's CUDA allocator made). Imported mappings are not
// allocations of this process.
bool allocation_of(const void* p, const void** base, size_t* size) {
  if (block_of(p, base, size)) return !is_imported(*base);
  const Runtime& r = rt();
  unsigned long long b = 0;
  if (r.drv_mem_get_address_range == nullptr ||
      r.drv_mem_get_address_range(&b, size, reinterpret_cast<unsigned long long>(p)) != 0)
    return false;
  *base = reinterpret_cast<const void*>(b);
  return true;
}

flagos_status_t api_export_memory(flagos_device_t device, const void* ptr, flagos_ipc_handle_t* handle,
                                  uint64_t* offset) {
  static const char* fn = "export_memory";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = ipc_ready(fn, device, scope, {{handle, "handle"}, {offset, "offset"}});
    if (st != FLAGOS_SUCCESS) return st;
    const void* base = nullptr;
    size_t size = 0;
    if (ptr == nullptr || classify(ptr).memory != Memory::kDevice || classify(ptr).device != device ||
        !allocation_of(ptr, &base, &size))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is in no allocation of device %d", fn, ptr,
                  device);
    rt_ipc_handle h{};
    int err = rt().ipc_get_mem_handle(&h, const_cast<void*>(base));
    if (err != 0) return rt_fail(fn, err, "IpcGetMemHandle(%p) on device %d", base, device);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle->bytes, h.reserved, sizeof h.reserved);
    handle->size = size;
    handle->fd = -1;
    *offset = static_cast<uint64_t>(static_cast<const char*>(ptr) - static_cast<const char*>(base));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_open_memory(flagos_device_t device, const flagos_ipc_handle_t* handle, void** base) {
  static const char* fn = "open_memory";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = ipc_ready(fn, device, scope, {{handle, "handle"}, {base, "base"}});
    if (st != FLAGOS_SUCCESS) return st;
    if (handle->size == 0)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the handle's size is 0", fn);
    rt_ipc_handle h{};
    std::memcpy(h.reserved, handle->bytes, sizeof h.reserved);
    void* p = nullptr;
    int err = rt().ipc_open_mem_handle(&p, h, kLazyEnablePeerAccess);
    if (err != 0) return rt_fail(fn, err, "IpcOpenMemHandle on device %d", device);
    note_block(p, handle->size, Memory::kDevice, device);
    {
      std::lock_guard<std::mutex> lock(g_imported_mutex);
      g_imported.insert(p);
    }
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
    {
      std::lock_guard<std::mutex> lock(g_imported_mutex);
      if (base == nullptr || g_imported.erase(base) == 0)
        return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is not memory open_memory mapped", fn, base);
    }
    const size_t size = forget_block(base);
    // IpcCloseMemHandle does not wait for work that uses the mapping: the
    // header promises that it completes first.
    int err = rt().device_synchronize();
    if (err == 0) err = rt().ipc_close_mem_handle(base);
    if (err != 0) {
      note_block(base, size, Memory::kDevice, device);
      std::lock_guard<std::mutex> lock(g_imported_mutex);
      g_imported.insert(base);
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
      nullptr,  // every allocation exports
      api_export_memory,
      api_open_memory,
      api_close_memory};
  return &ext.base;
}

}  // namespace flagos_cudalike
