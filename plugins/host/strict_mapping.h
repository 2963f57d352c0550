// Strict-mode device memory: one memfd mapped twice. The address handed out
// is PROT_NONE, so any code outside the plugin that dereferences a device
// pointer faults at once; the plugin itself works through a read/write alias
// of the same pages that nobody else knows about.
#pragma once

#include <cstddef>

namespace flagos_host {

struct StrictMapping {
  void* device = nullptr;  // PROT_NONE view: the device pointer
  void* alias = nullptr;   // PROT_READ|PROT_WRITE view, plugin-private
  size_t length = 0;       // bytes of each view (a page multiple)
};

// Maps `length` bytes (a page multiple). On failure returns false and sets
// *error to the errno of the step that failed; nothing stays mapped or open.
bool strict_map(size_t length, StrictMapping* out, int* error);
// Maps `length` bytes of an existing file `fd` (shareable memory, this
// process's or another's) the same way; the caller keeps `fd`.
bool strict_map_file(int fd, size_t length, StrictMapping* out, int* error);
void strict_unmap(const StrictMapping& m);

}  // namespace flagos_host
