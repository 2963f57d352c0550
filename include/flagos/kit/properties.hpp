// flagos/kit/properties.hpp — writing flagos_device_properties_t under its
// size rule: only whole members that fit in the caller's struct_size.
//
// Threading: stateless. Errors: INVALID_ARGUMENT for a NULL struct or one
// too small to hold its own size field.
#pragma once

#include <cstddef>
#include <cstring>

#include "flagos/device.h"
#include "flagos/kit/checks.hpp"

namespace flagos::kit {

namespace detail {
using Props = flagos_device_properties_t;
// Where each member ends, in layout order (append when the struct grows).
inline constexpr size_t kPropertyEnds[] = {
    FLAGOS_STRUCT_SIZE(Props, name),           FLAGOS_STRUCT_SIZE(Props, arch),
    FLAGOS_STRUCT_SIZE(Props, uuid),           FLAGOS_STRUCT_SIZE(Props, pci_domain),
    FLAGOS_STRUCT_SIZE(Props, pci_bus),        FLAGOS_STRUCT_SIZE(Props, pci_device),
    FLAGOS_STRUCT_SIZE(Props, capability_major), FLAGOS_STRUCT_SIZE(Props, capability_minor),
    FLAGOS_STRUCT_SIZE(Props, multiprocessor_count), FLAGOS_STRUCT_SIZE(Props, total_memory),
    FLAGOS_STRUCT_SIZE(Props, alloc_alignment), FLAGOS_STRUCT_SIZE(Props, stream_priority_lowest),
    FLAGOS_STRUCT_SIZE(Props, stream_priority_highest), FLAGOS_STRUCT_SIZE(Props, capabilities),
    FLAGOS_STRUCT_SIZE(Props, interop_device_index), FLAGOS_STRUCT_SIZE(Props, reserved0),
};
static_assert(FLAGOS_STRUCT_SIZE(Props, reserved0) == sizeof(Props),
              "a member was appended to flagos_device_properties_t: add it to kPropertyEnds");
}  // namespace detail

// Copies `full` into `out`: every member that fits in out->struct_size,
// struct_size itself excepted.
inline flagos_status_t write_properties(const char* fn, const flagos_device_properties_t& full,
                                        flagos_device_properties_t* out) noexcept {
  flagos_status_t st = need(fn, out, "props");
  if (st != FLAGOS_SUCCESS) return st;
  if (out->struct_size < sizeof out->struct_size)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: props->struct_size %zu is smaller than the size field",
                fn, out->struct_size);
  size_t end = sizeof out->struct_size;
  for (size_t member_end : detail::kPropertyEnds)
    if (member_end <= out->struct_size) end = member_end;
  const size_t begin = sizeof out->struct_size;
  std::memcpy(reinterpret_cast<char*>(out) + begin, reinterpret_cast<const char*>(&full) + begin,
              end - begin);
  return FLAGOS_SUCCESS;
}

}  // namespace flagos::kit
