// Flagos storages shared between processes, over the plugin's
// FLAGOS_EXTENSION_IPC (flagos/ext/ipc.h): what torch.multiprocessing's
// reductions for flagos (python/torch_fl/multiprocessing.py) pickle and
// rebuild. The exporter keeps the storage alive while importers use it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>

#include <cstdint>
#include <string>

namespace flagos::device {

// What another process needs to map a storage's bytes.
struct SharedStorage {
  int device = -1;
  std::string handle;   // the plugin's FLAGOS_IPC_HANDLE_BYTES bytes
  uint64_t alloc_size = 0;
  int fd = -1;          // the plugin's descriptor (to duplicate, never close), or -1
  uint64_t offset = 0;  // of the storage's first byte in the allocation
  uint64_t nbytes = 0;  // of the storage
};

// Exports the allocation holding `storage`'s bytes, after the storage's
// current stream finished writing them. On a plugin whose ordinary memory
// cannot be shared, first moves the bytes into a shareable allocation (every
// tensor on the storage follows; torch moves CPU storages into shared memory
// the same way). Throws a [flagos] error naming the plugin when it cannot share.
SharedStorage share_storage(const c10::Storage& storage);

// A uint8 tensor over `nbytes` bytes at `offset` of another process's
// allocation, mapped on `device` until the last tensor on it is gone. `fd`
// is this process's copy of the exporter's descriptor (the caller closes it).
at::Tensor open_shared_storage(int device, const std::string& handle, uint64_t alloc_size, int fd,
                               uint64_t offset, uint64_t nbytes);

}  // namespace flagos::device
