#include "ipc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "devices.h"
#include "kit.h"
#include "memory.h"

namespace flagos_host {
namespace {

// The handle's bytes: which file, as the exporter saw it. The descriptor
// itself travels beside them; these let an importer check that it got the
// file the bytes name and key its cache of open handles.
struct HandleBytes {
  char magic[16];    // kMagic
  uint64_t inode;    // fstat of the memfd
  uint64_t dev;
  int32_t pid;       // the exporter
  int32_t device;    // the exporter's device index
};
static_assert(sizeof(HandleBytes) <= FLAGOS_IPC_HANDLE_BYTES, "handle bytes overflow");
constexpr char kMagic[16] = "flagos-host-ipc";

flagos_status_t api_mem_alloc_shareable(flagos_device_t device, uint64_t size, void** ptr) {
  static const char* fn = "mem_alloc_shareable";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, ptr, "ptr");
    return st != FLAGOS_SUCCESS ? st : alloc_device(fn, device, size, ptr, /*shareable=*/true);
  });
}

flagos_status_t api_export_memory(flagos_device_t device, const void* ptr, flagos_ipc_handle_t* handle,
                                  uint64_t* offset) {
  static const char* fn = "export_memory";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, handle, "handle");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, offset, "offset");
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Block> b = ptr != nullptr ? find_block(ptr) : nullptr;
    if (!b || b->kind != BlockKind::kDevice || b->device != device || b->imported)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %p is in no allocation of device %d", fn, ptr,
                  device);
    if (b->fd < 0)
      return fail(FLAGOS_ERROR_UNSUPPORTED,
                  "%s: %p is private memory from mem_alloc; only mem_alloc_shareable memory can "
                  "be shared with another process", fn, ptr);
    struct stat st_buf{};
    if (fstat(b->fd, &st_buf) != 0)
      return fail(FLAGOS_ERROR_INTERNAL, "%s: fstat of the allocation's memfd: %s", fn,
                  std::strerror(errno));
    HandleBytes h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.inode = st_buf.st_ino;
    h.dev = st_buf.st_dev;
    h.pid = static_cast<int32_t>(getpid());
    h.device = device;
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle->bytes, &h, sizeof h);
    handle->size = b->size;
    handle->fd = b->fd;
    *offset = static_cast<uint64_t>(static_cast<const uint8_t*>(ptr) - b->addr);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_open_memory(flagos_device_t device, const flagos_ipc_handle_t* handle, void** base) {
  static const char* fn = "open_memory";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, handle, "handle");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, base, "base");
    if (st != FLAGOS_SUCCESS) return st;
    HandleBytes h{};
    std::memcpy(&h, handle->bytes, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the handle was not made by the host plugin", fn);
    if (handle->fd < 0)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: the handle needs the exporter's descriptor beside it (fd is -1)", fn);
    struct stat st_buf{};
    if (fstat(handle->fd, &st_buf) != 0 || st_buf.st_ino != h.inode || st_buf.st_dev != h.dev)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                  "%s: descriptor %d is not the memory the handle names", fn, handle->fd);
    if (static_cast<uint64_t>(st_buf.st_size) < handle->size)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: the handle's size %llu exceeds its file's %lld",
                  fn, (unsigned long long)handle->size, (long long)st_buf.st_size);
    return import_device(fn, device, handle->fd, handle->size, base);
  });
}

flagos_status_t api_close_memory(flagos_device_t device, void* base) {
  static const char* fn = "close_memory";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    return st != FLAGOS_SUCCESS ? st : close_import(fn, device, base);
  });
}

flagos_ipc_ext_t& ipc_ext() {
  static flagos_ipc_ext_t ext = [] {
    flagos_ipc_ext_t e{};
    e.base.struct_size = sizeof(flagos_ipc_ext_t);
    e.base.type = FLAGOS_EXTENSION_IPC;
    e.base.version = FLAGOS_IPC_EXT_VERSION;
    e.base.next = nullptr;
    e.flags = 0;  // ordinary allocations are private pages
    e.mem_alloc_shareable = api_mem_alloc_shareable;
    e.export_memory = api_export_memory;
    e.open_memory = api_open_memory;
    e.close_memory = api_close_memory;
    return e;
  }();
  return ext;
}

}  // namespace

const flagos_extension_t* ipc_extension() { return &ipc_ext().base; }

void set_ipc_next(const flagos_extension_t* next) { ipc_ext().base.next = next; }

}  // namespace flagos_host
