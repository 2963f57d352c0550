// flagos/kit/checks.hpp — the argument checks every plugin repeats, each
// returning FLAGOS_SUCCESS or the ABI's status with a last-error message
// naming the function (`fn`) and the argument.
//
// Threading: stateless. Errors: as documented per check; none throws.
#pragma once

#include <cstdint>

#include "flagos/kit/last_error.hpp"
#include "flagos/plugin_api.h"

namespace flagos::kit {

// INVALID_ARGUMENT "<fn>: <name> is NULL" for a NULL out-pointer.
inline flagos_status_t need(const char* fn, const void* out, const char* name) noexcept {
  return out != nullptr ? FLAGOS_SUCCESS
                        : fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
}

// INVALID_DEVICE unless 0 <= device < count.
inline flagos_status_t check_device(const char* fn, int32_t device, int32_t count) noexcept {
  if (device >= 0 && device < count) return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_DEVICE, "%s: device %d out of range [0, %d)", fn, device, count);
}

// INVALID_ARGUMENT unless `kind` is one of FLAGOS_MEMCPY_*.
inline flagos_status_t check_copy_kind(const char* fn, int32_t kind) noexcept {
  if (kind >= FLAGOS_MEMCPY_HOST_TO_HOST && kind <= FLAGOS_MEMCPY_DEVICE_TO_DEVICE)
    return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown copy kind %d", fn, kind);
}

// "host-to-device" and so on; `kind` must have passed check_copy_kind.
inline const char* copy_kind_name(int32_t kind) noexcept {
  static const char* const names[] = {"host-to-host", "host-to-device", "device-to-host",
                                      "device-to-device"};
  return names[kind];
}

// Whether each end of a `kind` copy is device memory.
inline bool copy_dst_is_device(int32_t kind) noexcept {
  return kind == FLAGOS_MEMCPY_HOST_TO_DEVICE || kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
}
inline bool copy_src_is_device(int32_t kind) noexcept {
  return kind == FLAGOS_MEMCPY_DEVICE_TO_HOST || kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
}

// INVALID_ARGUMENT unless event_create's flags are known ones.
inline flagos_status_t check_event_flags(const char* fn, uint32_t flags) noexcept {
  if ((flags & ~FLAGOS_EVENT_TIMING) == 0) return FLAGOS_SUCCESS;
  return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags);
}

// comm_create's own arguments (flagos/ext/collectives.h): `id` and `comm`
// set, 1 <= nranks <= max_ranks, 0 <= rank < nranks; else INVALID_ARGUMENT.
inline flagos_status_t check_comm_create(const char* fn, const void* id, const void* comm, int32_t nranks,
                                         int32_t rank, int32_t max_ranks) noexcept {
  flagos_status_t st = need(fn, id, "id");
  if (st == FLAGOS_SUCCESS) st = need(fn, comm, "comm");
  if (st != FLAGOS_SUCCESS) return st;
  if (nranks < 1 || nranks > max_ranks)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: nranks %d outside [1, %d]", fn, nranks, max_ranks);
  if (rank < 0 || rank >= nranks)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: rank %d outside [0, %d)", fn, rank, nranks);
  return FLAGOS_SUCCESS;
}

}  // namespace flagos::kit
