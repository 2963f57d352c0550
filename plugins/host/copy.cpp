#include "copy.h"

#include <cstring>

#include "capture.h"
#include "flagos/plugin_api.h"
#include "kit.h"

namespace flagos_host {
namespace {

// Pageable sources up to this size are staged so the call can return at once;
// larger ones are copied synchronously rather than doubling their footprint.
constexpr uint64_t kMaxStagingBytes = uint64_t{64} << 20;

bool range_fits(const Block& b, const void* ptr, uint64_t size) {
  uint64_t offset = static_cast<const uint8_t*>(ptr) - b.addr;
  return size <= b.size - offset;
}

}  // namespace

flagos_status_t resolve_device(const char* fn, const char* what, const void* ptr, uint64_t size,
                               int32_t device, Endpoint* out) {
  std::shared_ptr<Block> b = find_block(ptr);
  if (!b || b->kind != BlockKind::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is not inside a live device allocation",
                fn, what, ptr);
  if (device >= 0 && b->device != device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is memory of device %d, not device %d",
                fn, what, ptr, b->device, device);
  if (!range_fits(*b, ptr, size))
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: %s range [%p, +%llu) runs past the end of its %llu-byte allocation at %p", fn,
                what, ptr, (unsigned long long)size, (unsigned long long)b->size, (void*)b->addr);
  out->addr = b->translate(ptr);
  out->block = std::move(b);
  return FLAGOS_SUCCESS;
}

flagos_status_t resolve_host(const char* fn, const char* what, const void* ptr, uint64_t size,
                             Endpoint* out) {
  if (ptr == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
  std::shared_ptr<Block> b = find_block(ptr);
  if (b && b->kind == BlockKind::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: %s %p is memory of device %d, but the copy kind says host memory", fn, what,
                ptr, b->device);
  out->addr = static_cast<uint8_t*>(const_cast<void*>(ptr));
  // Only a range wholly inside a host_alloc block gets the pinned (async) path.
  if (b && range_fits(*b, ptr, size)) out->block = std::move(b);
  return FLAGOS_SUCCESS;
}

flagos_status_t resolve_copy(const char* fn, void* dst, const void* src, uint64_t size,
                             int32_t kind, int32_t device, Endpoint* d, Endpoint* s) {
  flagos_status_t st = kit::check_copy_kind(fn, kind);
  if (st != FLAGOS_SUCCESS) return st;
  const bool dst_dev = kit::copy_dst_is_device(kind);
  const bool src_dev = kit::copy_src_is_device(kind);
  st = dst_dev ? resolve_device(fn, "dst", dst, size, device, d)
               : resolve_host(fn, "dst", dst, size, d);
  if (st != FLAGOS_SUCCESS) return st;
  st = src_dev ? resolve_device(fn, "src", src, size, device, s)
               : resolve_host(fn, "src", src, size, s);
  if (st != FLAGOS_SUCCESS) return st;
  if (dst_dev && src_dev && d->block->device != s->block->device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT,
                "%s: DEVICE_TO_DEVICE between device %d and device %d; use memcpy_peer_async", fn,
                s->block->device, d->block->device);
  return FLAGOS_SUCCESS;
}

flagos_status_t enqueue_copy(const char* fn, Stream& stream, const Endpoint& dst,
                             const Endpoint& src, uint64_t size, bool wait) {
  // Pageable memory: a synchronous copy, or bytes the caller may change
  // before a launch; neither can be recorded.
  if (dst.pageable() || src.pageable())
    if (std::shared_ptr<Capture> c = stream.capture())
      return c->invalidate(fn, "a copy between the device and pageable host memory");
  // A pageable destination must be written before we return.
  wait = wait || dst.pageable() || (src.pageable() && size > kMaxStagingBytes);
  std::shared_ptr<uint8_t[]> staging;
  const uint8_t* from = src.addr;
  if (src.pageable() && !wait) {  // the caller may reuse its buffer at once
    staging.reset(new uint8_t[size]);
    std::memcpy(staging.get(), src.addr, size);
    from = staging.get();
  }
  Task task = [dst, src, staging, from, size] {
    std::memmove(dst.addr, from, size);
    return FLAGOS_SUCCESS;
  };
  auto on_device = [](const Endpoint& e) { return e.block && e.block->device >= 0; };
  const int32_t kind = on_device(dst) ? (on_device(src) ? FLAGOS_MEMCPY_DEVICE_TO_DEVICE
                                                        : FLAGOS_MEMCPY_HOST_TO_DEVICE)
                                      : (on_device(src) ? FLAGOS_MEMCPY_DEVICE_TO_HOST
                                                        : FLAGOS_MEMCPY_HOST_TO_HOST);
  uint64_t ticket = 0;
  flagos_status_t st = stream.enqueue(fn, std::move(task), &ticket,
                                      TaskTrace{FLAGOS_ACTIVITY_MEMCPY, (int64_t)size, kind});
  if (st != FLAGOS_SUCCESS || !wait) return st;
  return stream.wait(fn, ticket);
}

}  // namespace flagos_host
